//! Job-level emulation: needs and status functions decide which jobs run, and job features the
//! harness does not emulate stop the scenario instead of being ignored.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadWorkflow } from "../harness/load.mjs";
import { ConcurrencyGroups } from "../harness/groups.mjs";
import { WorkflowRun } from "../harness/jobs.mjs";

async function workflow(text) {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "jobs-"));
  fs.mkdirSync(path.join(dir, ".github/workflows"), { recursive: true });
  fs.writeFileSync(path.join(dir, ".github/workflows/w.yml"), text);
  const loaded = await loadWorkflow(dir, ".github/workflows/w.yml");
  fs.rmSync(dir, { recursive: true, force: true });
  const run = new WorkflowRun({ machines: [] }, { workflow: "w.yml" }, loaded, new ConcurrencyGroups(), []);
  run.index = 0;
  run.github = { event_name: "push" };
  return run;
}

test("a matrix that yields no job stops the scenario, naming the job", async () => {
  const run = await workflow("on: push\njobs:\n  m:\n    runs-on: x\n    strategy:\n      matrix:\n        include: []\n    steps:\n      - run: echo\n");
  await assert.rejects(run.runGraph(run.loaded, {}, run.jobs, ""), /w\.yml#0\/m: strategy\.matrix yields no job/);
});

test("a failed need skips dependents unless their if names a status function", async () => {
  const run = await workflow(`on: push
jobs:
  a:
    runs-on: x
    if: false
    steps:
      - run: echo
  b:
    needs: a
    runs-on: x
    steps:
      - run: echo
  c:
    needs: a
    if: always() && needs.a.result == 'skipped'
    runs-on: nowhere
    steps:
      - run: echo
`);
  // c's if is true, so it tries to run and finds no machine: proof that it was not skipped.
  await assert.rejects(run.runGraph(run.loaded, {}, run.jobs, ""), /w\.yml#0\/c: no scenario machine has every label of runs-on "nowhere"/);
  assert.equal(run.jobs.a.result, "skipped");
  assert.equal(run.jobs.b.result, "skipped");
});
