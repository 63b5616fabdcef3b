// Geometry simplification, so a large polygon still fits a response's character limit. The
// Douglas-Peucker tolerance is in metres (positions are scaled to a local plane first), so one
// setting means the same thing in Oslo and on Svalbard. The work is bounded whatever an upstream
// sends (docs/SECURITY.md, "Work budgets"): a geometry of more than WORK_VERTICES vertices is
// first thinned by distance in one linear pass, Douglas-Peucker then runs once on at most that
// many vertices (see _ranking.ts), and the search for the least simplification that fits is a
// binary search of filters over them.
import { countVertices, geometryBbox, roundGeometry } from "./geojson.ts";
import type { Geometry, Position } from "./geojson.ts";
import { EARTH_RADIUS_M } from "./distance.ts";
import { farthestFromFirst, lineLength, rank, thin, thinAndSample } from "./_ranking.ts";
import type { PlaneScale, Work } from "./_ranking.ts";

/**
 * Most vertices Douglas-Peucker runs on: more than any response can show (a vertex costs at
 * least six characters of JSON, the largest character limit is 1,000,000, and the default
 * 25,000 shows about 1,100), few enough that even its worst case stays in milliseconds.
 */
export const WORK_VERTICES = 4000;

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
  /** Vertices left after thinning (by distance or sampling), when there were more than {@linkcode WORK_VERTICES}. */
  thinnedTo?: number;
  /** Vertex visits spent (thinning, ranking, filtering), which grows linearly with the input. */
  visits: number;
}

function planeScale(box: readonly number[]): PlaneScale {
  const lat0 = ((box[1]! + box[3]!) / 2) * (Math.PI / 180);
  const k = (EARTH_RADIUS_M * Math.PI) / 180;
  return { x: k * Math.cos(lat0), y: k };
}

/**
 * `geometry` with `line` applied to each line and `ring` to each ring. A ring that `ring` makes
 * shorter than four positions is dropped when it is a hole; an outer ring keeps a triangle.
 */
function mapLines(
  geometry: Geometry,
  line: (ps: Position[]) => Position[],
  ring: (ps: Position[]) => Position[],
): Geometry {
  const polygon = (rings: Position[][]): Position[][] => {
    const out: Position[][] = [];
    rings.forEach((r, i) => {
      const s = r.length >= 4 ? ring(r) : [];
      if (s.length >= 4) out.push(s);
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
        geometries: geometry.geometries.map((g) => mapLines(g, line, ring)),
      };
  }
}

/** Every vertex's rank (see _ranking.ts), per line or ring, computed once. */
class Ranked {
  readonly #scale: PlaneScale;
  readonly #work: Work;
  readonly #ranks = new Map<Position[], Float64Array>();
  constructor(geometry: Geometry, scale: PlaneScale, work: Work) {
    this.#scale = scale;
    this.#work = work;
    mapLines(geometry, (ps) => this.#line(ps), (ps) => this.#ring(ps));
  }
  #line(ps: Position[]): Position[] {
    this.#ranks.set(ps, rank(ps, this.#scale, this.#work));
    return ps;
  }
  #ring(ps: Position[]): Position[] {
    this.#ranks.set(ps, rank(ps, this.#scale, this.#work, farthestFromFirst(ps, this.#scale, this.#work)));
    return ps;
  }
  /** The distinct finite ranks, ascending: the tolerances at which the result changes. */
  tolerances(): number[] {
    const all: number[] = [];
    for (const r of this.#ranks.values()) for (const x of r) if (Number.isFinite(x)) all.push(x);
    return [...new Set(all)].sort((a, b) => a - b);
  }
  /** The geometry at tolerance `tol`: the vertices ranked above it. */
  at(geometry: Geometry, tol: number): Geometry {
    const keep = (ps: Position[]): Position[] => {
      const r = this.#ranks.get(ps);
      this.#work.visits += ps.length;
      return r ? ps.filter((_, i) => r[i]! > tol) : ps;
    };
    return mapLines(geometry, keep, keep);
  }
}

/**
 * Douglas-Peucker simplification with a tolerance in metres. Rings stay closed with at least
 * four positions; a hole that would collapse is dropped, an outer ring that would collapse
 * keeps a triangle. Points are unchanged.
 */
export function simplifyGeometry(geometry: Geometry, toleranceM: number): Geometry {
  const box = geometryBbox(geometry);
  if (!box || toleranceM <= 0) return geometry;
  return new Ranked(geometry, planeScale(box), { visits: 0 }).at(geometry, toleranceM);
}

/**
 * `geometry` thinned by distance to about `budget` vertices in one pass: the minimum distance
 * is the total length of its lines over `budget`, so at most `budget` vertices plus each line's
 * ends stay. Rings stay valid as in {@linkcode simplifyGeometry}.
 */
function thinTo(geometry: Geometry, budget: number, scale: PlaneScale, work: Work): Geometry {
  let total = 0;
  mapLines(geometry, (ps) => {
    total += lineLength(ps, scale, work);
    return ps;
  }, (ps) => {
    total += lineLength(ps, scale, work);
    return ps;
  });
  const minM = total / budget;
  const cut = (ps: Position[]) => thin(ps, minM, scale, work);
  const byDistance = mapLines(geometry, cut, cut);
  // Far fewer vertices than the budget means zigzags make up most of the length: a sample of
  // every kth vertex then shows the shape instead of a triangle.
  if (countVertices(byDistance) >= budget / 4) return byDistance;
  const k = Math.ceil(countVertices(geometry) / budget);
  const sample = (ps: Position[]) => thinAndSample(ps, minM, k, scale, work);
  return mapLines(geometry, sample, sample);
}

/**
 * The least-simplified version of `geometry` that `fits` accepts: first only rounded to 6
 * decimals, then Douglas-Peucker with the smallest tolerance that fits (after thinning by
 * distance to {@linkcode WORK_VERTICES} when it has more), then its bounding box. Null when not
 * even the box fits (the caller leaves the geometry out and says so).
 */
export function fitGeometry(geometry: Geometry, fits: (g: Geometry) => boolean): FittedGeometry | null {
  const before = countVertices(geometry);
  const work: Work = { visits: before };
  if (before <= WORK_VERTICES) {
    const rounded = roundGeometry(geometry);
    if (fits(rounded)) {
      const after = countVertices(rounded);
      return {
        geometry: rounded,
        simplified: false,
        method: "none",
        toleranceM: 0,
        verticesBefore: before,
        verticesAfter: after,
        visits: work.visits,
      };
    }
  }
  const box = geometryBbox(geometry);
  if (!box) return null;
  const scale = planeScale(box);
  // So many lines that each keeping its ends is over the budget: thinning cannot help, the box shows it.
  if (before > WORK_VERTICES && 2 * lineCount(geometry) > 2 * WORK_VERTICES) {
    return boxFitted(box, scale, fits, before, work);
  }
  const thinned = before > WORK_VERTICES ? thinTo(geometry, WORK_VERTICES, scale, work) : geometry;
  const thinnedTo = thinned === geometry ? undefined : countVertices(thinned);
  // Many tiny parts can keep more than the budget even thinned (each keeps its ends): such a
  // shape is shown by its box.
  if ((thinnedTo ?? before) <= 2 * WORK_VERTICES) {
    const ranked = new Ranked(thinned, scale, work);
    const tolerances = ranked.tolerances();
    if (thinnedTo !== undefined) tolerances.unshift(0);
    const at = (i: number) => roundGeometry(ranked.at(thinned, tolerances[i]!));
    const best = tolerances.length > 0 ? smallestFitting(tolerances.length, (i) => fits(at(i))) : -1;
    if (best !== -1) {
      const g = at(best);
      return {
        geometry: g,
        simplified: true,
        method: "douglas-peucker",
        toleranceM: round1(tolerances[best]!),
        verticesBefore: before,
        verticesAfter: countVertices(g),
        ...(thinnedTo !== undefined ? { thinnedTo } : {}),
        visits: work.visits,
      };
    }
  }
  return boxFitted(box, scale, fits, before, work);
}

/** The geometry's bounding box as a polygon, where it fits. */
function boxFitted(
  box: readonly number[],
  scale: PlaneScale,
  fits: (g: Geometry) => boolean,
  before: number,
  work: Work,
): FittedGeometry | null {
  const diagM = Math.max(1, Math.hypot((box[2]! - box[0]!) * scale.x, (box[3]! - box[1]!) * scale.y));
  const boxGeometry = roundGeometry({
    type: "Polygon",
    coordinates: [[[box[0]!, box[1]!], [box[2]!, box[1]!], [box[2]!, box[3]!], [box[0]!, box[3]!], [
      box[0]!,
      box[1]!,
    ]]],
  });
  if (!fits(boxGeometry)) return null;
  return {
    geometry: boxGeometry,
    simplified: true,
    method: "bbox",
    toleranceM: round1(diagM),
    verticesBefore: before,
    verticesAfter: 5,
    visits: work.visits,
  };
}

/** How many lines (rings, line strings) a geometry is made of. */
function lineCount(geometry: Geometry): number {
  switch (geometry.type) {
    case "LineString":
      return 1;
    case "Polygon":
    case "MultiLineString":
      return geometry.coordinates.length;
    case "MultiPolygon":
      return geometry.coordinates.reduce((n, p) => n + p.length, 0);
    case "GeometryCollection":
      return geometry.geometries.reduce((n, g) => n + lineCount(g), 0);
    default:
      return 0;
  }
}

/**
 * {@linkcode fitGeometry} with a turn of the event loop (`pause`) after the thinning pass of a
 * geometry over {@linkcode WORK_VERTICES}, so a huge shape's thinning and its ranking never hold
 * the loop as one piece. The result says what fitGeometry would for the whole geometry.
 */
export async function fitGeometryPaced(
  geometry: Geometry,
  fits: (g: Geometry) => boolean,
  pause: () => Promise<void>,
): Promise<FittedGeometry | null> {
  const before = countVertices(geometry);
  const box = before > WORK_VERTICES && 2 * lineCount(geometry) <= 2 * WORK_VERTICES
    ? geometryBbox(geometry)
    : null;
  if (!box) return fitGeometry(geometry, fits);
  const work: Work = { visits: before };
  const thinned = thinTo(geometry, WORK_VERTICES, planeScale(box), work);
  await pause();
  const fitted = fitGeometry(thinned, fits);
  if (!fitted) return null;
  return {
    ...fitted,
    // Thinned and then fitting whole is Douglas-Peucker at tolerance 0, as fitGeometry says it.
    simplified: true,
    method: fitted.method === "none" ? "douglas-peucker" : fitted.method,
    verticesBefore: before,
    ...(fitted.method === "bbox" ? {} : { thinnedTo: countVertices(thinned) }),
    visits: work.visits + fitted.visits,
  };
}

/** The smallest `i` in `[0, n)` with `ok(i)`, for an `ok` that stays true once true; -1 if none. */
function smallestFitting(n: number, ok: (i: number) => boolean): number {
  if (!ok(n - 1)) return -1;
  let [lo, hi] = [0, n - 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The sentence a result carries when a geometry was simplified. */
export function simplificationNote(f: FittedGeometry): string {
  if (!f.simplified) return "";
  if (f.method === "bbox") {
    return `Geometry replaced by its bounding box (${f.verticesBefore} vertices did not fit the response limit)`;
  }
  const thinned = f.thinnedTo !== undefined ? `, after thinning to ${f.thinnedTo} vertices` : "";
  return `Geometry simplified to fit the response limit: ${f.verticesBefore} → ${f.verticesAfter} vertices (Douglas-Peucker, tolerance ${f.toleranceM} m)${thinned}`;
}

function triangle(ring: Position[]): Position[] {
  const n = Math.max(1, ring.length - 1);
  const p0 = ring[0]!;
  return [p0, ring[Math.floor(n / 3)]!, ring[Math.floor((2 * n) / 3)]!, p0];
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
