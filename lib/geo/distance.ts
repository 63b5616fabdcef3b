// Distances on the sphere. Metres throughout; inputs are named {lat, lon} objects.
import { pointInPolygon } from "./geojson.ts";
import type { Geometry, LatLon, Position } from "./types.ts";

/** Mean Earth radius (IUGG), metres. Spherical distances are within about 0.5 % of WGS 84. */
export const EARTH_RADIUS_M = 6_371_008.8;

const RAD = Math.PI / 180;

/** Great-circle distance between two points in metres (haversine formula). */
export function haversineM(a: LatLon, b: LatLon): number {
  const dLat = (b.lat - a.lat) * RAD;
  const dLon = (b.lon - a.lon) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * Distance in metres from `point` to the nearest part of `geometry`: 0 inside a polygon,
 * great-circle distance to points, and to line or ring edges the distance in a plane tangent
 * at `point` (equirectangular; within 0.1 % for edges closer than about 50 km, which is the
 * range nearby searches use). Null for an empty geometry.
 */
export function distanceToGeometryM(point: LatLon, geometry: Geometry): number | null {
  const here: Position = [point.lon, point.lat];
  switch (geometry.type) {
    case "Point":
      return haversineM(point, { lat: geometry.coordinates[1], lon: geometry.coordinates[0] });
    case "MultiPoint":
      return minOf(geometry.coordinates.map((p) => haversineM(point, { lat: p[1], lon: p[0] })));
    case "LineString":
      return lineDistance(point, geometry.coordinates);
    case "MultiLineString":
      return minOf(geometry.coordinates.map((l) => lineDistance(point, l)));
    case "Polygon":
      return pointInPolygon(here, geometry.coordinates)
        ? 0
        : minOf(geometry.coordinates.map((r) => lineDistance(point, r)));
    case "MultiPolygon":
      return minOf(
        geometry.coordinates.map((poly) =>
          pointInPolygon(here, poly) ? 0 : minOf(poly.map((r) => lineDistance(point, r)))
        ),
      );
    case "GeometryCollection":
      return minOf(geometry.geometries.map((g) => distanceToGeometryM(point, g)));
  }
}

function lineDistance(point: LatLon, line: readonly Position[]): number | null {
  if (line.length === 0) return null;
  if (line.length === 1) return haversineM(point, { lat: line[0]![1], lon: line[0]![0] });
  // Project to metres in a plane tangent at `point`.
  const kx = EARTH_RADIUS_M * RAD * Math.cos(point.lat * RAD);
  const ky = EARTH_RADIUS_M * RAD;
  const xy = (p: Position): [number, number] => [wrapLon(p[0] - point.lon) * kx, (p[1] - point.lat) * ky];
  let best = Infinity;
  let prev = xy(line[0]!);
  for (let i = 1; i < line.length; i++) {
    const cur = xy(line[i]!);
    best = Math.min(best, segmentToOrigin(prev, cur));
    prev = cur;
  }
  return best;
}

function segmentToOrigin([ax, ay]: [number, number], [bx, by]: [number, number]): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
  return Math.hypot(ax + t * dx, ay + t * dy);
}

function wrapLon(d: number): number {
  return d > 180 ? d - 360 : d < -180 ? d + 360 : d;
}

function minOf(values: readonly (number | null)[]): number | null {
  let best: number | null = null;
  for (const v of values) if (v !== null && (best === null || v < best)) best = v;
  return best;
}
