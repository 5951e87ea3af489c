//! The matrix expansion and the combination of the legs' results and outputs, as GitHub documents
//! them (harness/matrix.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { aggregateResult, combinations, combineOutputs, legName, plan, runLegs, strategyContext } from "../harness/matrix.mjs";

test("vectors multiply with the first variable slowest", () => {
  assert.deepEqual(combinations({ os: ["a", "b"], v: [1, 2] }, "w"), [
    { os: "a", v: 1 }, { os: "a", v: 2 }, { os: "b", v: 1 }, { os: "b", v: 2 },
  ]);
});

test("exclude removes partial matches; include extends what it does not overwrite, else adds a leg", () => {
  const got = combinations({
    os: ["a", "b"], v: [1, 2],
    exclude: [{ os: "b", v: 2 }],
    include: [{ os: "a", extra: "x" }, { os: "c" }, { v: 1, extra: "y" }],
  }, "w");
  assert.deepEqual(got, [
    { os: "a", v: 1, extra: "y" }, { os: "a", v: 2, extra: "x" }, { os: "b", v: 1, extra: "y" }, { os: "c" },
  ]);
});

test("a matrix of include entries only is those entries (fromJSON of a plan job's output)", () => {
  const m = JSON.parse('{"include":[{"shard":1,"targets":"a b"},{"shard":2,"targets":"c"}]}');
  assert.deepEqual(combinations(m, "w"), m.include);
  assert.equal(legName("shard", m.include[0]), "shard (1, a b)");
});

test("empty, malformed and oversized matrices are refused naming the job", () => {
  assert.throws(() => combinations({ include: [] }, "w#0/j"), /w#0\/j: strategy\.matrix yields no job/);
  assert.throws(() => combinations({ v: [] }, "w"), /matrix vector 'v' does not contain any values/);
  assert.throws(() => combinations("x", "w"), /must be a mapping/);
  assert.throws(() => combinations({ v: Array.from({ length: 257 }, (_, i) => i) }, "w"), /at most 256 jobs, found 257/);
  assert.throws(() => plan({ matrix: { v: [1] }, "max-parallel": 0 }, "w"), /max-parallel must be a whole number >= 1/);
  assert.throws(() => plan({ matrix: { v: [1] }, other: 1 }, "w"), /strategy\.other is not emulated/);
});

test("fail-fast defaults to true; the strategy context names the leg", () => {
  const p = plan({ matrix: { v: [1, 2, 3] } }, "w");
  assert.equal(p.failFast, true);
  assert.equal(p.maxParallel, 3);
  assert.deepEqual(strategyContext(p, 1), { "fail-fast": true, "job-index": 1, "job-total": 3, "max-parallel": 3 });
  assert.equal(plan({ matrix: { v: [1] }, "fail-fast": false }, "w").failFast, false);
});

test("the matrix job's result and outputs combine its legs'", () => {
  assert.equal(aggregateResult(["success", "failure", "cancelled"]), "failure");
  assert.equal(aggregateResult(["success", "cancelled"]), "cancelled");
  assert.equal(aggregateResult(["success", "skipped"]), "success");
  assert.equal(aggregateResult(["skipped"]), "skipped");
  // Non-empty values written over earlier ones, in the order the legs ended.
  assert.deepEqual(combineOutputs([{ outputs: { a: "1", b: "x" } }, { outputs: { a: "", b: "y", c: "3" } }]), { a: "1", b: "y", c: "3" });
});

test("max-parallel bounds the legs running at once; fail-fast cancels the legs not started", async () => {
  let running = 0;
  let peak = 0;
  const p = plan({ matrix: { v: [1, 2, 3, 4, 5] }, "max-parallel": 2, "fail-fast": false }, "w");
  await runLegs(p, [0, 1, 2, 3, 4], async () => {
    running += 1;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 10));
    running -= 1;
    return "success";
  }, () => assert.fail("nothing is cancelled without fail-fast"));
  assert.equal(peak, 2);
  const ff = plan({ matrix: { v: [1, 2, 3] }, "max-parallel": 1 }, "w");
  const cancelled = [];
  await runLegs(ff, [0, 1, 2], async (i) => (i === 0 ? "failure" : "success"), (i) => cancelled.push(i));
  assert.deepEqual(cancelled, [1, 2]);
});
