// What riksantikvaren_ogc costs an agent's context (docs/TOOLS.md): the toolset and lean schemas
// (riksantikvaren-feature.id is a string, integer ids still pass), output: "file" on riksantikvaren-features
// (every feature up to the cap, continued with the file's cursor to the end) and riksantikvaren-nearby, and
// the opendata_search source whose `next` call works as given. Against a fake api.ra.no that pages 1,500
// synthetic sites like the real one: a bbox answer also holds every record without geometry.
import assert from "node:assert/strict";
import { openProvider, withProvider } from "../../harness/provider.ts";
import type { ProviderSession } from "../../harness/provider.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { ok, texts } from "../../harness/results.ts";
import { assertLean, providerFor, readLinked, searchContext } from "../_norway.ts";

const DS = "LokaliteterEnkeltminnerOgSikringssoner";
const ITEMS = `/${DS}/collections/lokaliteter/items`;
const N = 1500;

type Json = Record<string, unknown>;

/** Site i: a point on a 50-wide grid from (10.70, 59.90); every seventh has no geometry. */
function site(i: number): Json {
  const lon = Math.round((10.70 + (i % 50) * 0.002) * 1e6) / 1e6;
  const lat = Math.round((59.90 + Math.floor(i / 50) * 0.001) * 1e6) / 1e6;
  return {
    type: "Feature",
    id: String(10_000 + i),
    geometry: i % 7 === 3 ? null : { type: "Point", coordinates: [lon, lat] },
    properties: {
      lokalitetID: `L${i}`,
      navn: i % 100 === 0 ? `Kirkested ${i}` : `Sted ${i}`,
      kulturminneKategori: "Arkeologisk lokalitet",
      kommune: "0301",
      informasjon: `Syntetisk lokalitet ${i}, med komma.`,
    },
  };
}

/** The items endpoint: bbox (plus every record without geometry, as api.ra.no does), name filter, paging. */
function items(origin: string) {
  return (r: Received): Reply => {
    const q = r.url.searchParams;
    let all = Array.from({ length: N }, (_, i) => site(i));
    const bbox = q.get("bbox")?.split(",").map(Number);
    if (bbox) {
      all = all.filter((f) => {
        const g = f["geometry"] as { coordinates: number[] } | null;
        if (!g) return true;
        const [x, y] = g.coordinates as [number, number];
        return x >= bbox[0]! && x <= bbox[2]! && y >= bbox[1]! && y <= bbox[3]!;
      });
    }
    const like = /LIKE CASEI\('%(.*)%'\)/.exec(q.get("filter") ?? "")?.[1];
    if (like) {
      all = all.filter((f) =>
        String((f["properties"] as Json)["navn"]).toLowerCase().includes(like.toLowerCase())
      );
    }
    const offset = Number(q.get("offset") ?? 0);
    const limit = Number(q.get("limit") ?? 10);
    const features = all.slice(offset, offset + limit);
    const next = new URL(r.url);
    next.searchParams.set("offset", String(offset + limit));
    return {
      json: {
        type: "FeatureCollection",
        numberMatched: all.length,
        numberReturned: features.length,
        links: offset + limit < all.length
          ? [{ href: `${origin}${next.pathname}${next.search}`, rel: "next", type: "application/geo+json" }]
          : [],
        features,
      },
      contentType: "application/geo+json",
    };
  };
}

/** A site too big for one answer: a ring of 20,000 vertices and a 30,000-character description. */
function hugeSite(): Json {
  const ring: number[][] = [];
  for (let i = 0; i < 20_000; i++) {
    const t = (2 * Math.PI * i) / 20_000;
    ring.push([10.76 + 0.01 * Math.cos(t) * (1 + 0.03 * Math.sin(41 * t)), 59.9 + 0.005 * Math.sin(t)]);
  }
  ring.push(ring[0]!);
  return {
    type: "Feature",
    id: "77777",
    geometry: { type: "Polygon", coordinates: [ring] },
    properties: { navn: "Stort kulturmiljø", informasjon: "x".repeat(30_000), kommune: "0301" },
  };
}

function fake(): FakeUpstream {
  const f = FakeUpstream.start([]);
  f.route({ path: ITEMS, reply: items(f.origin) })
    .route({
      path: /^\/LokaliteterEnkeltminnerOgSikringssoner\/collections\/lokaliteter\/items\/\d+$/,
      reply: (r) => {
        const i = Number(r.url.pathname.split("/").at(-1)) - 10_000;
        return i >= 0 && i < N
          ? { json: site(i), contentType: "application/geo+json" }
          : { status: 404, json: {} };
      },
    });
  // Added last, so it wins over the route of every other id.
  f.route({ path: `${ITEMS}/77777`, reply: { json: hugeSite(), contentType: "application/geo+json" } });
  return f;
}

async function withServer(fn: (s: ProviderSession, f: FakeUpstream) => Promise<void>): Promise<void> {
  await using f = fake();
  await withProvider({
    provider: "riksantikvaren_ogc",
    fake: f,
    settings: { max_retries: 0, cache_ttl: 0, scan_page_size: 500, file_max_features: 1000 },
  }, fn);
}

function csvIds(text: string): string[] {
  const [head, ...rows] = text.trim().split(/\r?\n/);
  assert.ok(head!.startsWith("id,lat,lon,geometry_type,kulturminnesok_url,"), head);
  return rows.map((r) => r.split(",")[0]!);
}

Deno.test("riksantikvaren tools belong to the riksantikvaren toolset and keep the strict-client rules within budget", async () => {
  await assertLean("riksantikvaren_ogc", "riksantikvaren", { tokens: 1100, chars: 8500 });
});

Deno.test("riksantikvaren-features output file stops at the cap with a cursor; the cursor's file holds the rest", async () => {
  await withServer(async (s) => {
    const first = await s.client.callTool({
      name: "riksantikvaren-features",
      arguments: { collection: "lokaliteter", limit: 3, output: "file" },
    });
    const data = ok(first);
    assert.equal((data["features"] as unknown[]).length, 3, "the answer previews one page");
    const file = data["file"] as Json;
    assert.deepEqual([file["rows"], file["complete"]], [1000, false]);
    const cursor = /cursor="([^"]+)" and output "file"/.exec(texts(first)[0]!)?.[1];
    assert.ok(cursor, texts(first)[0]);
    const ids = csvIds((await readLinked(s.client, first)).text);

    const rest = await s.client.callTool({
      name: "riksantikvaren-features",
      arguments: { cursor, output: "file" },
    });
    const restFile = ok(rest)["file"] as Json;
    assert.deepEqual([restFile["rows"], restFile["complete"]], [500, true]);
    const all = [...ids, ...csvIds((await readLinked(s.client, rest)).text)];
    assert.equal(new Set(all).size, N, "nothing lost, nothing repeated");
    assert.equal(all.at(-1), String(10_000 + N - 1));
  });
});

Deno.test("riksantikvaren-features output file in a bbox keeps only located features, as GeoJSON in JSON", async () => {
  await withServer(async (s) => {
    const bbox = [10.70, 59.90, 10.709, 59.9015]; // columns 0-4 of rows 0-1: 10 sites
    const r = await s.client.callTool({
      name: "riksantikvaren-features",
      arguments: { collection: "lokaliteter", bbox, output: "file", response_format: "json" },
    });
    const file = ok(r)["file"] as Json;
    const fc = JSON.parse((await readLinked(s.client, r)).text);
    assert.equal(fc.type, "FeatureCollection");
    assert.equal(fc.complete, true);
    // Sites 3 and 52 have no geometry: api.ra.no sends them (and all others without one) for any bbox.
    const expected = [0, 1, 2, 4, 50, 51, 53, 54].map((i) => String(10_000 + i));
    assert.deepEqual(fc.features.map((f: Json) => f["id"]), expected);
    assert.equal(file["rows"], expected.length);
    assert.equal(fc.features[0].geometry.type, "Point");
    assert.match(fc.licence.name, /NLOD/);
  });
});

Deno.test("riksantikvaren-nearby output file ranks every site within the radius by distance", async () => {
  await withServer(async (s) => {
    const r = await s.client.callTool({
      name: "riksantikvaren-nearby",
      arguments: { lat: 59.905, lon: 10.75, radius_m: 300, output: "file" },
    });
    const data = ok(r);
    const text = (await readLinked(s.client, r)).text.trim().split(/\r?\n/);
    const columns = text[0]!.split(",");
    const at = columns.indexOf("distance_m");
    assert.ok(at > 0, text[0]);
    const distances = text.slice(1).map((row) => Number(row.split(",")[at]));
    assert.equal(distances.length, data["total"]);
    assert.ok(distances.length > 10);
    assert.ok(distances.every((d, i) => d <= 300 && (i === 0 || distances[i - 1]! <= d)), "nearest first");
  });
});

Deno.test("riksantikvaren-feature takes the id as a string, and an integer id as old callers sent it", async () => {
  await withServer(async (s) => {
    for (const id of ["10042", 10042]) {
      const r = ok(
        await s.client.callTool({
          name: "riksantikvaren-feature",
          arguments: { collection: "lokaliteter", id },
        }),
      );
      assert.equal((r["feature"] as Json)["id"], "10042");
    }
  });
});

Deno.test("riksantikvaren-feature cut to fit says so, and output file holds the whole feature", async () => {
  await withServer(async (s) => {
    const args = { collection: "lokaliteter", id: "77777" };
    const cut = await s.client.callTool({ name: "riksantikvaren-feature", arguments: args });
    ok(cut);
    assert.match(texts(cut)[0]!, /Cut to fit .*call again with output "file" for the whole feature/);
    const r = await s.client.callTool({
      name: "riksantikvaren-feature",
      arguments: { ...args, output: "file" },
    });
    ok(r);
    const fc = JSON.parse((await readLinked(s.client, r)).text);
    const whole = hugeSite();
    assert.deepEqual(fc.features[0].geometry, whole["geometry"], "every vertex");
    assert.equal(fc.features[0].properties.informasjon.length, 30_000, "every character");
  });
});

Deno.test("riksantikvaren search source: sites by name, each next call works as given", async () => {
  await using f = fake();
  const provider = await providerFor("riksantikvaren_ogc", {
    base_url: f.origin,
    cache_ttl: 0,
    max_retries: 0,
  });
  const hits = await provider.search!.search("kirkested", { limit: 4 }, searchContext());
  assert.deepEqual(hits.map((h) => h.title), [
    "Kirkested 0",
    "Kirkested 100",
    "Kirkested 200",
    "Kirkested 300",
  ]);
  const sent = f.requests.at(-1)!.url.searchParams;
  assert.equal(sent.get("filter"), "CASEI(navn) LIKE CASEI('%kirkested%')");
  assert.equal(sent.get("limit"), "4");
  assert.deepEqual(hits[1]!.next, {
    tool: "riksantikvaren-feature",
    arguments: { collection: "lokaliteter", id: "10100" },
  });
  assert.match(hits[1]!.snippet!, /Arkeologisk lokalitet/);
  await provider.close?.();

  await using s = await openProvider({ provider: "riksantikvaren_ogc", fake: f, settings: { cache_ttl: 0 } });
  const feature = ok(
    await s.client.callTool({ name: hits[1]!.next.tool, arguments: hits[1]!.next.arguments }),
  );
  assert.equal((feature["feature"] as Json)["name"], "Kirkested 100");
});
