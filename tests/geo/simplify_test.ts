import assert from "node:assert/strict";
import { haversineM } from "../../lib/geo/distance.ts";
import { countVertices } from "../../lib/geo/geojson.ts";
import type { Geometry, Position } from "../../lib/geo/geojson.ts";
import {
  attachGeometries,
  fitGeometry,
  fitGeometryPaced,
  simplificationNote,
  simplifyGeometry,
  WORK_VERTICES,
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

/** A spiky ring of `n` vertices around (lon, lat): every vertex off the line through its neighbours. */
function spiky(lon: number, lat: number, n: number, size = 0.01): Position[] {
  const ring: Position[] = [];
  for (let i = 0; i < n - 1; i++) {
    const a = (2 * Math.PI * i) / (n - 1);
    const r = size * (1 + 0.3 * (((i * 7919) % 97) / 97));
    ring.push([lon + 2 * r * Math.cos(a), lat + r * Math.sin(a)]);
  }
  ring.push(ring[0]!);
  return ring;
}

function assertValidRing(ring: readonly Position[], from: readonly Position[]): void {
  assert.ok(ring.length >= 4, `a ring of ${ring.length} positions`);
  assert.deepEqual(ring[0], ring[ring.length - 1], "the ring is closed");
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  const original = new Set(from.map((p) => `${r6(p[0])},${r6(p[1])}`));
  for (const p of ring) assert.ok(original.has(`${p[0]},${p[1]}`), `vertex ${p} is an original one`);
}

Deno.test("fitGeometry() spends work linear in a 600,000-vertex polygon and keeps it valid", () => {
  const fit = (n: number) => {
    const outer = spiky(10.75, 59.9, n);
    const hole = spiky(10.75, 59.9, n / 10, 0.002);
    const f = fitGeometry(
      { type: "Polygon", coordinates: [outer, hole] },
      (x) => JSON.stringify(x).length <= 20_000,
    )!;
    assert.equal(f.method, "douglas-peucker");
    assert.ok(JSON.stringify(f.geometry).length <= 20_000);
    const [o, h] = (f.geometry as { coordinates: Position[][] }).coordinates;
    assertValidRing(o!, outer);
    if (h) assertValidRing(h, hole);
    assert.ok(f.verticesAfter > 100, `a shape, not a triangle: ${f.verticesAfter} vertices`);
    assert.ok(f.thinnedTo! <= 2 * WORK_VERTICES, `thinned to ${f.thinnedTo}`);
    assert.match(simplificationNote(f), /after thinning to \d+ vertices/);
    return f;
  };
  const small = fit(60_000);
  const large = fit(600_000);
  // Thinning reads each vertex a few times; Douglas-Peucker and the search run on the thinned ring.
  assert.ok(large.visits <= 5 * 660_000, `${large.visits} vertex visits for 660,000 vertices`);
  assert.ok(
    large.visits / small.visits <= 12,
    `${small.visits} → ${large.visits} visits for 10× the vertices`,
  );
});

Deno.test("fitGeometry() thins a polygon with little noise by distance, keeping its shape", () => {
  const ring = circle(10.75, 59.9, 5000, 100_000);
  const f = fitGeometry({ type: "Polygon", coordinates: [ring] }, (x) => JSON.stringify(x).length <= 20_000)!;
  assert.ok(
    f.thinnedTo! >= WORK_VERTICES / 4 && f.thinnedTo! <= WORK_VERTICES + 2,
    `thinned to ${f.thinnedTo}`,
  );
  assertValidRing((f.geometry as { coordinates: Position[][] }).coordinates[0]!, ring);
  assert.ok(f.visits <= 5 * 100_001, `${f.visits} vertex visits`);
});

Deno.test("fitGeometry() shows a huge MultiPoint or a swarm of tiny polygons by its box", () => {
  const points: Position[] = Array.from(
    { length: 200_000 },
    (_, i) => [10 + (i % 1000) * 1e-4, 60 + i * 1e-7],
  );
  const swarm: Position[][][] = Array.from({ length: 5000 }, (_, i) => [circle(10 + i * 1e-3, 60, 10, 4)]);
  for (
    const g of [{ type: "MultiPoint", coordinates: points }, { type: "MultiPolygon", coordinates: swarm }]
  ) {
    const f = fitGeometry(g as Geometry, (x) => JSON.stringify(x).length <= 20_000)!;
    assert.equal(f.method, "bbox", g.type);
    assert.ok(f.visits <= 5 * countVertices(g as Geometry), `${f.visits} vertex visits`);
  }
});

Deno.test("fitGeometryPaced gives the event loop a turn after thinning a huge shape, and says what fitGeometry says", async () => {
  const n = 20_000;
  const ring: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const t = (2 * Math.PI * i) / n;
    ring.push([10 + 0.01 * Math.cos(t), 60 + 0.005 * Math.sin(t)]);
  }
  ring.push(ring[0]!);
  const polygon = { type: "Polygon" as const, coordinates: [ring] };
  const fits = (g: unknown) => JSON.stringify(g).length < 20_000;
  let turns = 0;
  const paced = (await fitGeometryPaced(polygon, fits, () => {
    turns++;
    return Promise.resolve();
  }))!;
  const whole = fitGeometry(polygon, fits)!;
  assert.equal(turns, 1);
  assert.deepEqual(
    [paced.simplified, paced.method, paced.verticesBefore, paced.thinnedTo],
    [whole.simplified, whole.method, whole.verticesBefore, whole.thinnedTo],
  );
  assert.match(simplificationNote(paced), /20001 → \d+ vertices .*after thinning to \d+ vertices/);
  // A small shape is fitted at once, with no turn.
  await fitGeometryPaced({ type: "Point", coordinates: [10, 60] }, fits, () => {
    turns++;
    return Promise.resolve();
  });
  assert.equal(turns, 1);
});

Deno.test("fitGeometry keeps a dense ring's far corners when it samples it (no 20 km parcel turned into metres)", () => {
  // 50,000 vertices zigzag in one corner of a 20 km square whose three other corners are single vertices.
  const ring: [number, number][] = [];
  for (let i = 0; i < 50_000; i++) ring.push([10 + (i % 2) * 1e-5, 60 + i * 1e-8]);
  ring.push([10.36, 60], [10.36, 60.18], [10, 60.18], ring[0]!);
  const fitted = fitGeometry(
    { type: "Polygon", coordinates: [ring] },
    (g) => JSON.stringify(g).length < 25_000,
  )!;
  const kept = (fitted.geometry as { coordinates: [number, number][][] }).coordinates[0]!;
  const lons = kept.map((p) => p[0]);
  const lats = kept.map((p) => p[1]);
  assert.deepEqual([Math.max(...lons), Math.max(...lats)], [10.36, 60.18], "the far corners stay");
});

Deno.test("fitGeometry gives a shape of more lines than the budget its box at once, without thinning it", async () => {
  const parts: [number, number][][][] = [];
  for (let i = 0; i < WORK_VERTICES + 500; i++) {
    const x = 10 + (i % 100) * 0.001;
    const y = 60 + Math.floor(i / 100) * 0.001;
    parts.push([[[x, y], [x + 1e-4, y], [x + 1e-4, y + 1e-4], [x, y]]]);
  }
  const many = { type: "MultiPolygon" as const, coordinates: parts };
  const fits = (g: unknown) => JSON.stringify(g).length < 20_000;
  let turns = 0;
  const fitted = (await fitGeometryPaced(many, fits, () => {
    turns++;
    return Promise.resolve();
  }))!;
  assert.equal(fitted.method, "bbox");
  assert.equal(turns, 0, "nothing to thin, so no stage to pause between");
  assert.ok(fitted.visits <= countVertices(many), `${fitted.visits} vertex visits: no pass beyond the count`);
});
