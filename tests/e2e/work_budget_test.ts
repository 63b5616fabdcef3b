// Work proportional to an upstream's size never holds the event loop every session shares
// (docs/SECURITY.md, "Work budgets"): a real HTTP server reads hostile bodies from a loopback fake
// while a victim on another session polls /health and calls example-ping. Before the budgets a
// 600,000-vertex polygon held /health for over 30 s, a 4 MB SNL body for 2.7 s and a FRED title
// of 7.5 million characters for 2.4 s; the bound asserted here leaves room for a loaded machine
// and still fails every one of those. Decoding a big JSON body is bounded more tightly: it runs in
// slices that give the event loop a turn (lib/http/json_sliced.ts), where JSON.parse in one piece
// held the victim 0.5-0.7 s for a 13 MB body of 1.7 million small arrays.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import { connectHttp } from "../harness/provider.ts";
import { withVictim } from "../harness/victim.ts";
import { payloadOf } from "../harness/results.ts";
import type { Received } from "../fakes/upstream.ts";
import {
  bulkyFeature,
  fredSeriesWithTitle,
  HOSTILE_MARKUP,
  OGC_DATASET,
  serveOgcCatalog,
  snlArticleWith,
  spikyPolygonFeature,
} from "../fakes/hostile_bodies.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";

/** The victim's worst /health or example-ping latency allowed while an attack runs. */
const VICTIM_MAX_MS = 1000;
/**
 * The victim's worst latency allowed while the server decodes a 13 MB body and does little else.
 * Measured on a loaded 2-core machine: 55-145 ms with sliced decoding (garbage collection of the
 * decoded value and this process, which also serves the body, take most of it), 490-670 ms with
 * JSON.parse in one piece.
 */
const VICTIM_DECODE_MAX_MS = 250;
/** riksantikvaren-feature's deadline in this test (the `timeout` setting, seconds). */
const OGC_TIMEOUT_S = 20;

Deno.test("hostile bodies cost their own call bounded work while /health and another session stay fast", async (t) => {
  await using fake = startFakeFred();
  serveOgcCatalog(fake);
  fake.route({
    path: `/${OGC_DATASET}/collections/lokaliteter/items/910001`,
    reply: { body: spikyPolygonFeature("910001", 600_000), contentType: "application/geo+json" },
  });
  fake.route({
    path: `/${OGC_DATASET}/collections/lokaliteter/items/910002`,
    reply: { body: bulkyFeature("910002", 1_700_000), contentType: "application/geo+json" },
  });
  const markup = Object.entries(HOSTILE_MARKUP);
  markup.forEach(([, body], i) => {
    fake.route({
      path: `/hostile_${i}.json`,
      reply: { body: snlArticleWith(body()), contentType: "application/json" },
    });
  });
  // Just under the markup bound: read, not refused.
  const under = `<p>${"<a ".repeat(600_000)}</p><p><a href="https://snl.no/x">x</a></p>`;
  fake.route({
    path: "/under.json",
    reply: { body: snlArticleWith(under), contentType: "application/json" },
  });
  fake.route({
    path: "/fred/series",
    match: (r: Received) => r.url.searchParams.get("series_id") === "ABTITLE",
    reply: { body: fredSeriesWithTitle("ABTITLE", "ab ".repeat(2_500_000)), contentType: "application/json" },
  });
  const block = (id: string, timeout = 10) =>
    `  ${id}:\n    base_url: ${fake.origin}\n    max_retries: 0\n    cache_ttl: 0\n    timeout: ${timeout}\n`;
  const home = scratchHome(
    `${fredConfig(fake.origin)}${block("riksantikvaren_ogc", OGC_TIMEOUT_S)}${block("snl")}`,
  );
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({
    args: ["--providers", "fred,example,riksantikvaren_ogc,snl"],
    home,
  });
  const { client: attacker } = await connectHttp(server.origin);
  const { client: victim } = await connectHttp(server.origin);
  type Result = Awaited<ReturnType<typeof attacker.callTool>>;
  let last: Result | undefined;
  const attack = async (name: string, args: Record<string, unknown>, bound = VICTIM_MAX_MS) => {
    const seen = await withVictim(server.origin, victim, async () => {
      last = await attacker.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
      return "done";
    });
    const worst = Math.max(...seen.health, ...seen.ping);
    assert.ok(seen.health.length > 0 && seen.ping.length > 0, "the victim probed during the attack");
    assert.ok(worst < bound, `the victim waited ${worst.toFixed(0)} ms during ${name}`);
    return { result: last!, ms: seen.attackMs };
  };
  const text = (r: Result) => (r.content as { text?: string }[]).map((c) => c.text ?? "").join("\n");
  try {
    await t.step(
      "riksantikvaren-feature on a 600,000-vertex polygon answers simplified within its deadline",
      async () => {
        const { result, ms } = await attack("riksantikvaren-feature", {
          collection: "lokaliteter",
          id: "910001",
        });
        assert.ok(ms < OGC_TIMEOUT_S * 1000, `${ms} ms`);
        assert.equal(result.isError, undefined, text(result).slice(0, 300));
        const feature =
          (result.structuredContent as { feature: { geometry: { coordinates: number[][][] } } }).feature;
        const ring = feature.geometry.coordinates[0]!;
        assert.ok(ring.length >= 4, `${ring.length} positions`);
        assert.deepEqual(ring[0], ring[ring.length - 1]);
        assert.match(text(result), /600000 → \d+ vertices .*after thinning to \d+ vertices/);
      },
    );
    await t.step(
      "riksantikvaren-feature decodes a 13 MB body in slices while the victim stays fast",
      async () => {
        const { result, ms } = await attack(
          "riksantikvaren-feature",
          { collection: "lokaliteter", id: "910002" },
          VICTIM_DECODE_MAX_MS,
        );
        assert.ok(ms < OGC_TIMEOUT_S * 1000, `${ms} ms`);
        assert.equal(result.isError, undefined, text(result).slice(0, 300));
        const feature = (result.structuredContent as { feature: { id: string; geometry: unknown } }).feature;
        assert.equal(feature.id, "910002");
        assert.deepEqual(feature.geometry, { type: "Point", coordinates: [10.75, 59.9] });
      },
    );
    for (const [i, [label]] of markup.entries()) {
      await t.step(`snl-article refuses a 4 MB body of ${label} with a clear error`, async () => {
        const { result } = await attack("snl-article", { slug: `hostile_${i}` });
        assert.equal(result.isError, true);
        const payload = payloadOf(result);
        assert.equal(payload["error_type"], "DECODE_ERROR");
        assert.match(String(payload["message"]), /characters of markup, more than the 2,000,000/);
        assert.match(String(payload["hint"]), /Read the article on its page/);
      });
    }
    await t.step("snl-article reads a 1.8 MB hostile body under the bound and finds its link", async () => {
      const { result } = await attack("snl-article", { slug: "under" });
      assert.equal(result.isError, undefined, text(result).slice(0, 300));
      const s = result.structuredContent as { links: { url: string }[]; has_more: boolean };
      assert.equal(s.has_more, true);
      assert.deepEqual(s.links.map((l) => l.url), ["https://snl.no/x"]);
    });
    await t.step("fred_series cuts a title of 7.5 million characters on reading and says so", async () => {
      const { result } = await attack("fred_series", { operation: "get", series_id: "ABTITLE", fresh: true });
      assert.equal(result.isError, undefined, text(result).slice(0, 300));
      assert.match(text(result), /\[cut: 7,500,000 characters in all\]/);
      assert.ok(JSON.stringify(result).length < 100_000, `${JSON.stringify(result).length} characters`);
    });
  } finally {
    await attacker.close();
    await victim.close();
  }
});
