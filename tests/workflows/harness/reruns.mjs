//! Re-running jobs of a finished run, as GitHub's "Re-run this job" does: a new attempt of the same
//! run (same run id, `run_attempt` + 1, the run back in progress), the chosen jobs and every job
//! that depends on them run again, every other job keeps its result and outputs from the earlier
//! attempt. Artifacts of the earlier attempt stay in the run, and an artifact name is unique per
//! run across attempts (upload-artifact gets HTTP 409 for a name the run already has). The
//! attempt keeps `github.actor`, the run's first actor, and `github.triggering_actor` is whoever
//! re-ran it ("github.actor … If the workflow run is a re-run, this value may differ from
//! github.triggering_actor", https://docs.github.com/en/actions/reference/workflows-and-actions/contexts#github-context).
import path from "node:path";
import { harnessCall } from "./adapters.mjs";
import { eventEnv } from "./events.mjs";

/** `jobIds` and every job that needs one of them, directly or not, in `template`. */
export function rerunSet(template, jobIds) {
  const set = new Set(jobIds);
  for (const id of jobIds) {
    if (!template.jobs.some((j) => j.id.value === id)) throw new Error(`re-run: the workflow has no job '${id}'`);
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const j of template.jobs) {
      if (!set.has(j.id.value) && (j.needs ?? []).some((n) => set.has(n.value))) {
        set.add(j.id.value);
        grew = true;
      }
    }
  }
  return set;
}

/**
 * Start `run` (a fresh WorkflowRun of the same workflow) as the next attempt of `of`, once `of` has
 * completed, re-running `jobIds` and their dependants. Sets `run.done`. `legs` (`{jobId: [n, ...]}`,
 * 1-based) re-runs only those legs of a matrix job, as "Re-run this job" on one leg does: its
 * other legs keep their results and outputs, and the job's combine again.
 */
export function startRerun(run, index, of, jobIds, legs = {}) {
  run.index = index;
  run.done = (async () => {
    await of.done;
    const again = rerunSet(of.loaded.template, jobIds);
    const created = await harnessCall(run.scenario.api_url, `runs/${of.id}/rerun`, {});
    run.id = of.id;
    run.attempt = created.run_attempt;
    run.inputs = of.inputs;
    run.github = { ...of.github, run_attempt: String(run.attempt), triggering_actor: run.spec.triggering_actor ?? of.github.triggering_actor };
    run.eventEnv = eventEnv(run.github, path.join(run.scenario.work_dir, `run-${index}-${run.id}-${run.attempt}`));
    for (const [id, rec] of Object.entries(of.jobs)) {
      if (!again.has(id)) run.jobs[id] = { ...rec, carried: true };
    }
    run.carriedLegs = {};
    for (const [id, numbers] of Object.entries(legs)) {
      const rec = of.jobs[id];
      if (!rec?.legs) throw new Error(`re-run: job '${id}' is not a matrix job of the earlier attempt`);
      for (const n of numbers) {
        if (!Number.isInteger(n) || n < 1 || n > rec.legs.length) throw new Error(`re-run: job '${id}' has legs 1 to ${rec.legs.length}, not ${n}`);
      }
      run.carriedLegs[id] = { legs: rec.legs, rerun: new Set(numbers.map((n) => n - 1)) };
    }
    run.event("rerun", null, { attempt: run.attempt, jobs: [...again] });
    await run.runGraph(run.loaded, run.inputs, run.jobs, "");
    await run.complete();
  })();
}
