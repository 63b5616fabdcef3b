// Output auto counts tokens with the real tokenizer the model name implies, and the documented
// settings do what they say: FRED_MODEL_NAME picks encoding and context, FRED_SAFE_TOKEN_LIMIT
// raises (or lowers) the budget.
import assert from "node:assert/strict";
import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { ok } from "../../harness/results.ts";
import { openProvider } from "../../harness/provider.ts";
import { startFakeFred } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";

const GNPCA = { operation: "get_observations", series_id: "GNPCA" };

Deno.test("fred auto counts the result's tokens exactly with the default model's cl100k_base", async () => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({ fake }));
  const r = ok(await s.client.callTool({ name: "fred_series", arguments: GNPCA }));
  const decision = r["decision"] as Record<string, number>;
  assert.equal(decision["token_budget"], 35_000, "claude-sonnet-4: 200,000 x 0.25 x 0.7");
  assert.equal(decision["estimated_tokens"], cl100k(JSON.stringify(r["items"])));
});

Deno.test("fred FRED_MODEL_NAME picks o200k_base and the model's context for gpt-4o", async () => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({ fake, env: { FRED_MODEL_NAME: "gpt-4o" } }));
  const r = ok(await s.client.callTool({ name: "fred_series", arguments: GNPCA }));
  const decision = r["decision"] as Record<string, number>;
  assert.equal(decision["token_budget"], 22_400, "128,000 x 0.25 x 0.7");
  assert.equal(decision["estimated_tokens"], o200k(JSON.stringify(r["items"])));
});

Deno.test("fred FRED_SAFE_TOKEN_LIMIT raises the budget past what the context share allows", async () => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({
    fake,
    env: {
      FRED_SAFE_TOKEN_LIMIT: "200000",
      FRED_SCREEN_ROW_THRESHOLD: "5000",
      MCP_CHARACTER_LIMIT: "400000",
    },
  }));
  // 3,000 daily rows: over the default 35,000-token budget, within the raised 140,000.
  const r = ok(await s.client.callTool({ name: "fred_series", arguments: { ...GNPCA, series_id: "MID" } }));
  const decision = r["decision"] as Record<string, number>;
  assert.equal(decision["token_budget"], 140_000);
  assert.ok(decision["estimated_tokens"]! > 35_000, `${decision["estimated_tokens"]} tokens`);
  assert.equal(r["output_mode"], "screen");
  assert.equal((r["items"] as unknown[]).length, 3000);
});
