import assert from "node:assert/strict";
import { formatArea, geometryFacts, geometrySummary } from "../../lib/geo/summary.ts";
import type { Geometry, Position } from "../../lib/geo/types.ts";

/** A square `side` metres wide with its south-west corner at (lon, lat), as a closed ring. */
function square(lon: number, lat: number, side: number): Position[] {
  const dLat = side / 111_195;
  const dLon = side / (111_195 * Math.cos((lat * Math.PI) / 180));
  return [[lon, lat], [lon + dLon, lat], [lon + dLon, lat + dLat], [lon, lat + dLat], [lon, lat]];
}

Deno.test("geometryFacts measures a polygon's area less its holes, a line's length and the parts", () => {
  const outer = square(10.75, 59.9, 100);
  const hole = square(10.7502, 59.9002, 20);
  const polygon: Geometry = { type: "Polygon", coordinates: [outer, hole] };
  const area = geometryFacts(polygon).areaM2!;
  assert.ok(Math.abs(area - (10_000 - 400)) < 100, `${area} m²`);
  const multi: Geometry = { type: "MultiPolygon", coordinates: [[outer], [square(10.8, 59.9, 50)]] };
  const facts = geometryFacts(multi);
  assert.equal(facts.parts, 2);
  assert.equal(facts.vertices, 10);
  assert.ok(Math.abs(facts.areaM2! - 12_500) < 150, `${facts.areaM2} m²`);
  // One degree of latitude along a meridian.
  const line: Geometry = { type: "LineString", coordinates: [[10, 59], [10, 60]] };
  assert.ok(Math.abs(geometryFacts(line).lengthM! - 111_195) < 200);
});

Deno.test("geometrySummary says a shape in one line, a point by its type alone", () => {
  const polygon: Geometry = { type: "Polygon", coordinates: [square(10.75, 59.9, 100)] };
  assert.match(
    geometrySummary(polygon),
    /^Polygon, 5 vertices, about 10,000 m², bbox \[10\.75, 59\.9, 10\.7517\d, 59\.9009\]$/,
  );
  assert.equal(geometrySummary({ type: "Point", coordinates: [10, 60] }), "Point");
  assert.match(
    geometrySummary({ type: "MultiLineString", coordinates: [[[10, 59], [10, 59.01]]] }),
    /^MultiLineString, 1 part, 2 vertices, about 1\.1 km long, bbox /,
  );
  assert.deepEqual([formatArea(950), formatArea(250_000), formatArea(42_000_000)], [
    "950 m²",
    "25 ha",
    "42 km²",
  ]);
});
