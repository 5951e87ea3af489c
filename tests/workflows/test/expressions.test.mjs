//! Conditions and templates evaluate as GitHub evaluates them (the library's own semantics).
import { test } from "node:test";
import assert from "node:assert/strict";
import { condition, evaluate, tokenValue } from "../harness/expressions.mjs";

const status = (failed) => ({ success: !failed, failure: failed, always: true, cancelled: false });

test("status functions come from the runner's state", () => {
  assert.equal(condition("success() && (steps.a.outcome == 'success')", { steps: { a: { outcome: "success" } } }, status(false)), true);
  assert.equal(condition("success() && (steps.a.outcome == 'success')", { steps: { a: { outcome: "success" } } }, status(true)), false);
  assert.equal(condition("always() && steps.a.outcome != 'skipped'", { steps: { a: { outcome: "failure" } } }, status(true)), true);
  assert.equal(condition("!cancelled() && steps.a.outcome == 'success'", { steps: { a: { outcome: "success" } } }, status(true)), true);
});

test("coercion: a boolean input is not the string 'true'; a missing input is null", () => {
  assert.equal(condition("inputs.flag == 'true'", { inputs: { flag: true } }, status(false)), false);
  assert.equal(condition("inputs.flag == true", { inputs: {} }, status(false)), false);
  assert.equal(evaluate("inputs.flag == true", { inputs: {} }).coerceString(), "false");
});

test("format() as the parser writes templates; unknown contexts and functions are errors", () => {
  assert.equal(tokenValue({ type: 3, expr: "format('e-{0}-{1}', github.run_id, github.run_attempt)" }, { github: { run_id: "7", run_attempt: "1" } }), "e-7-1");
  assert.throws(() => evaluate("nope.x", {}), /Unrecognized named-value: 'nope'/);
  assert.throws(() => condition("success()", {}), /Unrecognized function: 'success'/);
  assert.throws(() => condition("hashFiles('x')", {}, status(false)), /hashFiles\(\) is not emulated/);
});

test("model tokens keep the type of a whole-value expression", () => {
  assert.equal(tokenValue({ type: 3, expr: "1 == 1" }, {}), true);
  assert.deepEqual(tokenValue({ type: 2, map: [{ key: { type: 0, value: "k" }, value: { type: 0, value: "v" } }] }, {}), { k: "v" });
});
