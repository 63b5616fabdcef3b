// Geometry simplification, so a large polygon still fits a response's character limit. The
// Douglas-Peucker tolerance is in metres (positions are scaled to a local plane first), so one
// setting means the same thing in Oslo and on Svalbard.
import { countVertices, geometryBbox, roundGeometry } from "./geojson.ts";
import type { Geometry, Position } from "./geojson.ts";
import { EARTH_RADIUS_M } from "./distance.ts";

/** How a geometry was made to fit. */
export interface FittedGeometry {
  geometry: Geometry;
  /** Whether vertices were dropped (or the shape replaced by its box). */
  simplified: boolean;
  /** `none` (only rounded to 6 decimals), `douglas-peucker`, or `bbox` (replaced by its box). */
  method: "none" | "douglas-peucker" | "bbox";
  /** Tolerance used, in metres (0 when not simplified). */
  toleranceM: number;
  verticesBefore: number;
  verticesAfter: number;
}

/**
 * Douglas-Peucker simplification with a tolerance in metres. Rings stay closed with at least
 * four positions; a hole that would collapse is dropped, an outer ring that would collapse
 * keeps a triangle. Points are unchanged.
 */
export function simplifyGeometry(geometry: Geometry, toleranceM: number): Geometry {
  const box = geometryBbox(geometry);
  if (!box || toleranceM <= 0) return geometry;
  const lat0 = ((box[1] + box[3]) / 2) * (Math.PI / 180);
  const k = (EARTH_RADIUS_M * Math.PI) / 180;
  const scale = { x: k * Math.cos(lat0), y: k };
  const line = (ps: Position[]) => douglasPeucker(ps, toleranceM, scale);
  const polygon = (rings: Position[][]): Position[][] => {
    const out: Position[][] = [];
    rings.forEach((r, i) => {
      const s = simplifyRing(r, toleranceM, scale);
      if (s) out.push(s);
      else if (i === 0) out.push(triangle(r));
    });
    return out;
  };
  switch (geometry.type) {
    case "Point":
    case "MultiPoint":
      return geometry;
    case "LineString":
      return { type: "LineString", coordinates: line(geometry.coordinates) };
    case "MultiLineString":
      return { type: "MultiLineString", coordinates: geometry.coordinates.map(line) };
    case "Polygon":
      return { type: "Polygon", coordinates: polygon(geometry.coordinates) };
    case "MultiPolygon":
      return { type: "MultiPolygon", coordinates: geometry.coordinates.map(polygon) };
    case "GeometryCollection":
      return {
        type: "GeometryCollection",
        geometries: geometry.geometries.map((g) => simplifyGeometry(g, toleranceM)),
      };
  }
}

/**
 * The least-simplified version of `geometry` that `fits` accepts: first only rounded to 6
 * decimals, then Douglas-Peucker with a doubling tolerance, then its bounding box. Null when
 * not even the box fits (the caller leaves the geometry out and says so).
 */
export function fitGeometry(geometry: Geometry, fits: (g: Geometry) => boolean): FittedGeometry | null {
  const before = countVertices(geometry);
  const rounded = roundGeometry(geometry);
  if (fits(rounded)) {
    return {
      geometry: rounded,
      simplified: false,
      method: "none",
      toleranceM: 0,
      verticesBefore: before,
      verticesAfter: countVertices(rounded),
    };
  }
  const box = geometryBbox(geometry);
  if (!box) return null;
  const diagM = Math.max(
    1,
    Math.hypot(
      (box[2] - box[0]) * 111_320 * Math.cos(((box[1] + box[3]) / 2) * (Math.PI / 180)),
      (box[3] - box[1]) * 110_540,
    ),
  );
  for (let tol = Math.max(0.5, diagM / 20_000); tol <= diagM; tol *= 2) {
    const g = roundGeometry(simplifyGeometry(geometry, tol));
    if (fits(g)) {
      return {
        geometry: g,
        simplified: true,
        method: "douglas-peucker",
        toleranceM: round1(tol),
        verticesBefore: before,
        verticesAfter: countVertices(g),
      };
    }
  }
  const boxGeometry = roundGeometry({
    type: "Polygon",
    coordinates: [[[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]], [box[0], box[1]]]],
  });
  if (fits(boxGeometry)) {
    return {
      geometry: boxGeometry,
      simplified: true,
      method: "bbox",
      toleranceM: round1(diagM),
      verticesBefore: before,
      verticesAfter: 5,
    };
  }
  return null;
}

/** The sentence a result carries when a geometry was simplified. */
export function simplificationNote(f: FittedGeometry): string {
  if (!f.simplified) return "";
  return f.method === "bbox"
    ? `Geometry replaced by its bounding box (${f.verticesBefore} vertices did not fit the response limit)`
    : `Geometry simplified to fit the response limit: ${f.verticesBefore} → ${f.verticesAfter} vertices (Douglas-Peucker, tolerance ${f.toleranceM} m)`;
}

function simplifyRing(
  ring: Position[],
  tol: number,
  scale: { x: number; y: number },
): Position[] | undefined {
  if (ring.length < 4) return undefined;
  const open = ring.slice(0, -1);
  // Split at the vertex farthest from the first, so both halves are proper open lines.
  let far = 1;
  let farD = -1;
  for (let i = 1; i < open.length; i++) {
    const d = Math.hypot((open[i]![0] - open[0]![0]) * scale.x, (open[i]![1] - open[0]![1]) * scale.y);
    if (d > farD) [far, farD] = [i, d];
  }
  const a = douglasPeucker(open.slice(0, far + 1), tol, scale);
  const b = douglasPeucker([...open.slice(far), open[0]!], tol, scale);
  const out = [...a, ...b.slice(1)];
  return out.length >= 4 ? out : undefined;
}

function triangle(ring: Position[]): Position[] {
  const n = Math.max(1, ring.length - 1);
  const p0 = ring[0]!;
  return [p0, ring[Math.floor(n / 3)]!, ring[Math.floor((2 * n) / 3)]!, p0];
}

/** Iterative Douglas-Peucker (no recursion, so 100,000-vertex lines are fine). */
function douglasPeucker(ps: Position[], tol: number, scale: { x: number; y: number }): Position[] {
  if (ps.length <= 2) return ps;
  const keep = new Uint8Array(ps.length);
  keep[0] = 1;
  keep[ps.length - 1] = 1;
  const stack: [number, number][] = [[0, ps.length - 1]];
  while (stack.length > 0) {
    const [first, last] = stack.pop()!;
    let index = -1;
    let maxD = tol;
    for (let i = first + 1; i < last; i++) {
      const d = segmentDistance(ps[i]!, ps[first]!, ps[last]!, scale);
      if (d > maxD) [index, maxD] = [i, d];
    }
    if (index !== -1) {
      keep[index] = 1;
      stack.push([first, index], [index, last]);
    }
  }
  return ps.filter((_, i) => keep[i] === 1);
}

function segmentDistance(p: Position, a: Position, b: Position, s: { x: number; y: number }): number {
  const [px, py] = [(p[0] - a[0]) * s.x, (p[1] - a[1]) * s.y];
  const [dx, dy] = [(b[0] - a[0]) * s.x, (b[1] - a[1]) * s.y];
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, (px * dx + py * dy) / len2));
  return Math.hypot(px - t * dx, py - t * dy);
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/** An output item that can carry a geometry and a note about it. */
export interface WithGeometry {
  geometry?: Geometry | Record<string, unknown> | null;
  geometry_note?: string | null;
}

/** Options for {@linkcode attachGeometries}. */
export interface AttachGeometriesOptions {
  format: "markdown" | "json";
  characterLimit: number;
  /** What to do when a geometry cannot fit, e.g. "use riksantikvaren-feature". */
  leftOutHint: string;
}

/**
 * Gives each item of a page its geometry, simplified so that together they fit the response
 * limit: each gets an equal share (pretty JSON spends about three times the characters of
 * compact JSON on coordinates), and an item whose geometry cannot fit its share says so.
 */
export function attachGeometries(
  items: readonly WithGeometry[],
  geometries: readonly (Geometry | null | undefined)[],
  options: AttachGeometriesOptions,
): void {
  if (items.length === 0) return;
  const share = Math.floor(options.characterLimit / items.length / (options.format === "json" ? 4 : 1.6));
  items.forEach((item, i) => {
    const g = geometries[i];
    if (!g) return;
    const fitted = fitGeometry(g, (x) => JSON.stringify(x).length <= share);
    if (fitted) {
      item.geometry = fitted.geometry;
      item.geometry_note = fitted.simplified ? simplificationNote(fitted) : null;
    } else {
      item.geometry_note =
        `Geometry left out: it did not fit this page's share of the response limit; ${options.leftOutHint}`;
    }
  });
}
