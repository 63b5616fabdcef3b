// What riksantikvaren_arcgis costs an agent's context (docs/TOOLS.md): the toolset and lean schemas
// (arcgis-query.polygon is an array of [lon, lat] arrays, no tuple), and output: "file" on arcgis-query,
// which pages past the transfer limit up to the cap and is continued from its offset to the end. Against a
// fake kart.ra.no whose layer 7 holds 25 synthetic features and answers at most 3 per request.
import assert from "node:assert/strict";
import { preset, withProvider } from "../../harness/provider.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { errorOf, ok, texts } from "../../harness/results.ts";
import { assertLean, readLinked } from "../_norway.ts";

const BASE = "/arcgis/rest/services/Distribusjon";
const SVC = `${BASE}/Kulturminner20180301/MapServer`;
const N = 25;
const PER_REQUEST = 3;

type Json = Record<string, unknown>;

const LAYER = JSON.parse(fixtureText("ra_arcgis/layer_7.json")) as Json;
const TEMPLATE = JSON.parse(fixtureText("ra_arcgis/query_layer7_all.json")) as Json;

/** Feature i: a small square around a point east of Oslo, with the fixture's attribute names. */
function feature(i: number): Json {
  const x = 10.70 + i * 0.001;
  const y = 59.90;
  const ring = [[x, y], [x, y + 0.0005], [x + 0.0005, y + 0.0005], [x + 0.0005, y], [x, y]];
  return {
    attributes: {
      OBJECTID: 1000 + i,
      navn: `Lokalitet ${i}`,
      kulturminneKategori: "Arkeologisk lokalitet",
      kommune: "0301",
      linkKulturminnesok: `https://kulturminnesok.no/ra/lokalitet/${i}`,
    },
    geometry: { rings: [ring] },
  };
}

/** Layer 7's query, paged by resultOffset with a transfer limit of three; polygons answer one feature. */
function query(r: Received): Reply {
  const q = r.method === "POST" ? new URLSearchParams(r.body) : r.url.searchParams;
  if (q.get("geometryType") === "esriGeometryPolygon") {
    if (q.get("returnCountOnly") === "true") return { json: { count: 1 } };
    return { json: { ...TEMPLATE, features: [feature(0)] } };
  }
  if (q.get("returnCountOnly") === "true") return { json: { count: N } };
  const offset = Number(q.get("resultOffset") ?? 0);
  const n = Math.min(Number(q.get("resultRecordCount") ?? PER_REQUEST), PER_REQUEST);
  const features = Array.from(
    { length: Math.max(0, Math.min(n, N - offset)) },
    (_, k) => feature(offset + k),
  );
  return {
    json: { ...TEMPLATE, features, ...(offset + features.length < N ? { exceededTransferLimit: true } : {}) },
  };
}

/** The riksantikvaren_arcgis provider against its fake layer 7, in process (`spawn: true`: the real process). */
const arcgis = preset({
  provider: "riksantikvaren_arcgis",
  routes: [
    { path: `${SVC}/7`, reply: { json: LAYER } },
    { path: `${SVC}/7/query`, reply: query },
    { method: "POST", path: `${SVC}/7/query`, reply: query },
  ],
  basePath: BASE,
  settings: { max_retries: 0, cache_ttl: 0, max_pages: 2, file_max_features: 10 },
});

function csvIds(text: string): string[] {
  const [head, ...rows] = text.trim().split(/\r?\n/);
  assert.ok(head!.startsWith("object_id,lat,lon,geometry_type,kulturminnesok_url,"), head);
  return rows.map((r) => r.split(",")[0]!);
}

Deno.test("arcgis tools belong to the arcgis toolset and keep the strict-client rules within budget", async () => {
  await assertLean("riksantikvaren_arcgis", "arcgis", { tokens: 1000, chars: 6500 });
});

Deno.test("arcgis-query output file pages past the transfer limit to the cap; its offset writes the rest", async () => {
  await withProvider(arcgis(), async (s, f) => {
    const ids: string[] = [];
    let offset = 0;
    const files: Json[] = [];
    for (let round = 0; round < 5 && offset !== -1; round++) {
      const r = await s.client.callTool({
        name: "arcgis-query",
        arguments: { layer: 7, limit: 2, offset, output: "file" },
      });
      const data = ok(r);
      assert.equal((data["features"] as unknown[]).length, 2, "the answer previews limit features");
      const file = data["file"] as Json;
      files.push(file);
      ids.push(...csvIds((await readLinked(s.client, r)).text));
      const next = /call again with offset=(\d+) and output "file"/.exec(texts(r)[0]!)?.[1];
      offset = next === undefined ? -1 : Number(next);
    }
    assert.deepEqual(files.map((x) => [x["rows"], x["complete"]]), [[10, false], [10, false], [5, true]]);
    assert.deepEqual(
      ids,
      Array.from({ length: N }, (_, i) => String(1000 + i)),
      "every feature once, in order",
    );
    const pages = f.requests.filter((r) =>
      r.url.pathname.endsWith("/query") && !r.url.searchParams.has("returnCountOnly")
    );
    assert.ok(pages.length > 2 * 3, "a file pages past max_pages, which bounds only the answer");
  });
});

Deno.test("arcgis-query output file in JSON is a GeoJSON FeatureCollection with whole geometries", async () => {
  await withProvider(arcgis(), async (s, f) => {
    const r = await s.client.callTool({
      name: "arcgis-query",
      arguments: { layer: 7, output: "file", response_format: "json", where: "kommune='0301'" },
    });
    ok(r);
    const fc = JSON.parse((await readLinked(s.client, r)).text);
    assert.equal(fc.type, "FeatureCollection");
    assert.equal(fc.features.length, 10);
    assert.equal(fc.features[0].geometry.type, "Polygon");
    assert.equal(fc.features[0].properties.navn, "Lokalitet 0");
    assert.match(fc.licence.name, /NLOD/);
    const sent = f.requests.find((x) =>
      x.url.pathname.endsWith("/query") && x.url.searchParams.has("resultOffset")
    )!;
    assert.equal(sent.url.searchParams.get("maxAllowableOffset"), null, "geometries are not generalised");
  });
});

Deno.test("arcgis-query polygon: an array of [lon, lat] arrays is served and checked", async () => {
  await withProvider(arcgis(), async (s) => {
    const ring = [[10.69, 59.89], [10.75, 59.89], [10.75, 59.92], [10.69, 59.92]];
    const r = ok(await s.client.callTool({ name: "arcgis-query", arguments: { layer: 7, polygon: ring } }));
    assert.equal((r["features"] as Json[])[0]!["name"], "Lokalitet 0");
    for (
      const polygon of [[[10.7, 59.9], [10.8, 59.9]], [[10.7, 59.9, 1], [10.8, 59.9], [10.8, 60]], [
        [200, 59],
        [10, 59],
        [10, 60],
      ]]
    ) {
      const e = errorOf(await s.client.callTool({ name: "arcgis-query", arguments: { layer: 7, polygon } }));
      assert.equal(e["field"], "polygon", JSON.stringify(polygon));
    }
  });
});
