import assert from "node:assert/strict";
import { arcgisToolError } from "../../../lib/providers/riksantikvaren_arcgis/client.ts";
import {
  arcgisError,
  describeArcgisError,
  esriToGeoJson,
  HOLE_MATCH_VISITS,
  normalizeAttributes,
  objectId,
  parseFields,
} from "../../../lib/providers/riksantikvaren_arcgis/esri.ts";
import {
  parseFolder,
  parseLayer,
  parseService,
} from "../../../lib/providers/riksantikvaren_arcgis/format.ts";
import { arcgisHeritage } from "../../../lib/providers/riksantikvaren_arcgis/heritage.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const real = JSON.parse(fixtureText("ra_arcgis/generic_arcgis_error_bodies_epcor_NOT_kart_ra_no.json")) as {
  responses: { body: unknown }[];
};

Deno.test("arcgisError() reads the real ArcGIS error bodies and ignores normal answers", () => {
  const [where, layer, url] = real.responses.map((r) => arcgisError(r.body)!);
  assert.deepEqual(where, {
    code: 400,
    message: "Cannot perform query. Invalid query parameters.",
    details: ["'where' parameter is invalid"],
  });
  assert.equal(
    describeArcgisError(where!),
    "Cannot perform query. Invalid query parameters; 'where' parameter is invalid",
  );
  assert.equal(describeArcgisError(layer!), "The requested layer (layerId: 99) was not found");
  assert.equal(describeArcgisError(url!), "Invalid URL");
  const sql = arcgisError(
    JSON.parse(
      fixtureText("ra_arcgis/generic_arcgis_error_validateSQL_services_arcgis_com_NOT_kart_ra_no.json"),
    ),
  );
  assert.deepEqual(sql?.details, ["Invalid parameters"]);
  assert.equal(arcgisError({ features: [] }), null);
  assert.equal(arcgisError([1]), null);
  assert.deepEqual(arcgisError({ error: { code: "498" } }), { code: 498, message: "", details: [] });
});

Deno.test("arcgisToolError() maps not-found, server and parameter errors", () => {
  const nf = arcgisToolError(arcgisError(real.responses[1]!.body)!, "layer 99");
  assert.equal(nf.errorType, "NOT_FOUND");
  const busy = arcgisToolError({ code: 503, message: "Busy", details: [] }, "x");
  assert.equal(busy.errorType, "API_ERROR");
  assert.equal(busy.retryable, true);
  const bad = arcgisToolError(arcgisError(real.responses[0]!.body)!, "layer 7");
  assert.equal(bad.retryable, false);
  assert.equal(bad.status, 400);
  assert.match(bad.hint ?? "", /where/);
});

Deno.test("esriToGeoJson() converts points, lines, envelopes and multipart shapes to [lon, lat]", () => {
  assert.deepEqual(esriToGeoJson({ x: 10.7, y: 59.9, spatialReference: { wkid: 4326 } }), {
    type: "Point",
    coordinates: [10.7, 59.9],
  });
  assert.deepEqual(esriToGeoJson({ points: [[1, 2], [3, 4]] }), {
    type: "MultiPoint",
    coordinates: [[1, 2], [3, 4]],
  });
  assert.deepEqual(esriToGeoJson({ paths: [[[0, 0], [1, 1]]] }), {
    type: "LineString",
    coordinates: [[0, 0], [1, 1]],
  });
  assert.equal(esriToGeoJson({ paths: [[[0, 0], [1, 1]], [[2, 2], [3, 3]]] })?.type, "MultiLineString");
  assert.deepEqual(esriToGeoJson({ xmin: 1, ymin: 2, xmax: 3, ymax: 4 }), {
    type: "Polygon",
    coordinates: [[[1, 2], [3, 2], [3, 4], [1, 4], [1, 2]]],
  });
});

Deno.test("esriToGeoJson() groups rings by orientation: clockwise outer, counter-clockwise holes", () => {
  const outerCw = [[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]];
  const holeCcw = [[2, 2], [4, 2], [4, 4], [2, 4], [2, 2]];
  const otherCw = [[20, 0], [20, 5], [25, 5], [25, 0], [20, 0]];
  const g = esriToGeoJson({ rings: [outerCw, holeCcw, otherCw] });
  assert.equal(g?.type, "MultiPolygon");
  const polys = (g as { coordinates: number[][][][] }).coordinates;
  assert.equal(polys.length, 2);
  assert.equal(polys[0]!.length, 2, "the hole belongs to the first polygon");
  // GeoJSON (RFC 7946) winding: exterior counter-clockwise.
  assert.deepEqual(polys[0]![0]![1], [10, 0]);
  const single = esriToGeoJson({ rings: [[[0, 0], [0, 1], [1, 1], [1, 0]]] });
  assert.equal(single?.type, "Polygon");
  assert.equal((single as { coordinates: number[][][] }).coordinates[0]!.length, 5, "an open ring is closed");
});

Deno.test("esriToGeoJson() refuses projected metres and broken shapes", () => {
  assert.equal(esriToGeoJson({ x: 262_000, y: 6_650_000 }), null);
  assert.equal(esriToGeoJson({ x: "NaN", y: 1 }), null);
  assert.equal(esriToGeoJson({ rings: [[[0, 0], [1, 1]]] }), null);
  assert.equal(esriToGeoJson(null), null);
  assert.equal(esriToGeoJson({ curveRings: [] }), null);
});

Deno.test('normalizeAttributes() turns date fields into dates and identify\'s "Null" into null', () => {
  const fields = parseFields([
    { name: "dato", type: "esriFieldTypeDate", alias: "Dato" },
    { name: "navn" },
    7,
  ]);
  assert.equal(fields.length, 2);
  assert.deepEqual(normalizeAttributes({ dato: 1262304000000, navn: "Null", n: 0 }, fields), {
    dato: "2010-01-01",
    navn: null,
    n: 0,
  });
  assert.deepEqual(normalizeAttributes({ Dato: 0 }, fields), { Dato: "1970-01-01" }, "aliases count too");
  assert.equal(objectId({ OBJECTID: 5 }, []), "5");
  assert.equal(objectId({ fid: "9" }, []), "9");
  assert.equal(
    objectId({ oid_x: 1, MyId: 4 }, [{ name: "MyId", type: "esriFieldTypeOID", alias: null }]),
    "4",
  );
  assert.equal(objectId({ navn: "x" }, []), null);
});

Deno.test("arcgisHeritage() reads camelCase fields and builds locality links only where they fit", () => {
  const h = arcgisHeritage({
    navn: "Gravhaug",
    kulturminneKategori: "Arkeologisk minne",
    kulturminneOpprinneligFunksjon: "Grav",
    vernetype: "Automatisk fredet",
    vernelov: "KML",
    lokalId: "22228-7",
  }, "Enkeltminner");
  assert.equal(h.category, "Arkeologisk minne – Grav");
  assert.equal(h.protection, "Automatisk fredet, KML");
  assert.equal(h.kulturminnesok_url, "https://kulturminnesok.no/ra/lokalitet/22228");
  assert.equal(arcgisHeritage({ lokalId: "123" }, "SefrakBygninger").kulturminnesok_url, null);
  assert.equal(
    arcgisHeritage({ Navn: "Via alias", "Link Kulturminnesøk": "https://x.no/1" }, null).name,
    "Via alias",
  );
});

Deno.test("parseFolder(), parseService() and parseLayer() read the synthetic listings", () => {
  const folder = parseFolder(JSON.parse(fixtureText("ra_arcgis/folder_distribusjon.json")), "Distribusjon");
  assert.deepEqual(folder.services[0], {
    name: "Kulturminner20180301",
    full_name: "Distribusjon/Kulturminner20180301",
    type: "MapServer",
  });
  const svc = parseService(JSON.parse(fixtureText("ra_arcgis/service_Kulturminner20180301.json")));
  assert.equal(svc.layers.length, 9);
  assert.deepEqual(svc.layers[3]!.sub_layer_ids, [4, 5, 6, 7, 8]);
  assert.equal(svc.layers[7]!.parent_layer_id, 3);
  assert.equal(svc.layers[0]!.parent_layer_id, null);
  assert.equal(svc.copyright, "Riksantikvaren");
  const layer = parseLayer(JSON.parse(fixtureText("ra_arcgis/layer_7.json")), 7);
  assert.equal(layer.supports_pagination, true);
  assert.equal(layer.max_record_count, 3);
  assert.equal(parseLayer({}, 4).id, 4);
  assert.deepEqual(parseService("<html>").layers, []);
});

Deno.test("esriToGeoJson() matches holes to outer rings within a visit budget, keeping every hole", () => {
  // Esri: outer rings clockwise, holes counter-clockwise; a square ring around (x, y) of half-side r.
  const square = (x: number, y: number, r: number, clockwise: boolean): number[][] => {
    const ring = [[x - r, y - r], [x - r, y + r], [x + r, y + r], [x + r, y - r], [x - r, y - r]];
    return clockwise ? ring : ring.reverse();
  };
  // One outer ring of 200,000 vertices (a clockwise circle) and 20,000 holes inside it: matching
  // each hole by ray casting alone is 4 billion vertex visits.
  const n = 200_000;
  const outer = Array.from({ length: n + 1 }, (_, i) => {
    const a = (-2 * Math.PI * (i % n)) / n;
    return [10 + 0.5 * Math.cos(a), 60 + 0.5 * Math.sin(a)];
  });
  const holes = Array.from(
    { length: 20_000 },
    (_, i) => square(10 + (i % 100) * 0.004 - 0.2, 60 + Math.floor(i / 100) * 0.002 - 0.2, 0.0005, false),
  );
  const work = { visits: 0 };
  const g = esriToGeoJson({ rings: [outer, ...holes] }, work) as { type: string; coordinates: number[][][] };
  assert.equal(g.type, "Polygon");
  assert.equal(g.coordinates.length, 20_001, "the outer ring and every hole");
  assert.ok(
    work.visits <= HOLE_MATCH_VISITS + 2 * (n + 1 + 5 * 20_000) + n + 1,
    `${work.visits} vertex visits`,
  );
  // A small answer is matched exactly: a hole in the second of two outer rings goes there.
  const two = esriToGeoJson({
    rings: [square(0, 0, 1, true), square(5, 5, 1, true), square(5, 5, 0.5, false)],
  }) as {
    coordinates: number[][][][];
  };
  assert.deepEqual(two.coordinates.map((p) => p.length), [1, 2]);
});
