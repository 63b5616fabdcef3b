import assert from "node:assert/strict";
import { haversineM } from "../../lib/geo/distance.ts";
import { countVertices } from "../../lib/geo/geojson.ts";
import type { Geometry, Position } from "../../lib/geo/geojson.ts";
import {
  attachGeometries,
  fitGeometry,
  simplificationNote,
  simplifyGeometry,
} from "../../lib/geo/simplify.ts";

/** A closed ring approximating a circle of `radiusM` around (lon, lat) with `n` vertices. */
export function circle(lon: number, lat: number, radiusM: number, n: number): Position[] {
  const ring: Position[] = [];
  for (let i = 0; i < n; i++) {
    const t = (2 * Math.PI * i) / n;
    // A little wobble so simplification has detail to remove.
    const r = radiusM * (1 + 0.01 * Math.sin(t * 50));
    ring.push([
      lon + (r * Math.cos(t)) / (111_320 * Math.cos((lat * Math.PI) / 180)),
      lat + (r * Math.sin(t)) / 110_540,
    ]);
  }
  ring.push(ring[0]!);
  return ring;
}

Deno.test("simplifyGeometry() keeps rings closed and drops vertices within the tolerance", () => {
  const g: Geometry = { type: "Polygon", coordinates: [circle(10.75, 59.9, 1000, 5000)] };
  const s = simplifyGeometry(g, 5);
  assert.equal(s.type, "Polygon");
  const ring = (s as { coordinates: Position[][] }).coordinates[0]!;
  assert.deepEqual(ring[0], ring[ring.length - 1]);
  assert.ok(ring.length >= 4 && ring.length < 5001 / 2, `kept ${ring.length}`);
  // Every kept vertex is an original vertex: the shape stays on the circle (±1 % wobble).
  for (const [x, y] of ring) {
    const d = haversineM({ lat: 59.9, lon: 10.75 }, { lat: y, lon: x });
    assert.ok(d > 980 && d < 1020, `vertex at ${d} m`);
  }
});

Deno.test("simplifyGeometry() drops a hole that collapses and keeps a triangle for the outer ring", () => {
  const outer = circle(10, 60, 1000, 200);
  const hole = circle(10, 60, 1, 20);
  const s = simplifyGeometry({ type: "Polygon", coordinates: [outer, hole] }, 2000) as {
    coordinates: Position[][];
  };
  assert.equal(s.coordinates.length, 1);
  assert.equal(s.coordinates[0]!.length, 4);
});

Deno.test("fitGeometry() leaves a small geometry alone apart from rounding", () => {
  const g: Geometry = { type: "Point", coordinates: [10.123456789, 59.987654321] };
  const f = fitGeometry(g, () => true)!;
  assert.equal(f.simplified, false);
  assert.deepEqual(f.geometry, { type: "Point", coordinates: [10.123457, 59.987654] });
  assert.equal(simplificationNote(f), "");
});

Deno.test("fitGeometry() simplifies a 20,000-vertex polygon until it fits and says so", () => {
  const g: Geometry = {
    type: "MultiPolygon",
    coordinates: [[circle(10.75, 59.9, 5000, 20_000)], [circle(10.9, 59.9, 800, 2000)]],
  };
  const budget = 4000;
  const f = fitGeometry(g, (x) => JSON.stringify(x).length <= budget)!;
  assert.equal(f.simplified, true);
  assert.equal(f.method, "douglas-peucker");
  assert.ok(JSON.stringify(f.geometry).length <= budget);
  assert.equal(f.verticesBefore, 22_002);
  assert.equal(f.verticesAfter, countVertices(f.geometry));
  assert.ok(f.toleranceM > 0);
  assert.match(simplificationNote(f), /22002 → \d+ vertices \(Douglas-Peucker, tolerance [\d.]+ m\)/);
});

Deno.test("fitGeometry() falls back to the bounding box, then to nothing", () => {
  // Sixty small islands: even one triangle each is longer than the box around them all.
  const islands: Position[][][] = [];
  for (let i = 0; i < 60; i++) islands.push([circle(10 + i * 0.01, 60, 100, 40)]);
  const g: Geometry = { type: "MultiPolygon", coordinates: islands };
  const box = fitGeometry(g, (x) => JSON.stringify(x).length <= 200)!;
  assert.equal(box.method, "bbox");
  assert.equal(box.verticesAfter, 5);
  assert.equal(box.geometry.type, "Polygon");
  assert.match(simplificationNote(box), /bounding box/);
  assert.equal(fitGeometry(g, () => false), null);
});

Deno.test("attachGeometries() shares the limit among a page's items and says when one is left out", () => {
  const ring: Position[] = Array.from({ length: 2001 }, (_, i): Position => {
    const a = (i / 2000) * 2 * Math.PI;
    return [10.7 + 0.01 * Math.cos(a), 59.9 + 0.01 * Math.sin(a)];
  });
  ring[2000] = ring[0]!;
  const polygon: Geometry = { type: "Polygon", coordinates: [ring] };
  const items: { geometry?: unknown; geometry_note?: string | null }[] = [{}, {}, {}];
  attachGeometries(items as never, [polygon, null, { type: "Point", coordinates: [10, 60] } as Geometry], {
    format: "json",
    characterLimit: 8000,
    leftOutHint: "ask for one feature",
  });
  assert.ok(JSON.stringify(items[0]!.geometry).length <= 8000 / 3 / 4);
  assert.match(items[0]!.geometry_note ?? "", /simplified|bounding box/);
  assert.equal(items[1]!.geometry, undefined, "no geometry, nothing attached");
  assert.deepEqual(items[2]!.geometry, { type: "Point", coordinates: [10, 60] });
  assert.equal(items[2]!.geometry_note, null);
});
