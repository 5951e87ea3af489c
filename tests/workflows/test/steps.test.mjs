//! The step runner against a small workflow: file commands, env before `if`, outcome versus
//! conclusion, status functions after a failure, and a local composite action.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { loadWorkflow, rawJob, rawSteps } from "../harness/load.mjs";
import { runSteps } from "../harness/steps.mjs";

const WORKFLOW = `on: push
jobs:
  j:
    runs-on: x
    env:
      FROM_JOB: job
    steps:
      - id: out
        run: |
          echo "one=1" >> "$GITHUB_OUTPUT"
          printf 'multi<<EOF\\nx\\ny\\nEOF\\n' >> "$GITHUB_OUTPUT"
          echo "LATER=set" >> "$GITHUB_ENV"
          echo "now=\${LATER:-unset} $FROM_JOB" >> "$GITHUB_OUTPUT"
      - id: sees
        run: echo "later=$LATER" >> "$GITHUB_OUTPUT"
      - id: tolerated
        continue-on-error: true
        run: exit 3
      - id: after_tolerated
        run: echo ok
      - id: hard
        run: exit 1
      - id: not_run
        run: echo never
      - id: on_failure
        if: failure() && steps.hard.outcome == 'failure'
        run: echo "seen=\${{ steps.tolerated.outcome }}/\${{ steps.tolerated.conclusion }}" >> "$GITHUB_OUTPUT"
      - id: bad_env
        if: always() && false
        env:
          X: \${{ fromJSON('') }}
        run: echo never
      - id: composite
        if: always()
        uses: ./act
        with:
          word: hi
`;

const ACTION = `name: act
description: d
inputs:
  word:
    description: w
    required: true
outputs:
  said:
    description: s
    value: \${{ steps.say.outputs.said }}
runs:
  using: composite
  steps:
    - id: say
      shell: bash
      env:
        WORD: \${{ inputs.word }}
      run: echo "said=$WORD" >> "$GITHUB_OUTPUT"
`;

test("a job's steps as the runner plays them", async () => {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "steps-"));
  fs.mkdirSync(path.join(dir, ".github/workflows"), { recursive: true });
  fs.writeFileSync(path.join(dir, ".github/workflows/w.yml"), WORKFLOW);
  fs.mkdirSync(path.join(dir, "act"));
  fs.writeFileSync(path.join(dir, "act/action.yml"), ACTION);
  const { template, raw } = await loadWorkflow(dir, ".github/workflows/w.yml");
  const def = template.jobs[0];
  const job = {
    label: "w/j", dir: path.join(dir, "job"), workspace: dir, temp: dir, processEnv: { PATH: process.env.PATH },
    baseEnv: { FROM_JOB: "job" }, contexts: { github: {}, inputs: {}, needs: {}, runner: {} }, defaults: {},
    apiUrl: "http://127.0.0.1:9",
  };
  const r = await runSteps(job, def.steps, rawSteps(rawJob(raw, "j")));
  const by = Object.fromEntries(r.steps.map((s) => [s.id, s]));
  assert.deepEqual(by.out.outputs, { one: "1", multi: "x\ny", now: "unset job" });
  assert.equal(by.sees.outputs.later, "set");
  assert.deepEqual([by.tolerated.outcome, by.tolerated.conclusion], ["failure", "success"]);
  assert.equal(by.after_tolerated.outcome, "success");
  assert.equal(by.hard.outcome, "failure");
  assert.equal(by.not_run.outcome, "skipped");
  assert.equal(by.on_failure.outputs.seen, "failure/success");
  assert.equal(by.bad_env.outcome, "failure", "env is evaluated before if and fails the step");
  assert.match(by.bad_env.annotations[0].message, /step env: .*empty input/);
  assert.equal(by.composite.outcome, "success");
  assert.equal(by.composite.outputs.said, "hi");
  assert.equal(r.failed, true);
  assert.equal(r.stepsContext.tolerated.conclusion, "success");
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a uses: without an adapter stops the whole scenario, naming the action", async () => {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "steps-"));
  fs.mkdirSync(path.join(dir, ".github/workflows"), { recursive: true });
  const sha = "a".repeat(40);
  fs.writeFileSync(path.join(dir, ".github/workflows/w.yml"),
    `on: push\njobs:\n  j:\n    runs-on: x\n    steps:\n      - uses: actions/setup-python@${sha}\n        continue-on-error: true\n      - run: echo after\n`);
  const { template, raw } = await loadWorkflow(dir, ".github/workflows/w.yml");
  const job = {
    label: "w/j", dir: path.join(dir, "job"), workspace: dir, temp: dir, processEnv: { PATH: process.env.PATH },
    baseEnv: {}, contexts: { github: {}, inputs: {}, needs: {}, runner: {} }, defaults: {}, apiUrl: "http://127.0.0.1:9",
  };
  await assert.rejects(runSteps(job, template.jobs[0].steps, rawSteps(rawJob(raw, "j"))),
    /w\/j: step 'actions\/setup-python@a+': uses: .*no adapter for actions\/setup-python/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a remote composite action runs from its repository at the pinned commit", async () => {
  const { execFileSync } = await import("node:child_process");
  const dir = fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "steps-"));
  const repo = path.join(dir, "tools");
  fs.mkdirSync(path.join(repo, "say"), { recursive: true });
  fs.writeFileSync(path.join(repo, "say/action.yml"), ACTION.replace('"said=$WORD"', '"said=$WORD from $(basename "$GITHUB_ACTION_PATH")"'));
  const git = (...args) => execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args]).toString().trim();
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "action");
  const sha = git("rev-parse", "HEAD");
  const work = path.join(dir, "work");
  fs.mkdirSync(path.join(work, ".github/workflows"), { recursive: true });
  const wf = (ref) => `on: push\njobs:\n  j:\n    runs-on: x\n    steps:\n      - id: s\n        uses: acme/tools/say@${ref}\n        with:\n          word: hi\n`;
  fs.writeFileSync(path.join(work, ".github/workflows/w.yml"), wf(sha));
  const job = (label) => ({
    label, dir: path.join(dir, label), workspace: work, temp: work, processEnv: { PATH: process.env.PATH },
    baseEnv: {}, contexts: { github: {}, inputs: {}, needs: {}, runner: {} }, defaults: {}, apiUrl: "http://127.0.0.1:9",
    actionRepos: { "acme/tools": repo }, actionsDir: path.join(dir, "actions"),
  });
  let { template, raw } = await loadWorkflow(work, ".github/workflows/w.yml");
  const r = await runSteps(job("a"), template.jobs[0].steps, rawSteps(rawJob(raw, "j")));
  assert.equal(r.steps[0].outcome, "success");
  assert.equal(r.steps[0].outputs.said, "hi from say");
  fs.writeFileSync(path.join(work, ".github/workflows/w.yml"), wf("b".repeat(40)));
  ({ template, raw } = await loadWorkflow(work, ".github/workflows/w.yml"));
  await assert.rejects(runSteps(job("b"), template.jobs[0].steps, rawSteps(rawJob(raw, "j"))),
    /acme\/tools\/say@b+: commit b+ is not in acme\/tools/);
  fs.rmSync(dir, { recursive: true, force: true });
});
