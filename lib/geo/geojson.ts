// GeoJSON geometry (RFC 7946): positions are [lon, lat] (x then y), always. Everything here
// reads untrusted upstream JSON defensively and never throws on a bad shape.
import type { Bbox, Geometry, LatLon, Position } from "./types.ts";

export type { Geometry, LatLon, Position } from "./types.ts";

/**
 * Reads a GeoJSON geometry from untrusted JSON: unknown types, non-numeric or out-of-range
 * positions make it `null`. Extra dimensions (z, m) are dropped.
 */
export function parseGeometry(value: unknown, depth = 0): Geometry | null {
  if (!isObject(value) || typeof value["type"] !== "string" || depth > 3) return null;
  const c = value["coordinates"];
  switch (value["type"]) {
    case "Point": {
      const p = position(c);
      return p ? { type: "Point", coordinates: p } : null;
    }
    case "MultiPoint": {
      const ps = positions(c, 1);
      return ps ? { type: "MultiPoint", coordinates: ps } : null;
    }
    case "LineString": {
      const ps = positions(c, 2);
      return ps ? { type: "LineString", coordinates: ps } : null;
    }
    case "MultiLineString": {
      const ls = listOf(c, (l) => positions(l, 2));
      return ls ? { type: "MultiLineString", coordinates: ls } : null;
    }
    case "Polygon": {
      const rs = listOf(c, ring);
      return rs && rs.length > 0 ? { type: "Polygon", coordinates: rs } : null;
    }
    case "MultiPolygon": {
      const ps = listOf(c, (p) => {
        const rs = listOf(p, ring);
        return rs && rs.length > 0 ? rs : undefined;
      });
      return ps && ps.length > 0 ? { type: "MultiPolygon", coordinates: ps } : null;
    }
    case "GeometryCollection": {
      const gs = value["geometries"];
      if (!Array.isArray(gs)) return null;
      const out = gs.map((g) => parseGeometry(g, depth + 1)).filter((g): g is Geometry => g !== null);
      return { type: "GeometryCollection", geometries: out };
    }
    default:
      return null;
  }
}

/** Every position of a geometry, in order. */
export function allPositions(geometry: Geometry): Position[] {
  switch (geometry.type) {
    case "Point":
      return [geometry.coordinates];
    case "MultiPoint":
    case "LineString":
      return geometry.coordinates;
    case "MultiLineString":
    case "Polygon":
      return geometry.coordinates.flat();
    case "MultiPolygon":
      return geometry.coordinates.flat(2);
    case "GeometryCollection":
      return geometry.geometries.flatMap(allPositions);
  }
}

/** The number of positions (vertices) in a geometry (counted without copying them). */
export function countVertices(geometry: Geometry): number {
  switch (geometry.type) {
    case "Point":
      return 1;
    case "MultiPoint":
    case "LineString":
      return geometry.coordinates.length;
    case "MultiLineString":
    case "Polygon":
      return geometry.coordinates.reduce((n, l) => n + l.length, 0);
    case "MultiPolygon":
      return geometry.coordinates.reduce((n, p) => n + p.reduce((m, l) => m + l.length, 0), 0);
    case "GeometryCollection":
      return geometry.geometries.reduce((n, g) => n + countVertices(g), 0);
  }
}

/** `[min_lon, min_lat, max_lon, max_lat]` of a geometry, or null when it has no position. */
export function geometryBbox(geometry: Geometry): Bbox | null {
  const ps = allPositions(geometry);
  if (ps.length === 0) return null;
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of ps) {
    const x = p[0];
    const y = p[1];
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  return [minX, minY, maxX, maxY];
}

/**
 * A point that stands for the geometry in lists and distance sorts: the point itself; for
 * polygons a point inside the largest one (its centroid when that lies inside, else a point on
 * a line through the centroid); the middle vertex of a line; else the centre of the bounding box.
 */
export function representativePoint(geometry: Geometry): LatLon | null {
  switch (geometry.type) {
    case "Point":
      return toLatLon(geometry.coordinates);
    case "Polygon":
    case "MultiPolygon": {
      // A point to stand for a shape needs no more than a few thousand of its vertices: a huge
      // polygon is located on every k-th vertex (linear in what is kept, not in what was sent).
      const polys = (geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates)
        .map((p) => p.map((ring) => sparseRing(ring, LOCATE_VERTICES)));
      let best: Position[][] | undefined;
      let bestArea = -1;
      for (const p of polys) {
        const area = Math.abs(ringArea(p[0] ?? []));
        if (area > bestArea) [best, bestArea] = [p, area];
      }
      if (best) {
        const c = ringCentroid(best[0] ?? []);
        if (c && pointInPolygon(c, best)) return toLatLon(c);
        // A concave shape (a U, a crescent) can have its centroid outside: take the middle of
        // the widest stretch of a horizontal line through the centroid that lies inside.
        const inside = c ? pointOnScanline(best, c[1]) : undefined;
        if (inside) return toLatLon(inside);
      }
      break;
    }
    case "LineString": {
      const mid = geometry.coordinates[Math.floor(geometry.coordinates.length / 2)];
      if (mid) return toLatLon(mid);
      break;
    }
    default:
      break;
  }
  const b = geometryBbox(geometry);
  return b ? { lat: (b[1] + b[3]) / 2, lon: (b[0] + b[2]) / 2 } : null;
}

/** Whether `[lon, lat]` lies inside a polygon (outer ring minus holes), by ray casting. */
export function pointInPolygon(point: Position, rings: readonly Position[][]): boolean {
  const [outer, ...holes] = rings;
  if (!outer || !inRing(point, outer)) return false;
  return !holes.some((h) => inRing(point, h));
}

/** Rounds every position to `decimals` places (6 ≈ 0.1 m), dropping repeated positions. */
export function roundGeometry(geometry: Geometry, decimals = 6): Geometry {
  const f = 10 ** decimals;
  const r = (p: Position): Position => [Math.round(p[0] * f) / f, Math.round(p[1] * f) / f];
  const line = (ps: Position[]): Position[] => dedupe(ps.map(r));
  switch (geometry.type) {
    case "Point":
      return { type: "Point", coordinates: r(geometry.coordinates) };
    case "MultiPoint":
      return { type: "MultiPoint", coordinates: geometry.coordinates.map(r) };
    case "LineString":
      return { type: "LineString", coordinates: line(geometry.coordinates) };
    case "MultiLineString":
      return { type: "MultiLineString", coordinates: geometry.coordinates.map(line) };
    case "Polygon":
      return { type: "Polygon", coordinates: geometry.coordinates.map(line) };
    case "MultiPolygon":
      return { type: "MultiPolygon", coordinates: geometry.coordinates.map((p) => p.map(line)) };
    case "GeometryCollection":
      return {
        type: "GeometryCollection",
        geometries: geometry.geometries.map((g) => roundGeometry(g, decimals)),
      };
  }
}

/** `{lat, lon}` of a `[lon, lat]` position. */
export function toLatLon(p: Position): LatLon {
  return { lat: p[1], lon: p[0] };
}

function pointOnScanline(rings: readonly Position[][], y: number): Position | undefined {
  const xs: number[] = [];
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i]!;
      const [xj, yj] = ring[j]!;
      if ((yi > y) !== (yj > y)) xs.push(((xj - xi) * (y - yi)) / (yj - yi) + xi);
    }
  }
  xs.sort((a, b) => a - b);
  let best: Position | undefined;
  let width = -1;
  for (let k = 0; k + 1 < xs.length; k += 2) {
    const w = xs[k + 1]! - xs[k]!;
    if (w > width) [best, width] = [[(xs[k]! + xs[k + 1]!) / 2, y], w];
  }
  return best && pointInPolygon(best, rings) ? best : undefined;
}

function inRing([x, y]: Position, ring: readonly Position[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Signed planar area of a ring in square degrees (only compared, never reported). */
/** Most vertices of one ring {@linkcode representativePoint} reads. */
const LOCATE_VERTICES = 4_096;

/** `ring` itself, or every k-th vertex of it (closed again) when it has more than `max`. */
function sparseRing(ring: Position[], max: number): Position[] {
  if (ring.length <= max) return ring;
  const step = Math.ceil(ring.length / max);
  const out: Position[] = [];
  for (let i = 0; i < ring.length; i += step) out.push(ring[i]!);
  out.push(ring[0]!);
  return out;
}

function ringArea(ring: readonly Position[]): number {
  let sum = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    sum += (ring[j]![0] * ring[i]![1]) - (ring[i]![0] * ring[j]![1]);
  }
  return sum / 2;
}

function ringCentroid(ring: readonly Position[]): Position | null {
  const a = ringArea(ring);
  if (ring.length === 0) return null;
  if (Math.abs(a) < 1e-15) {
    const n = ring.length;
    return [ring.reduce((s, p) => s + p[0], 0) / n, ring.reduce((s, p) => s + p[1], 0) / n];
  }
  let cx = 0;
  let cy = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const f = ring[j]![0] * ring[i]![1] - ring[i]![0] * ring[j]![1];
    cx += (ring[j]![0] + ring[i]![0]) * f;
    cy += (ring[j]![1] + ring[i]![1]) * f;
  }
  return [cx / (6 * a), cy / (6 * a)];
}

function dedupe(ps: Position[]): Position[] {
  return ps.filter((p, i) => i === 0 || p[0] !== ps[i - 1]![0] || p[1] !== ps[i - 1]![1]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// Indexing instead of destructuring and reusing a two-number array as it is: a 600,000-vertex
// polygon is read in a fraction of the time (destructuring walks an iterator per position).
function position(v: unknown): Position | undefined {
  if (!Array.isArray(v) || v.length < 2) return undefined;
  const x: unknown = v[0];
  const y: unknown = v[1];
  if (typeof x !== "number" || typeof y !== "number" || !Number.isFinite(x) || !Number.isFinite(y)) {
    return undefined;
  }
  if (x < -180 || x > 180 || y < -90 || y > 90) return undefined;
  return v.length === 2 ? v as Position : [x, y];
}

function positions(v: unknown, min: number): Position[] | undefined {
  const ps = listOf(v, position);
  return ps && ps.length >= min ? ps : undefined;
}

function ring(v: unknown): Position[] | undefined {
  return positions(v, 4);
}

function listOf<T>(v: unknown, item: (x: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: T[] = [];
  for (const x of v) {
    const parsed = item(x);
    if (parsed === undefined) return undefined;
    out.push(parsed);
  }
  return out;
}
