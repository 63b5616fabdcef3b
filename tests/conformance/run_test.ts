import assert from "node:assert/strict";
import { parseSummary } from "./run.ts";

const OUTPUT = `
=== Running scenario: ping ===
✓ ping: 9 passed, 9 failed

=== SUMMARY ===
✓ ping: 1 passed, 0 failed
✗ tools-call-sampling: 0 passed, 1 failed
✓ server-sse-multiple-streams: 0 passed, 0 failed

Total: 1 passed, 1 failed

\x1b[33mExpected failures (in baseline):\x1b[0m
  ~ tools-call-sampling
  ~ server-sse-multiple-streams

\x1b[32mBaseline check passed: all failures are expected.\x1b[0m
`;

Deno.test("parseSummary() reads scenario verdicts, totals and expected failures from the last summary", () => {
  const s = parseSummary(OUTPUT);
  assert.deepEqual(s.scenarios, [
    { name: "ping", ok: true },
    { name: "tools-call-sampling", ok: false },
    { name: "server-sse-multiple-streams", ok: true },
  ]);
  assert.equal(s.passedChecks, 1);
  assert.equal(s.failedChecks, 1);
  assert.deepEqual(s.expectedFailures, ["tools-call-sampling", "server-sse-multiple-streams"]);
});

Deno.test("parseSummary() finds nothing in output without a summary", () => {
  const s = parseSummary("Server test error: connection refused");
  assert.deepEqual(s.scenarios, []);
  assert.equal(s.passedChecks, 0);
  assert.deepEqual(s.expectedFailures, []);
});
