import assert from "node:assert/strict";
import { distanceToGeometryM, haversineM } from "../../lib/geo/distance.ts";
import type { Geometry } from "../../lib/geo/geojson.ts";

Deno.test("haversineM() gives Oslo–Bergen as about 305 km and 0 for the same point", () => {
  const oslo = { lat: 59.9139, lon: 10.7522 };
  const bergen = { lat: 60.3913, lon: 5.3221 };
  const d = haversineM(oslo, bergen);
  assert.ok(Math.abs(d - 305_000) < 2_000, `got ${d}`);
  assert.equal(haversineM(oslo, oslo), 0);
});

Deno.test("haversineM() gives one degree of latitude as about 111.2 km", () => {
  assert.ok(Math.abs(haversineM({ lat: 60, lon: 10 }, { lat: 61, lon: 10 }) - 111_195) < 5);
});

Deno.test("distanceToGeometryM() is 0 inside a polygon and the edge distance outside it", () => {
  // A square of 0.01° around (10.75, 59.9).
  const square: Geometry = {
    type: "Polygon",
    coordinates: [[[10.745, 59.895], [10.755, 59.895], [10.755, 59.905], [10.745, 59.905], [10.745, 59.895]]],
  };
  assert.equal(distanceToGeometryM({ lat: 59.9, lon: 10.75 }, square), 0);
  // 0.001° of latitude north of the top edge: about 111 m.
  const d = distanceToGeometryM({ lat: 59.906, lon: 10.75 }, square)!;
  assert.ok(Math.abs(d - 111.2) < 1, `got ${d}`);
});

Deno.test("distanceToGeometryM() excludes holes and reads MultiPolygons, lines and points", () => {
  const withHole: Geometry = {
    type: "Polygon",
    coordinates: [
      [[0, 0], [0.02, 0], [0.02, 0.02], [0, 0.02], [0, 0]],
      [[0.005, 0.005], [0.005, 0.015], [0.015, 0.015], [0.015, 0.005], [0.005, 0.005]],
    ],
  };
  const inHole = distanceToGeometryM({ lat: 0.01, lon: 0.01 }, withHole)!;
  assert.ok(Math.abs(inHole - 556) < 2, `got ${inHole}`);
  const multi: Geometry = {
    type: "MultiPolygon",
    coordinates: [withHole.coordinates as never, [[[1, 1], [1.1, 1], [1.1, 1.1], [1, 1]]]],
  };
  assert.equal(distanceToGeometryM({ lat: 1.01, lon: 1.05 }, multi), 0);
  const line: Geometry = { type: "LineString", coordinates: [[10, 60], [10.01, 60]] };
  assert.ok(Math.abs(distanceToGeometryM({ lat: 60.001, lon: 10.005 }, line)! - 111.2) < 1);
  assert.equal(distanceToGeometryM({ lat: 60, lon: 10 }, { type: "Point", coordinates: [10, 60] }), 0);
  assert.equal(
    distanceToGeometryM({ lat: 60, lon: 10 }, { type: "GeometryCollection", geometries: [] }),
    null,
  );
});
