import assert from "node:assert/strict";
import {
  countVertices,
  geometryBbox,
  parseGeometry,
  pointInPolygon,
  representativePoint,
  roundGeometry,
} from "../../lib/geo/geojson.ts";
import { COORDINATE_CONVENTION, formatLatLon, parseLatLonText } from "../../lib/geo/latlon.ts";

Deno.test("parseGeometry() reads every GeoJSON type and drops z values", () => {
  assert.deepEqual(parseGeometry({ type: "Point", coordinates: [10.7, 59.9, 12] }), {
    type: "Point",
    coordinates: [10.7, 59.9],
  });
  assert.equal(parseGeometry({ type: "LineString", coordinates: [[0, 0], [1, 1]] })?.type, "LineString");
  assert.equal(
    parseGeometry({ type: "MultiPolygon", coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 0]]]] })?.type,
    "MultiPolygon",
  );
  const gc = parseGeometry({
    type: "GeometryCollection",
    geometries: [{ type: "Point", coordinates: [1, 2] }, { type: "Bogus" }],
  });
  assert.deepEqual(gc, { type: "GeometryCollection", geometries: [{ type: "Point", coordinates: [1, 2] }] });
});

Deno.test("parseGeometry() returns null for odd shapes and projected (non-degree) coordinates", () => {
  assert.equal(parseGeometry(null), null);
  assert.equal(parseGeometry({ type: "Point", coordinates: ["10", 59] }), null);
  assert.equal(parseGeometry({ type: "Polygon", coordinates: [[[0, 0], [1, 1], [0, 0]]] }), null);
  // UTM 33N metres, as a server ignoring CRS84 would send.
  assert.equal(parseGeometry({ type: "Point", coordinates: [262_000, 6_650_000] }), null);
  assert.equal(parseGeometry({ type: "Circle", coordinates: [0, 0] }), null);
});

Deno.test("representativePoint() uses the point, the polygon centroid or the bbox centre", () => {
  assert.deepEqual(representativePoint({ type: "Point", coordinates: [10.7, 59.9] }), {
    lat: 59.9,
    lon: 10.7,
  });
  const sq = {
    type: "Polygon" as const,
    coordinates: [[[10, 60], [10.2, 60], [10.2, 60.2], [10, 60.2], [10, 60]] as [number, number][]],
  };
  const c = representativePoint(sq)!;
  assert.ok(Math.abs(c.lat - 60.1) < 1e-9 && Math.abs(c.lon - 10.1) < 1e-9);
  // A U shape whose centroid (1.5, 1.36) falls in the notch: a point inside an arm is used.
  const u = {
    type: "Polygon" as const,
    coordinates: [
      [[0, 0], [3, 0], [3, 3], [2, 3], [2, 1], [1, 1], [1, 3], [0, 3], [0, 0]] as [number, number][],
    ],
  };
  const p = representativePoint(u)!;
  assert.ok(pointInPolygon([p.lon, p.lat], u.coordinates), `(${p.lon}, ${p.lat}) is outside the U`);
  assert.ok(Math.abs(p.lat - 9.5 / 7) < 1e-9);
});

Deno.test("geometryBbox(), countVertices() and roundGeometry() agree on a polygon", () => {
  const g = parseGeometry({
    type: "Polygon",
    coordinates: [[[10.1234567, 59.1], [10.2, 59.1], [10.2, 59.2], [10.1234567, 59.1]]],
  })!;
  assert.deepEqual(geometryBbox(g), [10.1234567, 59.1, 10.2, 59.2]);
  assert.equal(countVertices(g), 4);
  assert.deepEqual(roundGeometry(g, 3), {
    type: "Polygon",
    coordinates: [[[10.123, 59.1], [10.2, 59.1], [10.2, 59.2], [10.123, 59.1]]],
  });
});

Deno.test("parseLatLonText() reads latitude first and refuses out-of-range text", () => {
  assert.deepEqual(parseLatLonText("59.9075, 10.7637"), { lat: 59.9075, lon: 10.7637 });
  assert.equal(parseLatLonText("10.7637"), undefined);
  assert.equal(parseLatLonText("95, 10"), undefined);
  assert.equal(formatLatLon({ lat: 59.9, lon: 10.75 }, 2), "lat 59.90, lon 10.75");
  assert.match(COORDINATE_CONVENTION, /\[lon, lat\]/);
});
