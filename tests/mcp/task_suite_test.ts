// The task suite (docs/BENCHMARKS.md) as a test: every realistic question of tools/bench/tasks.ts, asked of the
// default surface against recorded bodies, is answered by following only the next calls the
// server names: no dead end, at most three calls, two at the median. (Tokens are reported by
// `deno task bench`, not asserted.) With structured content off, the agent reads the same calls
// from the text alone.
import assert from "node:assert/strict";
import { runSuite, TASKS } from "../../tools/bench/tasks.ts";

Deno.test("task suite: every question answered by following the named next calls, within 3 calls, median 2", async () => {
  assert.ok(TASKS.length >= 30, `${TASKS.length} tasks`);
  assert.equal(new Set(TASKS.map((t) => t.source)).size, 8, "all eight sources");
  const results = await runSuite();
  const dead = results.filter((r) => !r.answered).map((r) =>
    `${r.task.id}: ${r.deadEnd} (${r.trail.join(" > ")})`
  );
  assert.deepEqual(dead, [], "no dead end");
  const over = results.filter((r) => r.calls > 3).map((r) => `${r.task.id}: ${r.calls}`);
  assert.deepEqual(over, [], "none over 3 calls");
  const calls = results.map((r) => r.calls).sort((a, b) => a - b);
  assert.ok(calls[Math.floor(calls.length / 2)]! <= 2, `median ${calls[Math.floor(calls.length / 2)]} calls`);
  // The agent never wrote a call: after the search, every call it made was one an answer named.
  for (const r of results) assert.equal(r.trail[0], "opendata_search", r.task.id);
});

Deno.test("task suite with structured content off: the text alone names every next call, each question answered within 3 calls", async () => {
  const results = await runSuite(TASKS, { structured: false });
  const dead = results.filter((r) => !r.answered).map((r) =>
    `${r.task.id}: ${r.deadEnd} (${r.trail.join(" > ")})`
  );
  assert.deepEqual(dead, [], "no dead end");
  assert.deepEqual(results.filter((r) => r.calls > 3).map((r) => r.task.id), [], "none over 3 calls");
  // Nothing but text reached the agent: what it paid for both blocks is what it paid for the text.
  for (const r of results) assert.equal(r.bothTokens, r.textTokens, r.task.id);
});
