import assert from "node:assert/strict";
import {
  boundedCount,
  chooseOutput,
  countRowsTokens,
  LONGEST_PIECE,
  modelProfile,
  SAMPLE_ABOVE,
  tokenBudget,
  tokenCounter,
} from "../../lib/output/tokens.ts";
import { fixtureText } from "../fakes/upstream.ts";

Deno.test("tokenCounter() counts with the real cl100k_base and o200k_base encodings", async () => {
  const cl = await tokenCounter("cl100k_base");
  const o2 = await tokenCounter("o200k_base");
  // Reference counts of tiktoken for this pangram: 10 in both encodings.
  assert.equal(cl.count("The quick brown fox jumps over the lazy dog."), 10);
  assert.equal(o2.count("The quick brown fox jumps over the lazy dog."), 10);
  // The encodings differ on other text (o200k has a larger vocabulary).
  const norsk = "Riksantikvaren forvalter kulturminner og kulturmiljøer i hele Norge.";
  assert.notEqual(cl.count(norsk), o2.count(norsk));
  assert.equal(cl.count(""), 0);
  assert.equal(await tokenCounter("cl100k_base"), cl, "loaded once, then reused");
});

Deno.test("tokenCounter() counts special-token text from upstreams as text instead of refusing it", async () => {
  const cl = await tokenCounter("cl100k_base");
  assert.ok(cl.count("notes: <|endoftext|> trailing") > 3);
});

Deno.test("countRowsTokens() is exact for small sets and extrapolates a sample for large ones", async () => {
  const cl = await tokenCounter("cl100k_base");
  const body = JSON.parse(fixtureText("fred/official_doc_series_observations_GNPCA.json"));
  const rows = body.observations as Record<string, unknown>[];
  assert.equal(
    countRowsTokens(rows, cl),
    cl.count(JSON.stringify(rows)),
    "exact: the JSON array's own count",
  );
  // 100,000 rows built from the recorded ones, measured on a sample of 200.
  const many = Array.from({ length: 100_000 }, (_, i) => rows[i % rows.length]);
  const exact = cl.count(JSON.stringify(many.slice(0, 8400))) * (100_000 / 8400);
  const sampled = countRowsTokens(many, cl);
  assert.ok(Math.abs(sampled / exact - 1) < 0.02, `sampled ${sampled} vs ${Math.round(exact)}`);
  assert.equal(countRowsTokens([], cl), cl.count("[]"));
  // Periodic values (a cycle of 1,000 rows) must not alias with the sample's spacing.
  const periodic = Array.from(
    { length: 100_000 },
    (_, i) => ({ v: i % 1000 === 0 ? 100 : 100 + (i % 1000) / 7 }),
  );
  const ratio = countRowsTokens(periodic, cl) / cl.count(JSON.stringify(periodic));
  assert.ok(Math.abs(ratio - 1) < 0.03, `periodic: ${ratio.toFixed(3)}`);
});

Deno.test("modelProfile() picks the encoding and context a model name implies", () => {
  assert.deepEqual(modelProfile("claude-sonnet-4"), {
    family: "claude",
    encoding: "cl100k_base",
    contextTokens: 200_000,
  });
  assert.equal(modelProfile("gpt-4o-mini").encoding, "o200k_base");
  assert.equal(modelProfile("gpt-4o-mini").contextTokens, 128_000);
  assert.equal(modelProfile("gpt-4.1").contextTokens, 1_047_576);
  assert.equal(modelProfile("o3-mini").encoding, "o200k_base");
  assert.equal(modelProfile("gpt-4").encoding, "cl100k_base");
  assert.equal(modelProfile("gpt-4").contextTokens, 8_192);
  assert.equal(modelProfile("gemini-2.5-pro").contextTokens, 1_000_000);
  assert.equal(modelProfile("something-else").family, "unknown");
});

Deno.test("tokenBudget() gives 35,000 tokens for the default model and lets the safe limit raise or lower it", () => {
  const base = { modelTokenLimit: 200_000, assumeContextUsed: 0.75, safetyMargin: 0.7 };
  assert.equal(tokenBudget(base), 35_000);
  assert.equal(tokenBudget({ ...base, safeTokenLimit: 100_000 }), 70_000, "raised above the context share");
  assert.equal(tokenBudget({ ...base, safeTokenLimit: 10_000 }), 7_000, "lowered");
  assert.equal(
    tokenBudget({ ...base, modelTokenLimit: 32_000, assumeContextUsed: 0.5, safetyMargin: 1 }),
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

Deno.test("tokenCounter() counts long unspaced and huge texts in pieces, close to the exact count", async () => {
  const cl = await tokenCounter("cl100k_base");
  // Small enough to count exactly the slow way, long enough to be cut into pieces.
  const unspaced = "x".repeat(2000);
  const exact = (await import("gpt-tokenizer/encoding/cl100k_base")).countTokens(unspaced);
  const pieces = cl.count(unspaced);
  assert.ok(Math.abs(pieces - exact) <= Math.ceil(2000 / LONGEST_PIECE), `${pieces} vs ${exact}`);
  // Text above the sampling size is scaled from slices: within 2% of a sum of exact parts.
  const line = "Gross domestic product, billions of dollars, seasonally adjusted annual rate. ";
  const big = line.repeat(Math.ceil(SAMPLE_ABOVE * 2 / line.length));
  const perLine = cl.count(line.repeat(100)) / 100;
  const estimate = cl.count(big);
  assert.ok(Math.abs(estimate / (perLine * big.length / line.length) - 1) < 0.02, `${estimate}`);
  // A split never separates a surrogate pair: 300 emoji count as whole characters.
  assert.ok(cl.count("😀".repeat(300)) > 0);
});

Deno.test("boundedCount() hands the encoder no piece longer than LONGEST_PIECE of one kind", () => {
  const seen: string[] = [];
  const count = (piece: string) => (seen.push(piece), piece.length);
  const text = `${"[".repeat(1000)} ok ${" ".repeat(500)}${"😀".repeat(200)}${"9".repeat(300)}`;
  assert.equal(boundedCount(text, count), text.length);
  for (const piece of seen) {
    for (const run of piece.match(/\s+|[A-Za-z\u0080-\uffff]+|\d+|[^\sA-Za-z\d\u0080-\uffff]+/g) ?? []) {
      assert.ok(run.length <= LONGEST_PIECE + 1, `a run of ${run.length}`);
    }
    assert.ok(!/^[\udc00-\udfff]/.test(piece), "a piece starts with half a surrogate pair");
  }
  // Above the sampling size only slices are counted.
  seen.length = 0;
  assert.ok(boundedCount("y".repeat(SAMPLE_ABOVE * 4), count) >= SAMPLE_ABOVE * 4);
  assert.ok(seen.reduce((n, p) => n + p.length, 0) <= 64 * 2048);
});
