// The two linear-ish passes behind simplify.ts. Thinning keeps a vertex only when it lies more
// than a set distance from the last one kept: one pass, and it bounds what follows, because a
// line of length L keeps at most L / distance vertices. Ranking runs Douglas-Peucker once, with
// no tolerance, and records for each vertex the largest tolerance that would still keep it (its
// own distance, capped by the one of the split that made its segment): the simplification at any
// tolerance is then one filter, so trying many tolerances costs no further Douglas-Peucker run.
import type { Position } from "./types.ts";

/** Metres per degree of longitude (`x`) and latitude (`y`) on a local plane. */
export interface PlaneScale {
  x: number;
  y: number;
}

/** Work done, in vertex visits, so tests can check that it grows with the input linearly. */
export interface Work {
  visits: number;
}

function distance(a: Position, b: Position, s: PlaneScale): number {
  return Math.hypot((b[0] - a[0]) * s.x, (b[1] - a[1]) * s.y);
}

/** The length of a line on the plane, in metres. */
export function lineLength(ps: readonly Position[], s: PlaneScale, work: Work): number {
  let sum = 0;
  for (let i = 1; i < ps.length; i++) sum += distance(ps[i - 1]!, ps[i]!, s);
  work.visits += ps.length;
  return sum;
}

/**
 * `ps` without each vertex within `minM` metres of the last one kept; the first and the last
 * always stay (a ring stays closed).
 */
export function thin(ps: readonly Position[], minM: number, s: PlaneScale, work: Work): Position[] {
  work.visits += ps.length;
  if (ps.length <= 2) return [...ps];
  const out: Position[] = [ps[0]!];
  let last = ps[0]!;
  for (let i = 1; i < ps.length - 1; i++) {
    if (distance(last, ps[i]!, s) > minM) {
      out.push(ps[i]!);
      last = ps[i]!;
    }
  }
  out.push(ps[ps.length - 1]!);
  return out;
}

/**
 * Every `k`th vertex of `ps` together with those {@linkcode thin} keeps at `minM` (in one pass),
 * and the ends: a sample shows a zigzagging shape, and the far vertices the distance pass keeps
 * are never dropped by it (a few far corners of a huge dense ring would be).
 */
export function thinAndSample(
  ps: readonly Position[],
  minM: number,
  k: number,
  s: PlaneScale,
  work: Work,
): Position[] {
  work.visits += ps.length;
  if (ps.length <= 2 || k <= 1) return [...ps];
  const out: Position[] = [ps[0]!];
  let last = ps[0]!;
  for (let i = 1; i < ps.length - 1; i++) {
    const far = distance(last, ps[i]!, s) > minM;
    if (far) last = ps[i]!;
    if (far || i % k === 0) out.push(ps[i]!);
  }
  out.push(ps[ps.length - 1]!);
  return out;
}

function segmentDistance(p: Position, a: Position, b: Position, s: PlaneScale): number {
  const px = (p[0] - a[0]) * s.x;
  const py = (p[1] - a[1]) * s.y;
  const dx = (b[0] - a[0]) * s.x;
  const dy = (b[1] - a[1]) * s.y;
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, (px * dx + py * dy) / len2));
  return Math.hypot(px - t * dx, py - t * dy);
}

/**
 * For each vertex of `ps`, the largest Douglas-Peucker tolerance (metres) that keeps it; the
 * ends (and `alsoKeep`, e.g. a ring's far vertex) are kept at any tolerance (`Infinity`).
 * Iterative, so 100,000-vertex lines are fine.
 */
export function rank(ps: readonly Position[], s: PlaneScale, work: Work, alsoKeep?: number): Float64Array {
  const imp = new Float64Array(ps.length);
  const last = ps.length - 1;
  if (last < 0) return imp;
  imp[0] = Infinity;
  imp[last] = Infinity;
  const stack: [number, number, number][] = [];
  if (alsoKeep !== undefined && alsoKeep > 0 && alsoKeep < last) {
    imp[alsoKeep] = Infinity;
    stack.push([0, alsoKeep, Infinity], [alsoKeep, last, Infinity]);
  } else {
    stack.push([0, last, Infinity]);
  }
  while (stack.length > 0) {
    const [first, end, cap] = stack.pop()!;
    if (end - first < 2) continue;
    let index = first + 1;
    let maxD = -1;
    for (let i = first + 1; i < end; i++) {
      const d = segmentDistance(ps[i]!, ps[first]!, ps[end]!, s);
      if (d > maxD) [index, maxD] = [i, d];
    }
    work.visits += end - first - 1;
    imp[index] = Math.min(maxD, cap);
    stack.push([first, index, imp[index]!], [index, end, imp[index]!]);
  }
  return imp;
}

/** A ring's vertex farthest from its first, where it is split into two lines for {@linkcode rank}. */
export function farthestFromFirst(ring: readonly Position[], s: PlaneScale, work: Work): number {
  let far = 1;
  let farD = -1;
  for (let i = 1; i < ring.length - 1; i++) {
    const d = distance(ring[0]!, ring[i]!, s);
    if (d > farD) [far, farD] = [i, d];
  }
  work.visits += ring.length;
  return far;
}
