// A hostile upstream (docs/SECURITY.md, "Hostile bodies"): bodies nested past any real answer are refused
// unread with a DECODE_ERROR that blames the upstream, never a stack overflow; text without spaces is counted
// in linear time. Driven through the real MCP client over stdio against a loopback fake FRED.
import assert from "node:assert/strict";
import { errorOf, ok, texts } from "../../harness/results.ts";
import { openProvider } from "../../harness/provider.ts";
import { fredError, startFakeFred, TEST_KEY } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";

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
  await using s = await openProvider(fred({ fake }));
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

Deno.test("fred cuts a 100 KB title without spaces on reading and counts the tokens of what is left", async () => {
  await using fake = startFakeFred();
  const title = "x".repeat(100_000);
  fake.route({
    path: "/fred/series",
    match: (r) => r.url.searchParams.get("series_id") === "LONG",
    reply: { json: { seriess: [{ id: "LONG", title, frequency: "Annual" }] } },
  });
  await using s = await openProvider(fred({ fake }));
  const r = ok(
    await s.client.callTool({ name: "fred_series", arguments: { operation: "get", series_id: "LONG" } }),
  );
  const decision = r["decision"] as Record<string, number> | undefined;
  const shown = String((r["items"] as Record<string, unknown>[])[0]!["title"]);
  assert.match(shown, /^x{899}… \[cut: 100,000 characters in all\]$/);
  // cl100k_base writes a run of "x" as 8 characters a token: the 900 kept make over 100 tokens,
  // not 1 (a run counted as one piece) and not 12,500 (the whole title).
  const tokens = decision?.["estimated_tokens"] ?? 0;
  assert.ok(tokens > 100 && tokens < 1_000, `${tokens} tokens`);
});

/** Every 6-character stretch of the key, found in `text` in any case, encoding or spacing. */
function keyPieces(text: string): string[] {
  let plain = text.replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/\\u([0-9a-f]{4})/gi, (_, h) => String.fromCharCode(parseInt(h, 16)));
  try {
    plain = decodeURIComponent(plain.replace(/%(?![0-9a-f]{2})/gi, "%25"));
  } catch { /* keep the text as it is */ }
  plain = plain.replace(/[\s+]/g, "").toLowerCase();
  const out: string[] = [];
  for (let i = 0; i + 6 <= TEST_KEY.length; i++) {
    if (plain.includes(TEST_KEY.slice(i, i + 6))) out.push(TEST_KEY.slice(i, i + 6));
  }
  return out;
}

Deno.test("fred masks its key in upstream errors before cutting them, in any case, encoding or spacing", async () => {
  await using fake = startFakeFred();
  const echoes = {
    // The key straddling the 500-character cut of FRED's message.
    CUT: `${"x ".repeat(240)}api_key=${TEST_KEY} is not registered`,
    UPPER: `The key ${TEST_KEY.toUpperCase()} is not registered`,
    SPACED: `The key ${[...TEST_KEY].join(" ")} is not registered`,
    ENCODED: `The key ${
      encodeURIComponent(TEST_KEY).replace(/./g, (c) => `%${c.charCodeAt(0).toString(16)}`)
    }`,
    ESCAPED: `The key ${[...TEST_KEY].map((c) => `&#${c.charCodeAt(0)};`).join("")}`,
  };
  fake.route({
    path: "/fred/series",
    match: (r) => (r.url.searchParams.get("series_id") ?? "") in echoes,
    reply: (r) =>
      fredError(400, `Bad Request.  ${echoes[r.url.searchParams.get("series_id") as keyof typeof echoes]}`),
  });
  await using s = await openProvider(fred({ fake }));
  for (const id of Object.keys(echoes)) {
    const r = await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get", series_id: id },
    });
    const e = errorOf(r);
    assert.match(String(e["message"]), /\*\*\*/, `${id}: the echo is reported, masked`);
    const whole = texts(r).join("\n");
    assert.deepEqual(keyPieces(whole), [], `${id}: ${whole.slice(0, 300)}`);
  }
  // The spoof detector itself finds a leak when there is one.
  assert.ok(keyPieces(echoes.SPACED.toUpperCase()).length > 20);
});
