//! Every workflow of the repository and action.yml parse and convert with GitHub's parser, and
//! `uses:` other than the three adapted actions are refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadAction, loadWorkflow } from "../harness/load.mjs";
import { refusal } from "../harness/adapters.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

test("every workflow and action.yml load without a parser error", async () => {
  const files = fs.readdirSync(path.join(root, ".github/workflows")).filter((f) => f.endsWith(".yml"));
  assert.ok(files.length >= 4, files.join(","));
  for (const f of files) {
    const { template } = await loadWorkflow(root, `.github/workflows/${f}`);
    assert.ok(template.jobs.length > 0, f);
  }
  const { action } = loadAction(root, "action.yml");
  assert.equal(action.runs.using, "composite");
  assert.ok(action.runs.steps.length >= 7);
});

test("the nightly's reusable promotion job carries the callee's jobs", async () => {
  const { template } = await loadWorkflow(root, ".github/workflows/tier1-nightly.yml");
  const promote = template.jobs.find((j) => j.id.value === "promote-history-anchor");
  assert.equal(promote.type, "reusableWorkflowJob");
  assert.deepEqual(promote.jobs.map((j) => j.id.value), ["promote"]);
});

test("a parser error names the file", async () => {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "wf-"));
  fs.mkdirSync(path.join(dir, ".github/workflows"), { recursive: true });
  fs.writeFileSync(path.join(dir, ".github/workflows/bad.yml"), "on: push\njobs:\n  j:\n    runs-on: x\n    steps:\n      - run: a\n        uses: b\n");
  await assert.rejects(loadWorkflow(dir, ".github/workflows/bad.yml"), /\.github\/workflows\/bad\.yml: the workflow parser refused it/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("only SHA-pinned checkout, upload-artifact and download-artifact have adapters", () => {
  assert.equal(refusal(`actions/checkout@${"a".repeat(40)}`), null);
  assert.equal(refusal(`actions/upload-artifact@${"b".repeat(40)}`), null);
  assert.match(refusal("actions/checkout@v4"), /only SHA-pinned/);
  assert.match(refusal(`actions/attest-build-provenance@${"c".repeat(40)}`), /no adapter for actions\/attest-build-provenance/);
});
