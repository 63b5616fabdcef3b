// arcgis-query with output "file": every feature the query loop reads, as CSV rows or GeoJSON.
import { COORDINATE_CONVENTION } from "../../geo/latlon.ts";
import type { Geometry, LatLon } from "../../geo/geojson.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import { fileName, written } from "../../output/result_files.ts";
import type { Written } from "../../output/result_files.ts";
import type { EsriField } from "./esri.ts";
import { ARCGIS_LICENCE, arcgisFeature } from "./format.ts";

/**
 * output "file": every feature the query loop read (up to `file_max_features`), as attribute rows
 * in CSV or a GeoJSON FeatureCollection; a partial file says which offset goes on.
 */
export async function queryFile(
  read: Collected["features"],
  q: {
    a: {
      layer: number;
      where: string;
      offset: number;
      response_format: "markdown" | "json";
      point?: LatLon | undefined;
    };
    service: string;
    layerName: string | null;
    fields: readonly EsriField[];
    /** Most features the file holds. */
    cap: number;
    exactTotal: number | null;
    got: Collected;
    pagingUnsupported: boolean;
    sourceUrl: string;
    copyright: string | null;
  },
  ctx: ToolCallContext,
): Promise<Written> {
  const { a, got } = q;
  // The answer may have read more than the cap (a limit above it): the file keeps the cap.
  const collected = read.slice(0, q.cap);
  const end = a.offset + collected.length;
  const more = read.length > collected.length || got.exceeded ||
    (q.exactTotal !== null && end < q.exactTotal);
  let partial: string | undefined;
  if (more && q.pagingUnsupported) {
    partial = "the layer does not support paging, so only its first features could be read: narrow the query";
  } else if (more) {
    const why = got.shortOfTime
      ? "the call ran short of time"
      : got.failed
      ? "a page failed"
      : `it holds the most one call writes (${q.cap}, file_max_features)`;
    partial = `${why}; call again with offset=${end} and output "file" for the rest`;
  }
  const json = a.response_format === "json";
  const rows = collected.map((c) => {
    const f = arcgisFeature(c.attrs, c.geometry, a.layer, q.layerName, q.fields, null, a.point ?? null);
    if (json) return { type: "Feature", id: f.object_id, geometry: c.geometry, properties: c.attrs };
    const row: Record<string, unknown> = {
      object_id: f.object_id,
      lat: f.lat,
      lon: f.lon,
      geometry_type: f.geometry_type,
      ...(a.point ? { distance_m: f.distance_m } : {}),
      kulturminnesok_url: f.kulturminnesok_url,
    };
    for (const [k, v] of Object.entries(c.attrs)) if (!(k in row)) row[k] = v;
    return row;
  });
  const saved = await ctx.files.save({
    name: fileName(`${q.service}_layer${a.layer}`, a.where === "1=1" ? "" : a.where),
    format: json ? "json" : "csv",
    rows: [rows],
    head: {
      type: "FeatureCollection",
      service: q.service,
      layer: a.layer,
      layer_name: q.layerName,
      where: a.where,
      offset: a.offset,
      complete: partial === undefined,
      source_url: q.sourceUrl,
      licence: ARCGIS_LICENCE,
      ...(q.copyright ? { copyright: q.copyright } : {}),
      coordinate_convention: COORDINATE_CONVENTION,
    },
    itemsKey: "features",
    description: `${q.service} layer ${a.layer}${
      q.layerName ? ` (${q.layerName})` : ""
    }, where ${a.where}: ${rows.length} features; ${ARCGIS_LICENCE.name}`,
  });
  return written(saved, `${rows.length} features`, ctx, partial);
}

/** What the query loop gathered. */
export interface Collected {
  features: { attrs: Record<string, unknown>; geometry: Geometry | null }[];
  fields: EsriField[];
  /** Whether the server said more features follow the last page read. */
  exceeded: boolean;
  requests: number;
  sourceUrl: string;
  /** Offset of the first feature not read. */
  next: number;
  repeated: boolean;
  shortOfTime: boolean;
  overflowed: boolean;
  /** Why the loop stopped early ("failed" pages are also in `warnings`). */
  failed: boolean;
}
