// The task suite (docs/BENCHMARKS.md) as a test: every realistic question of tools/bench/tasks.ts, asked of the
// default surface against recorded bodies, is answered by following only the next calls the
// server names: no dead end, at most three calls, two at the median, no task over 2,500 text
// tokens (o200k; a count, not a timing), each answer within its kind's budget, and every call any
// answer names works as given. Among
// the questions: second hops (list to record, next page), empty answers, typos, wrong argument
// names and a failed upstream (answered by the error and its retry advice). With structured
// content off, the agent reads the same calls from the text alone.
import assert from "node:assert/strict";
import { ANSWER_BUDGETS, runSuite, TASKS } from "../../tools/bench/tasks.ts";
import type { TaskResult } from "../../tools/bench/tasks.ts";

function check(results: readonly TaskResult[]): void {
  const dead = results.filter((r) => !r.answered).map((r) =>
    `${r.task.id}: ${r.deadEnd} (${r.trail.join(" > ")})`
  );
  assert.deepEqual(dead, [], "no dead end");
  const over = results.filter((r) => r.calls > 3).map((r) => `${r.task.id}: ${r.calls}`);
  assert.deepEqual(over, [], "none over 3 calls");
  const calls = results.map((r) => r.calls).sort((a, b) => a - b);
  assert.ok(calls[Math.floor(calls.length / 2)]! <= 2, `median ${calls[Math.floor(calls.length / 2)]} calls`);
  const costly = results.filter((r) => r.textTokens > 2500).map((r) => `${r.task.id}: ${r.textTokens}`);
  assert.deepEqual(costly, [], "no task over 2,500 text tokens");
  const overBudget = results.flatMap((r) =>
    r.answers.filter((a) => a.tokens > ANSWER_BUDGETS[a.kind]).map((a) =>
      `${r.task.id}: ${a.kind} ${a.tokens}`
    )
  );
  assert.deepEqual(overBudget, [], "every answer within its kind's budget");
  const failing = results.flatMap((r) => (r.failedHints ?? []).map((h) => `${r.task.id}: ${h}`));
  assert.deepEqual(failing, [], "every named call works as given");
  // The agent never wrote a call: after its first one (the search, or its own call), every call
  // it made was one an answer named.
  for (const r of results) {
    if (!r.task.start) assert.equal(r.trail[0], "opendata_search", r.task.id);
  }
}

Deno.test("task suite: every question answered by following the named next calls, within 3 calls, median 2", async () => {
  assert.ok(TASKS.length >= 45, `${TASKS.length} tasks`);
  assert.equal(new Set(TASKS.map((t) => t.source)).size, 8, "all eight sources");
  assert.ok(TASKS.filter((t) => t.start).length >= 12, "second hops, empty answers, typos, failures");
  check(await runSuite(TASKS, { checkHints: true }));
});

Deno.test("task suite with structured content off: the text alone names every next call, each question answered within 3 calls", async () => {
  const results = await runSuite(TASKS, { structured: false, checkHints: true });
  check(results);
  // Nothing but text reached the agent: what it paid for both blocks is what it paid for the text.
  for (const r of results) assert.equal(r.bothTokens, r.textTokens, r.task.id);
});
