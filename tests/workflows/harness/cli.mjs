//! Entry point: `node --import ./harness/register.mjs harness/cli.mjs SCENARIO.json RESULT.json`.
//! Starts every run of the scenario in order (they share the concurrency groups), waits for all,
//! and writes each run's jobs, steps, outputs and conclusion plus the event trace as JSON.
import fs from "node:fs";
import { loadWorkflow } from "./load.mjs";
import { ConcurrencyGroups } from "./groups.mjs";
import { WorkflowRun } from "./jobs.mjs";

function jobReport(jobs) {
  const out = {};
  for (const [id, j] of Object.entries(jobs)) {
    out[id] = { result: j.result, outputs: j.outputs, steps: j.steps, summary: j.summary ?? "" };
    if (j.jobs) out[id].jobs = jobReport(j.jobs);
  }
  return out;
}

async function main() {
  const [scenarioFile, resultFile] = process.argv.slice(2);
  if (!scenarioFile || !resultFile) throw new Error("usage: cli.mjs SCENARIO.json RESULT.json");
  const scenario = JSON.parse(fs.readFileSync(scenarioFile, "utf8"));
  const groups = new ConcurrencyGroups();
  const trace = [];
  const runs = [];
  for (const [i, spec] of scenario.runs.entries()) {
    const loaded = await loadWorkflow(scenario.repo_root, spec.workflow);
    const run = new WorkflowRun(scenario, spec, loaded, groups, trace);
    await run.start(i);
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
