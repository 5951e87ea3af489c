//! `jobs.<id>.strategy` as GitHub plays it ([D:workflow-syntax#jobsjob_idstrategymatrix],
//! [D] = https://docs.github.com/en/actions/reference/workflows-and-actions/):
//! - the matrix (a mapping, or a whole-value expression such as `${{ fromJSON(needs.plan.outputs.matrix) }}`,
//!   evaluated with the job's contexts) is the product of its vectors, the first variable varying
//!   slowest ("The order of the variables in the matrix determines the order in which the jobs are
//!   created"); `exclude` entries remove every combination they match (a partial match suffices);
//!   each `include` entry is added to every combination whose original values it does not
//!   overwrite (values an earlier `include` added may be overwritten), and becomes a combination of
//!   its own when it fits none; a matrix of `include` entries only is those entries
//!   ([D:workflow-syntax#jobsjob_idstrategymatrixinclude], [D:workflow-syntax#jobsjob_idstrategymatrixexclude]);
//!   at most 256 combinations;
//! - `fail-fast` (default true: a failed leg cancels the legs that have not started; a running leg
//!   runs to its end here, where GitHub would cancel it too) and `max-parallel` (legs running at
//!   once; default: all) ([D:workflow-syntax#jobsjob_idstrategyfail-fast],
//!   [D:workflow-syntax#jobsjob_idstrategymax-parallel]);
//! - each leg sees the `matrix` context (its combination) and the `strategy` context (`fail-fast`,
//!   `job-index`, `job-total`, `max-parallel`) ([D:contexts#matrix-context], [D:contexts#strategy-context]);
//! - a leg without a `name:` is named `<job id> (<values, comma separated>)`;
//! - the job's outputs are the legs' outputs combined, each leg's non-empty outputs written over
//!   the earlier ones in the order the legs end ("When using a matrix, job outputs will be combined
//!   from all jobs inside the matrix"; "the last matrix job that runs will override the output
//!   value", [D:workflow-syntax#jobsjob_idoutputs]; the runner skips an empty output, actions/runner
//!   `JobExtension.cs` "Skip output '…' since it's empty");
//! - `needs.<id>.result` of the matrix job: `failure` when a leg failed, else `cancelled` when a leg
//!   was cancelled, else `success` when a leg succeeded, else `skipped`.

/** Most combinations GitHub allows in one matrix. */
export const MAX_LEGS = 256;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The combinations of an evaluated `matrix` value (a plain object), in GitHub's order. Throws,
 * naming `where`, for a matrix that is not a mapping, a vector that is not a non-empty list, or no
 * combination at all.
 */
export function combinations(matrix, where) {
  if (!isObject(matrix)) throw new Error(`${where}: strategy.matrix must be a mapping, found ${JSON.stringify(matrix)}`);
  const include = matrix.include ?? [];
  const exclude = matrix.exclude ?? [];
  for (const [k, list] of [["include", include], ["exclude", exclude]]) {
    if (!Array.isArray(list) || !list.every(isObject)) throw new Error(`${where}: strategy.matrix.${k} must be a list of mappings`);
  }
  const vectors = Object.entries(matrix).filter(([k]) => k !== "include" && k !== "exclude");
  for (const [k, v] of vectors) {
    if (!Array.isArray(v) || v.length === 0) throw new Error(`${where}: matrix vector '${k}' does not contain any values`);
  }
  let combos = vectors.length ? [{}] : [];
  for (const [k, values] of vectors) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  combos = combos.filter((c) => !exclude.some((e) => Object.entries(e).every(([k, v]) => same(c[k], v))));
  const original = new Set(vectors.map(([k]) => k));
  const added = [];
  for (const entry of include) {
    const fits = (c) => Object.entries(entry).every(([k, v]) => !original.has(k) || same(c[k], v));
    const matching = combos.filter(fits);
    if (vectors.length && matching.length) {
      for (const c of matching) Object.assign(c, entry);
    } else {
      added.push({ ...entry });
    }
  }
  const all = [...combos, ...added];
  if (all.length === 0) throw new Error(`${where}: strategy.matrix yields no job (an empty matrix)`);
  if (all.length > MAX_LEGS) throw new Error(`${where}: a matrix may have at most ${MAX_LEGS} jobs, found ${all.length}`);
  return all;
}

/** The evaluated `strategy` of a job: `{legs, failFast, maxParallel}`. */
export function plan(strategy, where) {
  if (!isObject(strategy)) throw new Error(`${where}: strategy must be a mapping`);
  for (const k of Object.keys(strategy)) {
    if (!["matrix", "fail-fast", "max-parallel"].includes(k)) throw new Error(`${where}: strategy.${k} is not emulated`);
  }
  const legs = combinations(strategy.matrix, where);
  const failFast = strategy["fail-fast"] === undefined ? true : strategy["fail-fast"] === true || strategy["fail-fast"] === "true";
  const mp = strategy["max-parallel"];
  const maxParallel = mp === undefined || mp === null || mp === "" ? legs.length : Number(mp);
  if (!Number.isInteger(maxParallel) || maxParallel < 1) throw new Error(`${where}: strategy.max-parallel must be a whole number >= 1, found ${JSON.stringify(mp)}`);
  return { legs, failFast, maxParallel };
}

/** The `strategy` context of leg `index`. */
export function strategyContext(p, index) {
  return { "fail-fast": p.failFast, "job-index": index, "job-total": p.legs.length, "max-parallel": p.maxParallel };
}

/** A leg's default display name: `<id> (<values>)`. */
export function legName(id, combo) {
  const values = Object.values(combo).map((v) => (isObject(v) || Array.isArray(v) ? JSON.stringify(v) : String(v)));
  return `${id} (${values.join(", ")})`;
}

/** The matrix job's result from its legs' results. */
export function aggregateResult(results) {
  if (results.includes("failure")) return "failure";
  if (results.includes("cancelled")) return "cancelled";
  if (results.includes("success")) return "success";
  return "skipped";
}

/** The matrix job's outputs: the legs' non-empty outputs, in the order the legs ended. */
export function combineOutputs(legsInEndOrder) {
  const out = {};
  for (const leg of legsInEndOrder) {
    for (const [k, v] of Object.entries(leg.outputs ?? {})) {
      if (v !== "" && v !== undefined && v !== null) out[k] = v;
    }
  }
  return out;
}

/**
 * Run `legs` (indices into `p.legs`) with at most `p.maxParallel` at once; `runLeg(index)` resolves
 * to the leg's result. With fail-fast, a failed leg cancels every leg not started yet
 * (`cancelLeg(index)`). Resolves when every leg has ended.
 */
export async function runLegs(p, legs, runLeg, cancelLeg) {
  const queue = [...legs];
  let failed = false;
  const running = new Set();
  while (queue.length || running.size) {
    while (queue.length && running.size < p.maxParallel) {
      const i = queue.shift();
      if (failed && p.failFast) {
        cancelLeg(i);
        continue;
      }
      const job = runLeg(i).then((result) => {
        if (result === "failure") failed = true;
        running.delete(job);
      });
      running.add(job);
    }
    if (running.size) await Promise.race(running);
  }
}
