import assert from "node:assert/strict";
import { describeRun, parseRequirements, parseSummary } from "./run.ts";
import type { Requirements, RunResult } from "./run.ts";

const OUTPUT = `
=== Running scenario: ping ===
✓ ping: 9 passed, 9 failed

=== SUMMARY ===
✓ ping: 2 passed, 0 failed
✗ tools-call-sampling: 1 passed, 1 failed
✓ server-sse-multiple-streams: 0 passed, 0 failed
✓ json-schema-2020-12: 8 passed, 0 failed

Total: 11 passed, 1 failed

\x1b[33mExpected failures (in baseline):\x1b[0m
  ~ tools-call-sampling:tools-call-sampling
  ~ server-sse-multiple-streams:server-sse-multiple-streams-session

\x1b[32mBaseline check passed: all failures are expected.\x1b[0m
`;

const LIST = `Required for 2025-11-25 (48 scenarios, frozen; run at the 2025-11-25 wire):

Server scenarios (test against a server):
  - ping
  - tools-call-sampling
  - server-sse-multiple-streams

Client scenarios (test against a client):
  - initialize

Run and reported, but never scored:
  extension (1):
    - auth/dpop [client]
  pending (2):
    - json-schema-2020-12 [server]
    - server-sse-polling [server]
`;

function run(overrides: Partial<RunResult> = {}): RunResult {
  return {
    revision: "2025-11-25",
    mode: "stateless",
    exitCode: 0,
    seconds: 2.5,
    timedOut: false,
    ...parseSummary(OUTPUT),
    ...overrides,
  };
}

Deno.test("parseSummary() reads scenario verdicts and counts, totals and expected failures from the last summary", () => {
  const s = parseSummary(OUTPUT);
  assert.deepEqual(s.scenarios[0], { name: "ping", ok: true, passed: 2, failed: 0 });
  assert.deepEqual(s.scenarios[1], { name: "tools-call-sampling", ok: false, passed: 1, failed: 1 });
  assert.equal(s.scenarios.length, 4);
  assert.equal(s.passedChecks, 11);
  assert.equal(s.failedChecks, 1);
  assert.deepEqual(s.expectedFailures, [
    "tools-call-sampling:tools-call-sampling",
    "server-sse-multiple-streams:server-sse-multiple-streams-session",
  ]);
});

Deno.test("parseSummary() finds nothing in output without a summary", () => {
  const s = parseSummary("Server test error: connection refused");
  assert.deepEqual(s.scenarios, []);
  assert.equal(s.passedChecks, 0);
  assert.deepEqual(s.expectedFailures, []);
});

Deno.test("parseRequirements() reads the scored server scenarios and why the others are not scored", () => {
  const req = parseRequirements(LIST);
  assert.deepEqual(req.scored, ["ping", "tools-call-sampling", "server-sse-multiple-streams"]);
  assert.deepEqual([...req.unscored], [["json-schema-2020-12", "pending"], [
    "server-sse-polling",
    "pending",
  ]]);
});

Deno.test("describeRun() counts baselined scenarios apart and passes a run the suite passed", () => {
  const req: Requirements = parseRequirements(LIST);
  const { line, ok } = describeRun(run(), req);
  assert.equal(ok, true);
  assert.match(
    line,
    /^ok {3}2025-11-25 stateless: 1\/3 scored scenarios pass, 2 more as expected \(the expected-failures file: tools-call-sampling, server-sse-multiple-streams\)/,
  );
  assert.match(line, /; checks 3 passed, 1 expected to fail;/);
  assert.doesNotMatch(line, /FAIL|[^d] failed/, "expected failures do not read as failures");
  assert.match(line, /; not scored \(not required unless named below\): pending 1\/1 pass; 2\.5 s$/);
});

Deno.test("describeRun() fails a run whose required unscored scenario, scored scenario or budget fails", () => {
  const req: Requirements = parseRequirements(LIST);
  const broken = run({
    scenarios: run().scenarios.map((s) =>
      s.name === "json-schema-2020-12" ? { ...s, ok: false, failed: 1 } : s
    ),
  });
  const schema = describeRun(broken, req);
  assert.equal(schema.ok, false, "json-schema-2020-12 is required although the suite does not score it");
  assert.match(schema.line, /required although unscored, failing: json-schema-2020-12/);
  const missing = describeRun(run({ scenarios: run().scenarios.filter((s) => s.name !== "ping") }), req);
  assert.equal(missing.ok, false);
  assert.match(missing.line, /scored scenarios not run: ping/);
  assert.equal(describeRun(run({ exitCode: 1 }), req).ok, false);
  assert.match(describeRun(run({ exitCode: 1 }), req).line, /^FAIL 2025-11-25 stateless: .*; suite exit 1$/);
  const unexpected = describeRun(
    run({ scenarios: run().scenarios.map((s) => s.name === "ping" ? { ...s, ok: false, failed: 2 } : s) }),
    req,
  );
  assert.equal(unexpected.ok, false);
  assert.match(
    unexpected.line,
    /^FAIL .*UNEXPECTED FAILURES: ping; checks 3 passed, 2 FAILED, 1 expected to fail;/,
  );
  assert.equal(describeRun(run({ timedOut: true }), req).ok, false);
});

Deno.test("describeRun() requires the SEP-2243 header scenarios only of a requirement set that runs them", () => {
  const without: Requirements = parseRequirements(LIST);
  assert.equal(describeRun(run(), without).ok, true, "the 2025-11-25 set has no header scenarios");
  const withHeaders: Requirements = parseRequirements(
    `${LIST}    - http-custom-header-server-validation [server]\n`,
  );
  assert.equal(withHeaders.unscored.get("http-custom-header-server-validation"), "pending");
  const notRun = describeRun(run(), withHeaders);
  assert.equal(notRun.ok, false);
  assert.match(notRun.line, /required although unscored, failing: http-custom-header-server-validation/);
  const failing = run({
    scenarios: [...run().scenarios, {
      name: "http-custom-header-server-validation",
      ok: false,
      passed: 1,
      failed: 5,
    }],
  });
  assert.equal(describeRun(failing, withHeaders).ok, false);
  const passing = run({
    scenarios: [...run().scenarios, {
      name: "http-custom-header-server-validation",
      ok: true,
      passed: 10,
      failed: 0,
    }],
  });
  assert.equal(describeRun(passing, withHeaders).ok, true);
});
