//! Concurrency groups queue first come, first served and never cancel; other modes are refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConcurrencyGroups, groupOf } from "../harness/groups.mjs";

test("one holder per group, the queue in arrival order, other groups independent", async () => {
  const g = new ConcurrencyGroups();
  const order = [];
  const first = await g.acquire("p");
  const second = g.acquire("p").then((rel) => { order.push("second"); return rel; });
  const third = g.acquire("p").then((rel) => { order.push("third"); return rel; });
  const other = await g.acquire("q");
  order.push("other");
  first();
  (await second)();
  (await third)();
  other();
  assert.deepEqual(order, ["other", "second", "third"]);
});

test("only queue: max without cancel-in-progress is emulated", () => {
  assert.equal(groupOf({ group: "g", "cancel-in-progress": false, queue: "max" }, "j"), "g");
  assert.equal(groupOf(undefined, "j"), null);
  assert.throws(() => groupOf({ group: "g" }, "j"), /j: concurrency queue 'single' is not emulated/);
  assert.throws(() => groupOf({ group: "g", queue: "max", "cancel-in-progress": true }, "j"), /cancel-in-progress/);
  assert.throws(() => groupOf("g", "j"), /not emulated/);
});
