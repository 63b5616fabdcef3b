// Bounding boxes in GeoJSON / OGC CRS84 order: [min_lon, min_lat, max_lon, max_lat].
import { EARTH_RADIUS_M, haversineM } from "./distance.ts";
import type { Bbox, LatLon } from "./types.ts";

export type { Bbox } from "./types.ts";

/** Options for {@linkcode bboxProblem}. */
export interface BboxRules {
  /** Longest allowed side, in kilometres (measured along the box's middle). */
  maxSideKm?: number;
}

/**
 * What is wrong with a bbox, in a sentence that tells the caller how to fix it, or undefined
 * when it is valid: four finite numbers, longitudes in [-180, 180], latitudes in [-90, 90],
 * min below max on both axes (boxes across the antimeridian are not accepted), not a point or
 * a line, and no side longer than `maxSideKm`.
 */
export function bboxProblem(bbox: readonly number[], rules: BboxRules = {}): string | undefined {
  if (bbox.length !== 4) {
    return `expected 4 numbers [min_lon, min_lat, max_lon, max_lat], got ${bbox.length}`;
  }
  if (!bbox.every(Number.isFinite)) return "every value must be a finite number";
  const [minLon, minLat, maxLon, maxLat] = bbox as Bbox;
  for (const [name, v] of [["min_lon", minLon], ["max_lon", maxLon]] as const) {
    if (v < -180 || v > 180) return `${name} ${v} is outside [-180, 180]`;
  }
  for (const [name, v] of [["min_lat", minLat], ["max_lat", maxLat]] as const) {
    if (v < -90 || v > 90) {
      return `${name} ${v} is outside [-90, 90]; the order is [min_lon, min_lat, max_lon, max_lat] (longitude first)`;
    }
  }
  if (minLon >= maxLon) {
    return `min_lon ${minLon} must be less than max_lon ${maxLon}; the order is [min_lon, min_lat, max_lon, max_lat]`;
  }
  if (minLat >= maxLat) {
    return `min_lat ${minLat} must be less than max_lat ${maxLat}; the order is [min_lon, min_lat, max_lon, max_lat]`;
  }
  if (rules.maxSideKm !== undefined) {
    const { widthKm, heightKm } = bboxSizeKm(bbox as Bbox);
    const side = Math.max(widthKm, heightKm);
    if (side > rules.maxSideKm) {
      return `the box is ${Math.round(widthKm)} km × ${
        Math.round(heightKm)
      } km; the longest side may be at most ${rules.maxSideKm} km: use a smaller area`;
    }
  }
  return undefined;
}

/** Width (along the middle latitude) and height of a bbox in kilometres. */
export function bboxSizeKm(bbox: Bbox): { widthKm: number; heightKm: number } {
  const [minLon, minLat, maxLon, maxLat] = bbox;
  const midLat = (minLat + maxLat) / 2;
  // Measured along the parallel from min_lon east to max_lon, not as a great circle: the great
  // circle takes the short way round, so [-179.5, 0, 179.5, 1] would measure 111 km, not 39,900.
  const widthM = EARTH_RADIUS_M * ((maxLon - minLon) * Math.PI / 180) * Math.cos(midLat * Math.PI / 180);
  return {
    widthKm: Math.max(0, widthM) / 1000,
    heightKm: haversineM({ lat: minLat, lon: minLon }, { lat: maxLat, lon: minLon }) / 1000,
  };
}

/**
 * The smallest lat/lon box holding every point within `radiusM` metres of `center` on the
 * sphere. Near a pole it widens to every longitude; it is clamped at ±180 rather than wrapped.
 */
export function bboxAround(center: LatLon, radiusM: number): Bbox {
  const angular = radiusM / EARTH_RADIUS_M;
  const dLat = (angular * 180) / Math.PI;
  const minLat = Math.max(-90, center.lat - dLat);
  const maxLat = Math.min(90, center.lat + dLat);
  const latRad = (center.lat * Math.PI) / 180;
  // The widest longitude span of a spherical cap is asin(sin r / cos φ).
  const ratio = Math.sin(angular) / Math.cos(latRad);
  if (maxLat >= 90 || minLat <= -90 || ratio >= 1) return [-180, minLat, 180, maxLat];
  const dLon = (Math.asin(ratio) * 180) / Math.PI;
  return [Math.max(-180, center.lon - dLon), minLat, Math.min(180, center.lon + dLon), maxLat];
}

/** Whether two boxes overlap. */
export function bboxesIntersect(a: Bbox, b: Bbox): boolean {
  return a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];
}

/** `[min_lon, min_lat, max_lon, max_lat]` rounded for display. */
export function formatBbox(bbox: Bbox, decimals = 5): string {
  return `[${bbox.map((v) => Number(v.toFixed(decimals))).join(", ")}]`;
}
