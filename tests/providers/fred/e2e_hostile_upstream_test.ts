// A hostile upstream (issue 30): bodies nested past any real answer are refused unread with a
// DECODE_ERROR that blames the upstream, never a stack overflow; text without spaces is counted
// in linear time. Driven through the real MCP client over stdio against a loopback fake FRED.
import assert from "node:assert/strict";
import { startStdio } from "../../fakes/server.ts";
import { errorOf, ok } from "../../fakes/results.ts";
import { fredConfig, startFakeFred } from "./fake_fred.ts";

const deepArrays = (n: number) => `{"observations":${"[".repeat(n)}${"]".repeat(n)}}`;
const deepObject = (n: number) => `${'{"seriess":'.repeat(n)}1${"}".repeat(n)}`;

Deno.test("fred refuses an upstream body nested 100,000 or 20,000 deep with DECODE_ERROR and keeps serving", async () => {
  await using fake = startFakeFred();
  fake.route({
    path: "/fred/series/observations",
    reply: { body: deepArrays(100_000), contentType: "application/json" },
  })
    .route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "DEEP",
      reply: { body: deepObject(20_000), contentType: "application/json" },
    });
  await using s = await startStdio({ args: ["--providers", "fred"], configYaml: fredConfig(fake.origin) });
  for (
    const args of [
      { operation: "get_observations", series_id: "GNPCA" },
      { operation: "get_observations", series_id: "GNPCA", output: "file" },
      { operation: "get", series_id: "DEEP" },
    ]
  ) {
    const e = errorOf(await s.client.callTool({ name: "fred_series", arguments: args }));
    assert.equal(e["error_type"], "DECODE_ERROR", JSON.stringify(e));
    assert.match(String(e["message"]), /nested deeper than 64 levels/);
    assert.equal(e["retryable"], false);
    assert.ok(e["hint"], "says what to do next");
  }
  const after = ok(
    await s.client.callTool({ name: "fred_series", arguments: { operation: "get", series_id: "GNPCA" } }),
  );
  assert.ok(after["items"], "the same server still answers ordinary calls");
});

Deno.test("fred counts a 100 KB title without spaces and answers with an estimate close to its size", async () => {
  await using fake = startFakeFred();
  const title = "x".repeat(100_000);
  fake.route({
    path: "/fred/series",
    match: (r) => r.url.searchParams.get("series_id") === "LONG",
    reply: { json: { seriess: [{ id: "LONG", title, frequency: "Annual" }] } },
  });
  await using s = await startStdio({ args: ["--providers", "fred"], configYaml: fredConfig(fake.origin) });
  const r = ok(
    await s.client.callTool({ name: "fred_series", arguments: { operation: "get", series_id: "LONG" } }),
  );
  const decision = r["decision"] as Record<string, number> | undefined;
  // cl100k_base writes a run of "x" as 8 characters a token: about 12,500 tokens, not 1 or 100,000.
  const tokens = decision?.["estimated_tokens"] ?? 0;
  assert.ok(tokens > 10_000 && tokens < 20_000, `${tokens} tokens`);
});
