//! Events: the `github` context and run record of schedule, workflow_dispatch and pull_request
//! runs, and the refusal of events and payloads the harness does not emulate.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkEvent, eventContext, eventEnv, refName, runRecord } from "../harness/events.mjs";

const pr = (headRepo) => ({
  workflow: "p.yml", event: "pull_request", ref: "refs/pull/7/merge",
  payload: {
    action: "labeled", number: 7, label: { name: "tier1-preview" },
    pull_request: { number: 7, head: { ref: "feature", sha: "a", repo: { full_name: headRepo } },
                    base: { ref: "main", sha: "b", repo: { full_name: "o/r" } } },
    repository: { full_name: "o/r", default_branch: "main" },
  },
});

test("ref names as the runner gives them", () => {
  assert.equal(refName("refs/heads/main"), "main");
  assert.equal(refName("refs/tags/v1.0"), "v1.0");
  assert.equal(refName("refs/pull/7/merge"), "7/merge");
});

test("a pull_request run carries its payload, head and base refs, and its head repository", () => {
  const spec = pr("fork/r");
  checkEvent(spec);
  const g = eventContext(spec, {}, String);
  assert.equal(g.event_name, "pull_request");
  assert.equal(g.ref_name, "7/merge");
  assert.equal(g.head_ref, "feature");
  assert.equal(g.base_ref, "main");
  assert.equal(g.event.pull_request.head.repo.full_name, "fork/r");
  assert.equal(g.event.label.name, "tier1-preview");
  assert.deepEqual(runRecord(spec, "o/r"), { head_branch: "feature", head_repository: "fork/r" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "events-"));
  const env = eventEnv(g, dir);
  assert.equal(env.GITHUB_HEAD_REF, "feature");
  assert.equal(env.GITHUB_BASE_REF, "main");
  assert.equal(JSON.parse(fs.readFileSync(env.GITHUB_EVENT_PATH, "utf8")).number, 7);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("schedule and dispatch keep their contexts", () => {
  const s = { workflow: "n.yml", event: "schedule", ref: "refs/heads/main" };
  checkEvent(s);
  assert.deepEqual(eventContext(s, {}, String).event, { schedule: "15 3 * * *" });
  assert.deepEqual(runRecord(s, "o/r"), { head_branch: "main", head_repository: "o/r" });
  const d = { ...s, event: "workflow_dispatch", actor: "alice" };
  assert.deepEqual(eventContext(d, { accept: true }, String, "o/r").event, {
    inputs: { accept: "true" }, ref: "refs/heads/main",
    repository: { full_name: "o/r", default_branch: "main" }, sender: { login: "alice" }, workflow: "n.yml",
  });
  assert.equal(eventContext({ ...d, default_branch: "trunk" }, {}, String, "o/r").event.repository.default_branch, "trunk");
  assert.equal(eventContext(d, {}, String).head_ref, "");
});

test("other events and incomplete pull_request payloads are refused", () => {
  assert.throws(() => checkEvent({ workflow: "w.yml", event: "pull_request_target", ref: "refs/heads/main" }),
    /w\.yml: event 'pull_request_target' is not emulated/);
  const noHead = pr("o/r");
  delete noHead.payload.pull_request.head;
  assert.throws(() => checkEvent(noHead), /a pull_request run needs a payload/);
  assert.throws(() => checkEvent({ ...pr("o/r"), ref: "refs/heads/feature" }), /refs\/pull\/<n>\/merge, found refs\/heads\/feature/);
});
