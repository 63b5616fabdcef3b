// riksantikvaren-nearby's output "file" (tools/nearby.ts): the ranked features this call's scan
// found, nearest first, as CSV rows or a GeoJSON FeatureCollection.
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../geo/latlon.ts";
import type { Geometry, LatLon } from "../../geo/geojson.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import { fileName, written } from "../../output/result_files.ts";
import type { Written } from "../../output/result_files.ts";
import type { RawFeature } from "./parse.ts";
import { featureRows, geoJsonFeature } from "./rows.ts";
import type { FeatureOut, LicenceOut } from "./format.ts";

/** A feature within the radius, with its distance; carried ones (from a cursor) are known by id and distance. */
export type Ranked = {
  id: string | null;
  d: number;
  out: FeatureOut | null;
  geometry: Geometry | null;
  /** The record as read, for features found by this call's scan (not for carried ones). */
  record?: RawFeature;
};

/**
 * output "file": the features this call's scan found within the radius, nearest first, up to
 * `file_max_features` (features carried by a cursor were in the earlier call's file). When the
 * scan did not reach the end of the box, the file says which cursor writes the rest.
 */
export async function nearbyFile(
  ranked: readonly Ranked[],
  search: {
    center: LatLon;
    radius: number;
    dataset: string;
    collection: string;
    next_cursor: string | null;
    sourceUrl: string;
    licence: LicenceOut;
    a: { lat: number; lon: number; response_format: "markdown" | "json" };
    /** Most features the file holds (file_max_features). */
    cap: number;
  },
  ctx: ToolCallContext,
): Promise<Written> {
  const { a, cap } = search;
  const found = ranked.filter((r) => r.record !== undefined);
  const inFile = found.slice(0, cap);
  const records = inFile.map((r) => r.record!);
  const distance = (i: number) => Math.round(inFile[i]!.d * 10) / 10;
  const json = a.response_format === "json";
  const partial = [
    found.length > cap
      ? `it holds the nearest ${cap} of ${found.length} (file_max_features): shrink radius_m for the rest`
      : null,
    search.next_cursor
      ? `the scan did not reach the end of the search box; call again with the same lat and lon, cursor="${search.next_cursor}" and output "file" for the features of the rest`
      : null,
  ].filter((x): x is string => x !== null).join("; ");
  const saved = await ctx.files.save({
    name: fileName(`nearby_${search.collection}`, `${a.lat}_${a.lon}_${search.radius}m`),
    format: json ? "json" : "csv",
    rows: [
      json
        ? records.map((r, i) => ({ ...geoJsonFeature(r), distance_m: distance(i) }))
        : featureRows(records, (_r, i) => ({ distance_m: distance(i) })),
    ],
    head: {
      type: "FeatureCollection",
      center: roundLatLon(search.center),
      radius_m: search.radius,
      dataset: search.dataset,
      collection: search.collection,
      complete: partial === "",
      next_cursor: search.next_cursor,
      source_url: search.sourceUrl,
      licence: search.licence,
      coordinate_convention: COORDINATE_CONVENTION,
    },
    itemsKey: "features",
    description: `${search.collection} within ${search.radius} m of ${
      formatLatLon(search.center)
    }: ${records.length} features, nearest first; ${search.licence.name}`,
  });
  return written(saved, `${records.length} features, nearest first`, ctx, partial || undefined);
}
