// Coordinate conventions, said once: inputs name their values (`lat`, `lon`); GeoJSON output
// keeps RFC 7946 order `[lon, lat]`; bboxes are `[min_lon, min_lat, max_lon, max_lat]`.
import type { LatLon } from "./geojson.ts";

/** One sentence for tool descriptions and docs. */
export const COORDINATE_CONVENTION =
  "Coordinates are WGS 84 degrees. Points are given as named lat and lon; GeoJSON geometry keeps the GeoJSON order [lon, lat]; a bbox is [min_lon, min_lat, max_lon, max_lat].";

/** `lat 59.90750, lon 10.76370`: both names spelled out, so the order cannot be misread. */
export function formatLatLon(point: LatLon, decimals = 5): string {
  return `lat ${point.lat.toFixed(decimals)}, lon ${point.lon.toFixed(decimals)}`;
}

/** Rounds a point to `decimals` places (5 ≈ 1 m). */
export function roundLatLon(point: LatLon, decimals = 6): LatLon {
  const f = 10 ** decimals;
  return { lat: Math.round(point.lat * f) / f, lon: Math.round(point.lon * f) / f };
}

/** Whether a point is a valid WGS 84 position. */
export function isValidLatLon(point: LatLon): boolean {
  return Number.isFinite(point.lat) && Number.isFinite(point.lon) && Math.abs(point.lat) <= 90 &&
    Math.abs(point.lon) <= 180;
}

/**
 * Reads a "lat, lon" text (Kulturminnesøk's `gpsposisjon` style: latitude first) into a point,
 * or undefined when it is not two numbers in range.
 */
export function parseLatLonText(text: string): LatLon | undefined {
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*[,; ]\s*(-?\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!m) return undefined;
  const point = { lat: Number(m[1]), lon: Number(m[2]) };
  return isValidLatLon(point) ? point : undefined;
}
