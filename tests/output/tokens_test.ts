import assert from "node:assert/strict";
import { chooseOutput, estimateRowsTokens, estimateTokens, tokenBudget } from "../../lib/output/tokens.ts";

Deno.test("estimateTokens() counts words, digit groups, punctuation and line breaks", () => {
  assert.equal(estimateTokens(""), 0);
  assert.equal(estimateTokens("hello world"), 4); // 2 + 2, the space joins the word
  assert.equal(estimateTokens("2024-01-01"), 6); // 2024 -> 2, 01 -> 1 each, two dashes
  assert.equal(estimateTokens("a\nb"), 3);
  assert.equal(estimateTokens("ÆØÅ"), 3, "non-ASCII characters cost one each");
});

Deno.test("estimateTokens() errs high against a known cl100k count", () => {
  // cl100k_base encodes this pangram in 10 tokens.
  assert.ok(estimateTokens("The quick brown fox jumps over the lazy dog.") >= 10);
});

Deno.test("estimateRowsTokens() is exact for small sets and extrapolates a sample for large ones", () => {
  const row = { date: "2020-01-01", value: 1.5 };
  const one = estimateTokens(JSON.stringify(row)) + 1;
  assert.equal(estimateRowsTokens([row, row, row]), 3 * one);
  assert.equal(estimateRowsTokens([]), 0);
  const many = Array.from({ length: 100_000 }, () => row);
  const started = performance.now();
  assert.equal(estimateRowsTokens(many, { sampleSize: 50 }), 100_000 * one);
  assert.ok(performance.now() - started < 100, "sampling keeps large estimates cheap");
});

Deno.test("tokenBudget() gives seed 003's 35,000 tokens with its defaults", () => {
  assert.equal(
    tokenBudget({
      safeTokenLimit: 50_000,
      modelTokenLimit: 200_000,
      assumeContextUsed: 0.75,
      safetyMargin: 0.7,
    }),
    35_000,
  );
  // A small model's leftover context is the tighter bound.
  assert.equal(
    tokenBudget({ safeTokenLimit: 50_000, modelTokenLimit: 32_000, assumeContextUsed: 0.5, safetyMargin: 1 }),
    16_000,
  );
});

Deno.test("chooseOutput() keeps screen and file, and resolves auto by tokens, rows and fit", () => {
  const facts = {
    rows: 10,
    estimatedTokens: 100,
    budget: 1000,
    rowThreshold: 50,
    fitsOnScreen: true,
    characterLimit: 25_000,
  };
  assert.equal(chooseOutput("screen", { ...facts, estimatedTokens: 1e9 }).mode, "screen");
  assert.equal(chooseOutput("file", facts).mode, "file");
  assert.deepEqual(chooseOutput("auto", facts), {
    mode: "screen",
    reason: "the result fits on screen",
    estimated_tokens: 100,
    token_budget: 1000,
  });
  const tokens = chooseOutput("auto", { ...facts, estimatedTokens: 5000 });
  assert.equal(tokens.mode, "file");
  assert.match(tokens.reason, /5,000 tokens exceed the safe limit of 1,000/);
  const rows = chooseOutput("auto", { ...facts, rows: 51 });
  assert.equal(rows.mode, "file");
  assert.match(rows.reason, /51 rows exceed the screen threshold of 50/);
  const fit = chooseOutput("auto", { ...facts, fitsOnScreen: false });
  assert.equal(fit.mode, "file");
  assert.match(fit.reason, /25,000-character response limit/);
});
