import assert from "node:assert/strict";
import { durationS, parseTestOutput } from "../../tools/bench/suite.ts";

Deno.test("durationS() reads Deno's test durations in every unit it prints", () => {
  assert.equal(durationS("812ms"), 0.812);
  assert.equal(durationS("3s"), 3);
  assert.equal(durationS("2m3s"), 123);
  assert.equal(durationS("450µs"), 0.00045);
  assert.equal(durationS("soon"), 0);
});

Deno.test("parseTestOutput() sums each file's top-level tests and reads the last summary", () => {
  const output = [
    "running 2 tests from ./tests/a_test.ts",
    "first ... \x1b[32mok\x1b[0m (1s)",
    "with steps ...",
    "  a step ... ok (900ms)",
    "with steps ... ok (2s)",
    "running 1 test from ./tests/b_test.ts",
    "only ... FAILED (500ms)",
    "",
    "FAILED | 2 passed (1 step) | 1 failed (1m4s)",
  ].join("\n");
  const parsed = parseTestOutput(output);
  assert.equal(parsed.passed, 2);
  assert.equal(parsed.failed, 1);
  assert.equal(parsed.testsS, 64);
  assert.deepEqual(parsed.slowest, [{ file: "tests/a_test.ts", s: 3 }, { file: "tests/b_test.ts", s: 0.5 }]);
});

Deno.test("parseTestOutput() reads the parallel runner's lines, which name their file", () => {
  const output = [
    "./tests/a_test.ts => first ... ok (1s)",
    "./tests/b_test.ts => other ... ok (250ms)",
    "./tests/a_test.ts => second ... ok (2s)",
    "ok | 3 passed | 0 failed (2s)",
  ].join("\n");
  const parsed = parseTestOutput(output);
  assert.equal(parsed.passed, 3);
  assert.deepEqual(parsed.slowest, [{ file: "tests/a_test.ts", s: 3 }, { file: "tests/b_test.ts", s: 0.25 }]);
});
