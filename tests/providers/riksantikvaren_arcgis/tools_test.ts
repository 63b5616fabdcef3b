import { payloadOf, providerTools } from "../../harness/results.ts";
// The arcgis-* tools end to end: the real server over stdio against a fake kart.ra.no serving
// the fixtures of tests/fixtures/ra_arcgis/ (synthetic bodies plus real ArcGIS error bodies).
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import type { ProviderSession } from "../../harness/provider.ts";
import { FakeUpstream, fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";

const BASE = "/arcgis/rest/services/Distribusjon";
const SVC = `${BASE}/Kulturminner20180301/MapServer`;
const CENTER = { lat: 59.9075, lon: 10.7637 };
/** The server's transfer limit in the fake (maxRecordCount). */
const MAX_RECORDS = 3;

type Json = Record<string, unknown>;

async function call(s: ProviderSession, name: string, args: Json) {
  const r = await s.client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text: string }[];
  return {
    isError: r.isError === true,
    text: content[0]?.text ?? "",
    structured: (r.structuredContent ?? {}) as Json,
    payload: (r.isError ? payloadOf(r) : {}) as Json,
  };
}

function json(name: string): unknown {
  return JSON.parse(fixtureText(`ra_arcgis/${name}`));
}

/** The real ArcGIS error bodies (recorded from ArcGIS Online), each sent with HTTP 200. */
const REAL_ERRORS = (json("generic_arcgis_error_bodies_epcor_NOT_kart_ra_no.json") as {
  responses: { body: unknown }[];
}).responses.map((r) => r.body);

/** Layer 7's query: slices of the fixture, never more than the transfer limit per answer. */
function layer7Query(req: Received): Reply {
  const q = req.method === "POST" ? new URLSearchParams(req.body) : req.url.searchParams;
  if (q.get("f") !== "json") {
    return { json: { error: { code: 400, message: "f=json expected", details: [] } } };
  }
  if ((q.get("where") ?? "").includes("BOGUS")) return { json: REAL_ERRORS[0] };
  const all = (json("query_layer7_all.json") as { features: unknown[] }).features;
  if (q.get("returnCountOnly") === "true") return { json: { count: all.length } };
  const offset = Number(q.get("resultOffset") ?? 0);
  const asked = Number(q.get("resultRecordCount") ?? MAX_RECORDS);
  const n = Math.min(asked, MAX_RECORDS);
  const slice = all.slice(offset, offset + n);
  const body = { ...(json("query_layer7_all.json") as Json), features: slice } as Json;
  // As ArcGIS does when paging: the flag says more features follow this page.
  if (offset + slice.length < all.length) body["exceededTransferLimit"] = true;
  return { json: body };
}

Deno.test("riksantikvaren_arcgis tools over stdio against a fake kart.ra.no", async (t) => {
  await using fake = FakeUpstream.start([]);
  fake.route({ path: BASE, reply: { json: json("folder_distribusjon.json") } })
    .route({ path: SVC, reply: { json: json("service_Kulturminner20180301.json") } })
    .route({
      path: `${BASE}/FjernmalteArkeologiskeKulturminner/MapServer`,
      reply: { json: json("service_FjernmalteArkeologiskeKulturminner.json") },
    })
    .route({ path: `${SVC}/7`, reply: { json: json("layer_7.json") } })
    .route({ path: `${SVC}/99`, reply: { json: REAL_ERRORS[1] } })
    .route({ path: `${BASE}/NoSuchService/MapServer`, reply: { json: REAL_ERRORS[2] } })
    .route({ path: `${SVC}/7/query`, reply: layer7Query })
    .route({ method: "POST", path: `${SVC}/7/query`, reply: layer7Query })
    .route({
      path: `${SVC}/6/query`,
      reply: (req) =>
        req.url.searchParams.get("returnCountOnly") === "true"
          ? { json: json("generic_arcgis_error_validateSQL_services_arcgis_com_NOT_kart_ra_no.json") }
          : { json: { fields: [], features: [{ attributes: { OBJECTID: 1, navn: "Uten telling" } }] } },
    })
    .route({
      path: `${SVC}/5/query`,
      reply: (req) =>
        req.url.searchParams.get("returnCountOnly") === "true"
          ? { json: { count: 7 } }
          : { json: json("query_layer7_all.json") },
    })
    // Layer 4 has no pagination: it ignores resultOffset and answers from its first feature.
    .route({
      path: `${SVC}/4`,
      reply: {
        json: {
          ...(json("layer_7.json") as Json),
          id: 4,
          name: "Uten paging",
          advancedQueryCapabilities: { supportsPagination: false },
        },
      },
    })
    .route({
      path: `${SVC}/4/query`,
      reply: (req) => {
        if (req.url.searchParams.get("returnCountOnly") === "true") return { json: { count: 7 } };
        const all = (json("query_layer7_all.json") as { features: Json[] }).features;
        // out_fields without OBJECTID: nothing to recognise a repeated feature by.
        const first = all.slice(0, MAX_RECORDS).map((f) => ({
          attributes: { navn: (f["attributes"] as Json)["navn"] },
        }));
        return { json: { features: first, exceededTransferLimit: true } };
      },
    })
    // Layer 9 says nothing about pagination and ignores resultOffset (two features a page).
    .route({
      path: `${SVC}/9/query`,
      reply: (req) => {
        if (req.url.searchParams.get("returnCountOnly") === "true") return { json: { count: 7 } };
        const all = (json("query_layer7_all.json") as { features: Json[] }).features;
        return {
          json: {
            ...(json("query_layer7_all.json") as Json),
            features: all.slice(0, 2),
            exceededTransferLimit: true,
          },
        };
      },
    })
    .route({
      path: `${SVC}/8/query`,
      reply: { status: 500, json: { error: { code: 500, message: "Server busy" } } },
    })
    .route({
      path: `${SVC}/identify`,
      // A point east of 30° (lat and lon swapped for Norway) is in the sea: nothing there.
      reply: (req) =>
        (JSON.parse(req.url.searchParams.get("geometry") ?? "{}") as { x?: number }).x! > 40
          ? { json: { results: [] } }
          : { json: json("identify_point.json") },
    });
  // The provider's smoke test through the real process (the others run the server in process).
  await using s = await openProvider({
    spawn: true,
    provider: "riksantikvaren_arcgis",
    fake,
    basePath: BASE,
    settings: { max_retries: 0, cache_ttl: 0 },
  });

  await t.step(
    "tools/list serves the three tools with read-only annotations and output schemas",
    async () => {
      const tools = providerTools((await s.client.listTools()).tools);
      assert.deepEqual(tools.map((x) => x.name), ["arcgis-services", "arcgis-query", "arcgis-identify"]);
      for (const tool of tools) {
        assert.equal(tool.annotations?.readOnlyHint, true);
        assert.equal(tool.annotations?.destructiveHint, false);
        assert.ok(tool.outputSchema);
      }
    },
  );

  await t.step("arcgis-services lists the folder's services with their layers", async () => {
    const r = await call(s, "arcgis-services", { response_format: "json" });
    assert.equal(r.isError, false, r.text);
    const services = r.structured["services"] as Json[];
    assert.deepEqual(services.map((x) => x["name"]), [
      "Kulturminner20180301",
      "FjernmalteArkeologiskeKulturminner",
      "Geometriservice",
    ]);
    const layers = services[0]!["layers"] as Json[];
    assert.equal(layers.find((l) => l["id"] === 7)!["name"], "Lokaliteter");
    assert.equal(layers.find((l) => l["id"] === 7)!["geometry_type"], "esriGeometryPolygon");
    assert.equal(services[0]!["max_record_count"], MAX_RECORDS);
    assert.equal(services[2]!["layers"], null, "a GeometryServer has no layers to list");
    assert.equal(r.structured["level"], "folder");
    const md = await call(s, "arcgis-services", {});
    assert.match(md.text, /## Kulturminner20180301 \(MapServer\)/);
    assert.match(md.text, /\| 7 \| Lokaliteter \| Feature Layer \| esriGeometryPolygon \| 3 \|/);
    assert.match(md.text, /Licence: NLOD 2\.0/);
  });

  await t.step("arcgis-services describes one layer's fields and transfer limit", async () => {
    const r = await call(s, "arcgis-services", {
      service: "Distribusjon/Kulturminner20180301",
      layer: 7,
      response_format: "json",
    });
    assert.equal(r.isError, false, r.text);
    const layer = r.structured["layer"] as Json;
    assert.equal(layer["display_field"], "navn");
    assert.equal(layer["max_record_count"], MAX_RECORDS);
    assert.equal(layer["supports_pagination"], true);
    assert.ok((layer["fields"] as Json[]).some((f) => f["name"] === "kulturminneKategori"));
    const md = await call(s, "arcgis-services", { service: "Kulturminner20180301", layer: 7 });
    assert.match(md.text, /\| linkKulturminnesok \| String \| Link Kulturminnesøk \|/);
  });

  await t.step("arcgis-services turns ArcGIS errors sent with HTTP 200 into NOT_FOUND", async () => {
    const layer = await call(s, "arcgis-services", { service: "Kulturminner20180301", layer: 99 });
    assert.equal(layer.isError, true);
    assert.equal(layer.payload["error_type"], "NOT_FOUND");
    assert.match(String(layer.payload["message"]), /sent with HTTP 200.*layerId: 99\) was not found/);
    const service = await call(s, "arcgis-services", { service: "NoSuchService" });
    assert.equal(service.payload["error_type"], "NOT_FOUND");
    assert.match(String(service.payload["message"]), /Invalid URL/);
    const bad = await call(s, "arcgis-services", { service: "../../admin" });
    assert.equal(bad.payload["error_type"], "VALIDATION_ERROR");
    assert.equal(bad.payload["field"], "service");
    const layerOnly = await call(s, "arcgis-services", { layer: 7 });
    assert.equal(layerOnly.payload["field"], "layer");
  });

  await t.step("arcgis-query pages past the transfer limit and reports the envelope", async () => {
    const before = fake.requestsTo(`${SVC}/7/query`).length;
    const r = await call(s, "arcgis-query", { layer: 7, limit: 5, response_format: "json" });
    assert.equal(r.isError, false, r.text);
    const st = r.structured;
    assert.deepEqual([st["total"], st["count"], st["offset"], st["has_more"], st["next_offset"]], [
      7,
      5,
      0,
      true,
      5,
    ]);
    assert.equal(st["total_is_exact"], true);
    assert.equal(st["upstream_requests"], 2);
    assert.equal(st["exceeded_transfer_limit"], true);
    assert.equal(st["layer_name"], "Lokaliteter");
    const pages = fake.requestsTo(`${SVC}/7/query`).slice(before).map((x) => x.url.searchParams)
      .filter((q) => q.get("returnCountOnly") !== "true");
    assert.deepEqual(pages.map((q) => [q.get("resultOffset"), q.get("resultRecordCount")]), [["0", "5"], [
      "3",
      "2",
    ]]);
    assert.equal(pages[0]!.get("outSR"), "4326");
    assert.equal(pages[0]!.get("where"), "1=1");
    const fs = st["features"] as Json[];
    assert.deepEqual(fs.map((f) => f["object_id"]), ["101", "102", "103", "104", "105"]);
    const f = fs[0]!;
    assert.equal(f["name"], "Testlokalitet 1");
    assert.equal(f["protection"], "Automatisk fredet, KML § 4");
    assert.equal(f["kulturminnesok_url"], "https://kulturminnesok.no/ra/lokalitet/22200");
    assert.equal(
      (f["attributes"] as Json)["forsteDigitaliseringsdato"],
      "2010-01-01",
      "dates read as YYYY-MM-DD",
    );
    assert.ok(
      Math.abs((f["lat"] as number) - CENTER.lat) < 1e-4 &&
        Math.abs((f["lon"] as number) - CENTER.lon) < 1e-4,
    );
    assert.equal(f["geometry_type"], "Polygon");
    assert.equal(
      fs[3]!["kulturminnesok_url"],
      "https://kulturminnesok.no/ra/lokalitet/22203",
      "built from lokalId",
    );

    const rest = await call(s, "arcgis-query", { layer: 7, limit: 5, offset: 5, response_format: "json" });
    assert.deepEqual(
      [rest.structured["count"], rest.structured["has_more"], rest.structured["next_offset"]],
      [2, false, null],
    );
    assert.equal(rest.structured["upstream_requests"], 1);
    const md = await call(s, "arcgis-query", { layer: 7, limit: 2 });
    assert.match(md.text, /Features 1–2 of 7 for where 1=1/);
    assert.match(md.text, /### 1\. Testlokalitet 1/);
    assert.match(md.text, /More: call again with offset=2/);
  });

  await t.step("arcgis-query sends geometry filters in WGS 84 and Esri ring order", async () => {
    const before = fake.requestsTo(`${SVC}/7/query`).length;
    await call(s, "arcgis-query", {
      layer: 7,
      bbox: [10.75, 59.9, 10.78, 59.92],
      spatial_relation: "contains",
    });
    await call(s, "arcgis-query", { layer: 7, point: CENTER, distance_m: 250 });
    const ccw = [[10.76, 59.90], [10.77, 59.90], [10.77, 59.91], [10.76, 59.91]];
    await call(s, "arcgis-query", {
      layer: 7,
      polygon: ccw,
      out_fields: ["navn", "kommune"],
      order_by: "navn DESC",
    });
    // The first page of each call (the fake's transfer limit makes each call read several).
    const sent = fake.requestsTo(`${SVC}/7/query`).slice(before).map((x) => x.url.searchParams)
      .filter((q) => q.get("returnCountOnly") !== "true" && q.get("resultOffset") === "0");
    assert.equal(sent.length, 3);
    assert.equal(sent[0]!.get("geometryType"), "esriGeometryEnvelope");
    assert.deepEqual(JSON.parse(sent[0]!.get("geometry")!), {
      xmin: 10.75,
      ymin: 59.9,
      xmax: 10.78,
      ymax: 59.92,
      spatialReference: { wkid: 4326 },
    });
    assert.equal(sent[0]!.get("spatialRel"), "esriSpatialRelContains");
    assert.equal(sent[0]!.get("inSR"), "4326");
    assert.deepEqual(JSON.parse(sent[1]!.get("geometry")!), {
      x: 10.7637,
      y: 59.9075,
      spatialReference: { wkid: 4326 },
    });
    assert.deepEqual([sent[1]!.get("distance"), sent[1]!.get("units")], ["250", "esriSRUnit_Meter"]);
    const ring = JSON.parse(sent[2]!.get("geometry")!).rings[0] as number[][];
    assert.equal(ring.length, 5, "the ring is closed");
    assert.deepEqual(ring[1], [10.76, 59.91], "a counter-clockwise ring is sent clockwise");
    assert.equal(sent[2]!.get("outFields"), "navn,kommune");
    assert.equal(sent[2]!.get("orderByFields"), "navn DESC");
  });

  await t.step("arcgis-query POSTs a polygon too long for a URL", async () => {
    const before = fake.requests.length;
    const n = 400;
    const polygon = Array.from({ length: n }, (_, i) => {
      const a = (2 * Math.PI * i) / n;
      return [10.7637 + 0.01 * Math.cos(a), 59.9075 + 0.005 * Math.sin(a)];
    });
    const r = await call(s, "arcgis-query", { layer: 7, polygon, limit: 2 });
    assert.equal(r.isError, false, r.text);
    const posts = fake.requests.slice(before).filter((x) => x.method === "POST");
    assert.ok(posts.length >= 1);
    assert.match(posts[0]!.headers.get("content-type") ?? "", /x-www-form-urlencoded/);
    assert.equal(new URLSearchParams(posts[0]!.body).get("geometryType"), "esriGeometryPolygon");
  });

  await t.step("arcgis-query reports an ArcGIS error sent with HTTP 200 as an error", async () => {
    const r = await call(s, "arcgis-query", { layer: 7, where: "BOGUS(" });
    assert.equal(r.isError, true);
    assert.equal(r.payload["error_type"], "API_ERROR");
    assert.equal(r.payload["status"], 400);
    assert.equal(r.payload["retryable"], false);
    assert.match(
      String(r.payload["message"]),
      /code 400, sent with HTTP 200\): Cannot perform query\. Invalid query parameters; 'where' parameter is invalid/,
    );
    assert.match(r.text, /Next step: Check where/);
  });

  await t.step("arcgis-query keeps the page size when the server ignores resultRecordCount", async () => {
    const r = await call(s, "arcgis-query", { layer: 5, limit: 2, response_format: "json" });
    assert.equal(r.isError, false, r.text);
    // A server that ignores resultRecordCount ignores resultOffset too: offset 2 would repeat.
    assert.deepEqual([r.structured["count"], r.structured["has_more"], r.structured["next_offset"]], [
      2,
      true,
      null,
    ]);
    assert.match((r.structured["warnings"] as string[]).join(" "), /more features than asked/);
    assert.match((r.structured["warnings"] as string[]).join(" "), /does not support paging/);
    const next = await call(s, "arcgis-query", { layer: 5, limit: 2, offset: 2 });
    assert.equal(next.payload["error_type"], "VALIDATION_ERROR");
    assert.equal(next.payload["field"], "offset");
  });

  await t.step("arcgis-query never repeats the first features of a layer without pagination", async () => {
    const before = fake.requestsTo(`${SVC}/4/query`).length;
    const r = await call(s, "arcgis-query", { layer: 4, limit: 5, response_format: "json" });
    assert.equal(r.isError, false, r.text);
    const names = (r.structured["features"] as Json[]).map((f) => f["name"]);
    assert.deepEqual(names, ["Testlokalitet 1", "Testlokalitet 2", "Testlokalitet 3"]);
    assert.deepEqual([r.structured["total"], r.structured["has_more"], r.structured["next_offset"]], [
      7,
      true,
      null,
    ]);
    assert.match((r.structured["warnings"] as string[]).join(" "), /Layer 4 does not support paging/);
    const pages = fake.requestsTo(`${SVC}/4/query`).slice(before)
      .filter((x) => x.url.searchParams.get("returnCountOnly") !== "true");
    assert.equal(pages.length, 1, "no second page is asked of a layer that cannot page");
    const md = await call(s, "arcgis-query", { layer: 4, limit: 5 });
    assert.doesNotMatch(md.text, /call again with offset/);

    for (const layer of [4, 9]) {
      const later = await call(s, "arcgis-query", { layer, limit: 4, offset: 3 });
      assert.equal(later.isError, true, `layer ${layer}`);
      assert.equal(later.payload["error_type"], "VALIDATION_ERROR");
      assert.equal(later.payload["field"], "offset");
      assert.match(String(later.payload["message"]), /does not support paging/);
    }
  });

  await t.step("arcgis-query goes on without a count and says the total is a lower bound", async () => {
    const r = await call(s, "arcgis-query", { layer: 6, response_format: "json" });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured["total_is_exact"], false);
    assert.deepEqual([r.structured["total"], r.structured["count"], r.structured["has_more"]], [1, 1, false]);
  });

  await t.step("arcgis-query maps an HTTP 500 with an ArcGIS body to a retryable error", async () => {
    const r = await call(s, "arcgis-query", { layer: 8 });
    assert.equal(r.payload["error_type"], "API_ERROR");
    assert.equal(r.payload["retryable"], true);
    assert.match(String(r.payload["message"]), /Server busy/);
  });

  await t.step("arcgis-query rejects bad arguments naming the field", async () => {
    const before = fake.requests.length;
    const bad: [Json, string][] = [
      [{}, "layer"],
      [{ layer: 7, bbox: [10.8, 59.9, 10.7, 59.95] }, "bbox"],
      [{ layer: 7, bbox: [10.7, 59.9, 10.8, 59.95], point: CENTER }, "bbox"],
      [{ layer: 7, distance_m: 100 }, "distance_m"],
      [{ layer: 7, point: { lat: 59.9 } }, "point"],
      [{ layer: 7, polygon: [[10.7, 59.9], [10.8, 95]] }, "polygon"],
      [{ layer: 7, out_fields: ["navn; DROP"] }, "out_fields"],
      [{ layer: 7, order_by: "navn; --" }, "order_by"],
      [{ layer: 7, spatial_relation: "near" }, "spatial_relation"],
      [{ layer: 7, limit: 201 }, "limit"],
    ];
    for (const [args, field] of bad) {
      const r = await call(s, "arcgis-query", args);
      assert.equal(r.payload["error_type"], "VALIDATION_ERROR", JSON.stringify(args));
      assert.equal(r.payload["field"], field, JSON.stringify(args));
    }
    assert.equal(fake.requests.length, before);
  });

  await t.step("arcgis-identify finds features across layers, nearest first", async () => {
    const r = await call(s, "arcgis-identify", { ...CENTER, tolerance_m: 50, response_format: "json" });
    assert.equal(r.isError, false, r.text);
    const fs = r.structured["features"] as Json[];
    assert.deepEqual(fs.map((f) => f["layer_name"]), ["Lokaliteter", "Enkeltminner", "FredaBygninger"]);
    assert.equal(fs[0]!["distance_m"], 0);
    assert.ok(Math.abs((fs[1]!["distance_m"] as number) - 30) < 1.5, String(fs[1]!["distance_m"]));
    assert.ok(Math.abs((fs[2]!["distance_m"] as number) - 60) < 1.5);
    assert.equal(fs[2]!["category"], "Bygning – Våningshus");
    assert.equal(fs[2]!["kulturminnesok_url"], null, '"Null" is no link');
    assert.equal((fs[0]!["attributes"] as Json)["forsteDigitaliseringsdato"], null);
    assert.equal(
      fs[1]!["kulturminnesok_url"],
      "https://kulturminnesok.no/ra/lokalitet/22200",
      "from lokalId 22200-1",
    );
    const q = fake.requestsTo(`${SVC}/identify`).at(-1)!.url.searchParams;
    assert.equal(q.get("layers"), "all");
    assert.equal(q.get("tolerance"), "10");
    assert.equal(q.get("imageDisplay"), "200,200,96");
    assert.equal(q.get("sr"), "4326");
    // 10 px of a 200 px image over the extent must be the 50 m tolerance: the extent is 1 km high.
    const [, ymin, , ymax] = q.get("mapExtent")!.split(",").map(Number);
    assert.ok(Math.abs((ymax! - ymin!) * 111_195 - 1000) < 2, `extent height ${(ymax! - ymin!) * 111_195} m`);
    const md = await call(s, "arcgis-identify", { ...CENTER, layers: [6, 7], limit: 1 });
    assert.equal(fake.requestsTo(`${SVC}/identify`).at(-1)!.url.searchParams.get("layers"), "all:6,7");
    assert.match(md.text, /3 found; nearest first/);
    assert.match(md.text, /### 1\. Testlokalitet 1/);
    assert.match(md.text, /More: call again with offset=1/);
  });

  await t.step(
    "arcgis-identify includes a simplified geometry when asked and validates lat and lon",
    async () => {
      const r = await call(s, "arcgis-identify", {
        ...CENTER,
        include_geometry: true,
        response_format: "json",
      });
      const g = (r.structured["features"] as Json[])[0]!["geometry"] as {
        type: string;
        coordinates: number[][][];
      };
      assert.equal(g.type, "Polygon");
      assert.equal(g.coordinates[0]!.length, 5);
      const bad = await call(s, "arcgis-identify", { lat: 10.7637, lon: 259.9 });
      assert.equal(bad.payload["field"], "lon");
    },
  );

  await t.step("arcgis-identify hints at swapped lat and lon instead of a larger tolerance", async () => {
    const swapped = await call(s, "arcgis-identify", { lat: CENTER.lon, lon: CENTER.lat });
    assert.equal(swapped.isError, false, swapped.text);
    assert.match(swapped.text, /Nothing found here\. lat 10\.7637, lon 59\.9075 lies outside Norway/);
    assert.match(swapped.text, /Did you mean lat 59\.9075, lon 10\.7637\?/);
    assert.doesNotMatch(swapped.text, /larger tolerance_m/);
    const json = await call(s, "arcgis-identify", {
      lat: CENTER.lon,
      lon: CENTER.lat,
      response_format: "json",
    });
    assert.match((json.structured["warnings"] as string[])[0]!, /lies outside Norway/);
    const right = await call(s, "arcgis-identify", { ...CENTER, response_format: "json" });
    assert.deepEqual(right.structured["warnings"], []);
  });

  await t.step(
    "arcgis-query hints at a swapped point, bbox or polygon and says which order it takes",
    async () => {
      const cases: [Json, RegExp][] = [
        [
          { point: { lat: CENTER.lon, lon: CENTER.lat }, distance_m: 100 },
          /point\.lat 10\.7637, point\.lon 59\.9075 lies outside Norway.*Did you mean point\.lat 59\.9075, point\.lon 10\.7637\?/,
        ],
        [
          { bbox: [59.905, 10.76, 59.912, 10.77] },
          /read as \[lat, lon\].*\[min_lon, min_lat, max_lon, max_lat\].*Did you mean \[10\.76, 59\.905, 10\.77, 59\.912\]\?/,
        ],
        [
          { polygon: [[59.90, 10.76], [59.90, 10.77], [59.91, 10.77]] },
          /positions are \[lon, lat\].*Did you mean \[10\.76, 59\.9\] for the first one/,
        ],
      ];
      for (const [filter, hint] of cases) {
        const r = await call(s, "arcgis-query", { layer: 7, ...filter, response_format: "json" });
        assert.equal(r.isError, false, r.text);
        assert.match((r.structured["warnings"] as string[]).join(" "), hint, JSON.stringify(filter));
        const md = await call(s, "arcgis-query", { layer: 7, ...filter });
        assert.match(md.text, /Note: .*outside Norway/);
      }
      const right = await call(s, "arcgis-query", {
        layer: 7,
        point: CENTER,
        distance_m: 100,
        response_format: "json",
      });
      assert.doesNotMatch((right.structured["warnings"] as string[]).join(" "), /outside Norway/);
    },
  );
});

Deno.test("arcgis-* with the cache on and a small call deadline: fresh, odd bodies, slow pages", async (t) => {
  let pages = 0;
  let flaky = 0;
  // Query pages at or past this offset wait for `hold` (a page that does not come in time).
  let hold: PromiseWithResolvers<void> | null = null;
  const release = (): void => {
    hold?.resolve();
    hold = null;
  };
  await using fake = FakeUpstream.start([]);
  fake.route({
    path: `${SVC}/7/query`,
    reply: (req) => {
      if (req.url.searchParams.get("returnCountOnly") === "true") return { json: { count: 1 } };
      return pages++ === 0
        ? { json: { error: { code: 500, message: "Service temporarily unavailable", details: [] } } }
        : { json: { features: [{ attributes: { OBJECTID: 1, navn: "Etter feil" } }] } };
    },
  })
    .route({ path: SVC, reply: { json: json("service_Kulturminner20180301.json") } })
    .route({ path: `${SVC}/5`, reply: { json: json("layer_7.json") } })
    .route({
      path: `${SVC}/5/query`,
      reply: async (req) => {
        const q = req.url.searchParams;
        if (q.get("returnCountOnly") === "true") return { json: { count: 7 } };
        if (hold && Number(q.get("resultOffset")) > 0) await hold.promise;
        return layer7Query(req);
      },
    })
    // Bodies of the wrong shape, each sent with HTTP 200.
    .route({ path: BASE, reply: { json: null } })
    .route({ path: `${BASE}/Odd/MapServer`, reply: { json: [1, 2] } })
    .route({ path: `${BASE}/Odd/MapServer/identify`, reply: { json: null } })
    .route({ path: `${BASE}/Odd/MapServer/3`, reply: { json: json("layer_7.json") } })
    .route({
      path: `${BASE}/Odd/MapServer/3/query`,
      reply: (req) =>
        req.url.searchParams.get("returnCountOnly") === "true"
          ? { json: { count: "many" } }
          : flaky++ === 0
          ? { json: { features: "none" } }
          : { json: { features: [{ attributes: { OBJECTID: 9, navn: "Nå riktig" } }] } },
    })
    .route({ path: `${BASE}/Odd/MapServer/4/query`, reply: { json: [] } });
  await using s = await openProvider({
    provider: "riksantikvaren_arcgis",
    fake,
    basePath: BASE,
    settings: { timeout: 10, max_retries: 0, cache_ttl: 600, breaker_threshold: 50, deadline_margin_ms: 300 },
    env: { MCP_CALL_TIMEOUT: "1.5" },
  });

  try {
    await t.step("ArcgisClient does not keep an ArcGIS error body: the next call asks again", async () => {
      const first = await call(s, "arcgis-query", { layer: 7 });
      assert.equal(first.payload["error_type"], "API_ERROR");
      assert.equal(first.payload["retryable"], true);
      const second = await call(s, "arcgis-query", { layer: 7, response_format: "json" });
      assert.equal(second.isError, false, second.text);
      assert.equal((second.structured["features"] as Json[])[0]!["name"], "Etter feil");
      assert.equal(pages, 2, "the error was not cached; the answer after it is");
      await call(s, "arcgis-query", { layer: 7 });
      assert.equal(pages, 2);
    });

    await t.step("arcgis-query and arcgis-services take fresh: true past the cache", async () => {
      await call(s, "arcgis-query", { layer: 7, fresh: true });
      assert.equal(pages, 3, "fresh: true reached the upstream");
      await call(s, "arcgis-query", { layer: 7 });
      assert.equal(pages, 3, "without it the cached answer is used");
      const svc = () => fake.requestsTo(SVC).length;
      await call(s, "arcgis-services", { service: "Kulturminner20180301" });
      await call(s, "arcgis-services", { service: "Kulturminner20180301" });
      assert.equal(svc(), 1, "cached");
      const r = await call(s, "arcgis-services", { service: "Kulturminner20180301", fresh: true });
      assert.equal(r.isError, false, r.text);
      assert.equal(svc(), 2, "fresh: true reached the upstream");
    });

    await t.step("the arcgis-* tools answer DECODE_ERROR for bodies of the wrong shape", async () => {
      const cases: [string, Json, RegExp][] = [
        ["arcgis-services", {}, /the service folder: it sent null where an object was expected/],
        ["arcgis-services", { service: "Odd" }, /service "Odd": it sent an array/],
        ["arcgis-query", { service: "Odd", layer: 4 }, /layer 4 of "Odd": it sent an array/],
        ["arcgis-query", { service: "Odd", layer: 3 }, /its "features" is a string, not a list/],
        ["arcgis-identify", { service: "Odd", ...CENTER }, /it sent null where an object was expected/],
      ];
      for (const [tool, args, message] of cases) {
        const r = await call(s, tool, args);
        assert.equal(r.payload["error_type"], "DECODE_ERROR", `${tool} ${JSON.stringify(args)}: ${r.text}`);
        assert.match(String(r.payload["message"]), message);
        assert.doesNotMatch(r.text, /No features|Nothing found/);
      }
      // Not kept in the cache: the next call asks again and gets the good body.
      const again = await call(s, "arcgis-query", { service: "Odd", layer: 3, response_format: "json" });
      assert.equal(again.isError, false, again.text);
      assert.equal((again.structured["features"] as Json[])[0]!["name"], "Nå riktig");
      assert.equal(again.structured["total_is_exact"], false, "a count that is not a number is no count");
    });

    await t.step(
      "arcgis-query answers the pages it read before the call deadline, with next_offset",
      async () => {
        hold = Promise.withResolvers<void>();
        const r = await call(s, "arcgis-query", { layer: 5, limit: 7, response_format: "json" });
        assert.equal(r.isError, false, r.text);
        assert.equal(r.structured["count"], MAX_RECORDS, "the first page");
        assert.deepEqual([r.structured["has_more"], r.structured["next_offset"]], [true, MAX_RECORDS]);
        assert.match(
          (r.structured["warnings"] as string[]).join(" "),
          /Stopped after 1 page to answer within the server's time limit for one call; continue with next_offset/,
        );
        release();
        const rest = await call(s, "arcgis-query", {
          layer: 5,
          offset: MAX_RECORDS,
          limit: 4,
          response_format: "json",
        });
        assert.equal(rest.structured["count"], 4);
        assert.equal(rest.structured["has_more"], false);
      },
    );

    await t.step("arcgis-query answers a structured TIMEOUT when not even the first page comes", async () => {
      hold = Promise.withResolvers<void>();
      const r = await call(s, "arcgis-query", { layer: 5, offset: 1, limit: 2 });
      assert.equal(r.payload["error_type"], "TIMEOUT");
      assert.equal(r.payload["retryable"], true);
      release();
    });
  } finally {
    release();
  }
});
