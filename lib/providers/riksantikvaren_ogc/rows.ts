// Features as a result file holds them: GeoJSON properties as CSV rows (with the feature's id and
// a representative point in front), or GeoJSON features for a FeatureCollection in JSON.
import { roundLatLon } from "../../geo/latlon.ts";
import { representativePoint } from "../../geo/geojson.ts";
import { fallbackPoint, kulturminnesokUrl } from "./heritage.ts";
import type { RawFeature } from "./parse.ts";

/** The columns every row starts with; a property of the same name is left to these. */
const LEAD = ["id", "lat", "lon", "geometry_type", "kulturminnesok_url"] as const;

/** One CSV row per feature: id, point, geometry type and link, then every property as it came. */
export function featureRows(
  records: readonly RawFeature[],
  extra: (record: RawFeature, index: number) => Record<string, unknown> = () => ({}),
): Record<string, unknown>[] {
  return records.map((r, i) => {
    const point = (r.geometry ? representativePoint(r.geometry) : null) ?? fallbackPoint(r.properties);
    const p = point ? roundLatLon(point) : null;
    const row: Record<string, unknown> = {
      id: r.id,
      lat: p?.lat ?? null,
      lon: p?.lon ?? null,
      geometry_type: r.geometry?.type ?? null,
      kulturminnesok_url: kulturminnesokUrl(r.properties),
      ...extra(r, i),
    };
    for (const [k, v] of Object.entries(r.properties)) {
      if (!(LEAD as readonly string[]).includes(k) && !(k in row)) row[k] = v;
    }
    return row;
  });
}

/** A GeoJSON feature (positions [lon, lat]) with every property, for a FeatureCollection file. */
export function geoJsonFeature(r: RawFeature): Record<string, unknown> {
  return { type: "Feature", id: r.id, geometry: r.geometry, properties: r.properties };
}
