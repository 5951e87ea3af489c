//! Entry point: `node --import ./harness/register.mjs harness/cli.mjs SCENARIO.json RESULT.json`.
//! Starts every run of the scenario in order (they share the concurrency groups; a re-run starts
//! when the run it re-runs has completed, see reruns.mjs), waits for all,
//! and writes each run's jobs, steps, outputs and conclusion plus the event trace as JSON.
import fs from "node:fs";
import { loadWorkflow } from "./load.mjs";
import { ConcurrencyGroups } from "./groups.mjs";
import { WorkflowRun } from "./jobs.mjs";
import { startRerun } from "./reruns.mjs";
import { MachinePool } from "./machines.mjs";

function jobReport(jobs) {
  const out = {};
  for (const [id, j] of Object.entries(jobs)) {
    out[id] = { result: j.result, outputs: j.outputs, steps: j.steps, summary: j.summary ?? "", carried: Boolean(j.carried), runner: j.runner ?? null };
    if (j.jobs) out[id].jobs = jobReport(j.jobs);
    if (j.legs) {
      out[id].legs = j.legs.map((l) => ({ name: l.name, matrix: l.matrix, result: l.result, outputs: l.outputs, steps: l.steps ?? [], summary: l.summary ?? "", carried: Boolean(l.carried), runner: l.runner ?? null }));
    }
  }
  return out;
}

async function main() {
  const [scenarioFile, resultFile] = process.argv.slice(2);
  if (!scenarioFile || !resultFile) throw new Error("usage: cli.mjs SCENARIO.json RESULT.json");
  const scenario = JSON.parse(fs.readFileSync(scenarioFile, "utf8"));
  scenario.pool = new MachinePool(scenario.machines);
  const groups = new ConcurrencyGroups();
  const trace = [];
  const runs = [];
  for (const [i, given] of scenario.runs.entries()) {
    // A re-run is the original run's spec with this one's machine env, reviews and holds, started
    // by the re-run's actor (the original actor when it names none).
    const of = given.rerun ? runs[given.rerun.run] : null;
    if (given.rerun && !of) throw new Error(`run ${i}: re-run of run ${given.rerun.run}, which is not an earlier run`);
    const spec = of
      ? { ...of.spec, env: { ...of.spec.env, ...given.env }, approvals: { ...of.spec.approvals, ...given.approvals }, hold: given.hold ?? {}, triggering_actor: given.actor ?? of.spec.actor, cancel: given.cancel ?? {}, fail: given.fail ?? {} }
      : given;
    const loaded = await loadWorkflow(scenario.repo_root, spec.workflow);
    const run = new WorkflowRun(scenario, spec, loaded, groups, trace);
    if (of) startRerun(run, i, of, given.rerun.jobs, given.rerun.legs ?? {});
    else await run.start(i);
    runs.push(run);
  }
  await Promise.all(runs.map((r) => r.done));
  const report = {
    runs: runs.map((r) => ({ id: r.id, attempt: r.attempt, conclusion: r.conclusion, jobs: jobReport(r.jobs) })),
    trace,
  };
  fs.writeFileSync(resultFile, JSON.stringify(report, null, 2));
}

main().catch((e) => {
  console.error(`workflow harness: ${e.stack ?? e.message}`);
  process.exit(2);
});
