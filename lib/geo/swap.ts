// "Did you swap latitude and longitude?" One check for every geo tool: a point, a bbox or a ring
// that misses the data's area while its swapped reading hits it was almost certainly written in
// the other order. The hint says which order the tool expects and what the swapped value is.
import { bboxesIntersect } from "./bbox.ts";
import type { Bbox } from "./bbox.ts";
import type { LatLon, Position } from "./geojson.ts";

/**
 * The area Riksantikvaren's data covers: the spatial extent every api.ra.no collection
 * announces (mainland Norway, Svalbard and Jan Mayen, with margin), `[min_lon, min_lat,
 * max_lon, max_lat]`. No point is inside it in both readings (its latitudes all exceed its
 * longitudes), so a swap is never ambiguous.
 */
export const NORWAY_EXTENT: Bbox = [-14.48, 55.59, 38.16, 84.84];

/** Names of the point's two values in the tool's input, for the hint. */
export interface PointFieldNames {
  lat: string;
  lon: string;
}

/** Whether a point lies inside a box. */
export function pointInBbox(point: LatLon, box: Bbox): boolean {
  return point.lon >= box[0] && point.lon <= box[2] && point.lat >= box[1] && point.lat <= box[3];
}

/** The point with its two values exchanged, when it misses `extent` and that reading hits it. */
export function swappedPoint(point: LatLon, extent: Bbox = NORWAY_EXTENT): LatLon | undefined {
  if (pointInBbox(point, extent)) return undefined;
  const swapped = { lat: point.lon, lon: point.lat };
  return pointInBbox(swapped, extent) ? swapped : undefined;
}

/**
 * A hint when a point given as named lat and lon looks swapped; undefined otherwise. `names`
 * are the argument names the tool takes (`lat`/`lon`, or `point.lat`/`point.lon`).
 */
export function swappedPointHint(
  point: LatLon,
  names: PointFieldNames = { lat: "lat", lon: "lon" },
  extent: Bbox = NORWAY_EXTENT,
): string | undefined {
  const s = swappedPoint(point, extent);
  if (!s) return undefined;
  return `${names.lat} ${point.lat}, ${names.lon} ${point.lon} lies outside Norway, where this data is, ` +
    `but with the two values swapped it falls inside: ${names.lat} is the latitude (north-south, ` +
    `about 58 to 71 on the mainland) and ${names.lon} the longitude (east-west, about 5 to 31). ` +
    `Did you mean ${names.lat} ${s.lat}, ${names.lon} ${s.lon}?`;
}

/** The box read the other way round, when it misses `extent` and that reading hits it. */
export function swappedBbox(bbox: Bbox, extent: Bbox = NORWAY_EXTENT): Bbox | undefined {
  if (bboxesIntersect(bbox, extent)) return undefined;
  const swapped: Bbox = [bbox[1], bbox[0], bbox[3], bbox[2]];
  return bboxesIntersect(swapped, extent) ? swapped : undefined;
}

/** A hint when a bbox looks written as `[min_lat, min_lon, max_lat, max_lon]`; undefined otherwise. */
export function swappedBboxHint(bbox: Bbox, extent: Bbox = NORWAY_EXTENT): string | undefined {
  const s = swappedBbox(bbox, extent);
  if (!s) return undefined;
  return `The bbox [${bbox.join(", ")}] lies outside Norway, where this data is, but read as ` +
    `[lat, lon] it would fall inside: bbox order is [min_lon, min_lat, max_lon, max_lat] ` +
    `(longitude first, GeoJSON order). Did you mean [${s.join(", ")}]?`;
}

/**
 * A hint when every position of a ring of `[lon, lat]` positions misses `extent` while each
 * swapped position hits it; undefined otherwise.
 */
export function swappedRingHint(ring: readonly Position[], extent: Bbox = NORWAY_EXTENT): string | undefined {
  if (ring.length === 0) return undefined;
  const points = ring.map(([lon, lat]) => ({ lat, lon }));
  if (!points.every((p) => swappedPoint(p, extent) !== undefined)) return undefined;
  const [a, b] = ring[0]!;
  return `Every polygon position lies outside Norway, where this data is, but with each pair swapped ` +
    `they fall inside: positions are [lon, lat] (longitude first, GeoJSON order). Did you mean ` +
    `[${b}, ${a}] for the first one, and the others swapped the same way?`;
}
