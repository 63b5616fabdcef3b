// arcgis-query: a layer's features by attribute filter, bbox or point, paging past the server's
// transfer limit; or every feature to a file.
import { arcgisPlacesView } from "../view.ts";
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import type { QueryValue } from "../../../http/fetch_client.ts";
import { bboxProblem, formatBbox } from "../../../geo/bbox.ts";
import type { Bbox } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon } from "../../../geo/latlon.ts";
import type { Position } from "../../../geo/geojson.ts";
import { attachGeometries } from "../../../geo/simplify.ts";
import { swappedBboxHint, swappedPointHint, swappedRingHint } from "../../../geo/swap.ts";
import type { ToolCallContext, ToolDefinition, ToolOutput } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import { fileSchema, formatField, orDefault, outputField, withFile } from "../../../output/result_files.ts";
import { asObject, esriRing } from "../esri.ts";
import type { EsriField } from "../esri.ts";
import type { RiksantikvarenArcgisSettings } from "../settings.ts";
import {
  ARCGIS_LICENCE,
  arcgisFeature,
  arcgisFeatureMarkdown,
  arcgisFeatureSchema,
  arcgisFooter,
  licenceSchema,
  parseLayer,
} from "../format.ts";
import {
  type ArcgisToolDeps,
  budgetFor,
  callOptions,
  FIELD_RE,
  READ_ONLY,
  serviceField,
  serviceName,
  TOOLSET,
  withTimeout,
} from "../_common.ts";
import { queryFile } from "../query_file.ts";
import { collectPages } from "../query_pages.ts";
import type { Collected } from "../query_file.ts";

const SPATIAL_RELS = {
  intersects: "esriSpatialRelIntersects",
  contains: "esriSpatialRelContains",
  within: "esriSpatialRelWithin",
  crosses: "esriSpatialRelCrosses",
  overlaps: "esriSpatialRelOverlaps",
  touches: "esriSpatialRelTouches",
  envelope_intersects: "esriSpatialRelEnvelopeIntersects",
} as const;

const queryOutput = z.looseObject({
  features: z.array(arcgisFeatureSchema),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  licence: licenceSchema,
  file: fileSchema.optional(),
});

/** `arcgis-query`. */
export function queryTool(deps: ArcgisToolDeps): ToolDefinition<z.ZodType, typeof queryOutput> {
  const input = queryInput(deps.settings);
  return {
    name: "arcgis-query",
    title: "Query an ArcGIS layer",
    toolset: TOOLSET,
    description:
      "Queries a layer of Riksantikvaren's map services (kart.ra.no) by SQL where, bbox, point or polygon.",
    input,
    output: queryOutput,
    view: arcgisPlacesView,
    annotations: READ_ONLY,
    handler(args, ctx) {
      return answerQuery(args as QueryArgs, ctx, deps);
    },
  };
}

/** The tool's arguments, with the limits the settings set. */
function queryInput(settings: RiksantikvarenArcgisSettings) {
  const lon = (v: number) => v >= -180 && v <= 180;
  const lat = (v: number) => v >= -90 && v <= 90;
  return z.strictObject({
    service: serviceField(settings),
    layer: z.int().min(0).max(10_000).describe(
      "Layer id, e.g. 7 (arcgis-services lists them)",
    ),
    where: orDefault(
      z.string().trim().refine((w) => w.length >= 1 && w.length <= 2000, "give 1 to 2000 characters"),
      "1=1",
    ).describe("SQL where clause (default 1=1)"),
    bbox: z.array(z.number()).refine((b) => b.length === 4, "give four numbers").optional().describe(
      "[min_lon, min_lat, max_lon, max_lat]",
    ),
    point: z.strictObject({
      lat: z.number().refine(lat, "must be between -90 and 90"),
      lon: z.number().refine(lon, "must be between -180 and 180"),
    }).optional().describe("Point filter (WGS 84)"),
    distance_m: z.number().min(0).max(50_000).optional().describe("Radius around point, metres"),
    // An array of [lon, lat] arrays, not a tuple: one plain type per level for strict clients.
    polygon: z.array(
      z.array(z.number()).refine(
        (p) => p.length === 2 && lon(p[0]!) && lat(p[1]!),
        "a position is [lon, lat] in range",
      ),
    ).refine((r) => r.length >= 3 && r.length <= 500, "give 3 to 500 positions").optional()
      .describe("Ring of [lon, lat] positions"),
    spatial_relation: orDefault(
      z.enum(Object.keys(SPATIAL_RELS) as [keyof typeof SPATIAL_RELS]),
      "intersects",
    )
      .describe("Default intersects"),
    out_fields: z.array(z.string().refine((f) => FIELD_RE.test(f), "a field name"))
      .refine((l) => l.length >= 1 && l.length <= 100, "give 1 to 100 fields").optional()
      .describe("Fields to return (default all)"),
    order_by: z.string().refine(
      (o) => /^[A-Za-z_][A-Za-z0-9_]{0,63}( (ASC|DESC|asc|desc))?$/.test(o),
      'a field name, optionally " ASC" or " DESC"',
    ).optional().describe('Sort, e.g. "navn ASC"'),
    limit: orDefault(z.int().min(1).max(settings.max_limit), 20).describe("Features (default 20)"),
    offset: orDefault(z.int().min(0).max(10_000_000), 0).describe("Skip this many (next_offset)"),
    include_geometry: orDefault(z.boolean(), false).describe("Include GeoJSON geometries (default false)"),
    response_format: formatField,
    output: outputField("all features"),
  }).superRefine((v, issues) => {
    const given = [v.bbox, v.point, v.polygon].filter((g) => g !== undefined).length;
    if (given > 1) {
      issues.addIssue({
        code: "custom",
        path: ["bbox"],
        message: "give at most one of bbox, point, polygon",
      });
    }
    if (v.distance_m !== undefined && v.point === undefined) {
      issues.addIssue({ code: "custom", path: ["distance_m"], message: "needs point" });
    }
    if (v.bbox) {
      const problem = bboxProblem(v.bbox, { maxSideKm: settings.max_bbox_km });
      if (problem) issues.addIssue({ code: "custom", path: ["bbox"], message: problem });
    }
  });
}

type QueryArgs = z.output<ReturnType<typeof queryInput>>;

/**
 * One query: its pages read while the server says more follow (each within the call's time),
 * the count and the layer's description alongside, the answer fitted to the limit or a file.
 */
async function answerQuery(
  a: QueryArgs,
  ctx: ToolCallContext,
  deps: ArcgisToolDeps,
): Promise<ToolOutput<z.output<typeof queryOutput>>> {
  const { client, settings } = deps;
  const call = callOptions(ctx);
  const service = serviceName(a.service, settings.base_url);
  const toFile = a.output === "file";
  const { filter, spatial } = spatialFilter(a);
  // The count and the layer's description come alongside the first page; neither may fail it.
  const ref = { service, type: "MapServer" as const, layer: a.layer };
  // They may not outlast the answer: each must end before the deadline's margin.
  const side = withTimeout(call, budgetFor(deps));
  const countP = client.query(ref, { ...filter, returnCountOnly: true }, side);
  const layerP = client.layer(ref, side);
  countP.catch(() => {});
  layerP.catch(() => {});

  const warnings: string[] = [];
  const swapHint = swappedHint(a);
  if (swapHint) warnings.push(swapHint);
  // A file reads up to file_max_features in as many pages as the call's time allows.
  const want = toFile ? Math.max(settings.file_max_features, a.limit) : a.limit;
  const got = await collectPages(deps, {
    ref,
    params: pageParams(a, filter, toFile),
    call,
    signal: ctx.signal,
    offset: a.offset,
    want,
    toFile,
    // A layer without pagination answers every page from its first feature: ask it for no
    // offset and no second page (its description comes alongside the first page).
    layerPaging: () => layerP.then((r) => parseLayer(r.data, a.layer).supports_pagination, () => null),
    warnings,
  });
  noteStops(got, { a, toFile, maxPages: settings.max_pages }, warnings);
  const [countR, layerR] = await Promise.allSettled([countP, layerP]);
  const countBody = countR.status === "fulfilled" ? asObject(countR.value.data) : undefined;
  const exactTotal = typeof countBody?.["count"] === "number" ? countBody["count"] as number : null;
  const layerInfo = layerR.status === "fulfilled" ? parseLayer(layerR.value.data, a.layer) : null;
  const fields = got.fields.length === 0 && layerInfo ? layerInfo.esriFields : got.fields;
  const layerName = layerInfo?.name ?? null;
  const pagingUnsupported = pagingVerdict(
    a,
    { service, got, paging: layerInfo?.supports_pagination ?? null },
    warnings,
  );
  const file = toFile
    ? await queryFile(got.features, {
      a,
      service,
      layerName,
      fields,
      cap: settings.file_max_features,
      exactTotal,
      got,
      pagingUnsupported,
      sourceUrl: got.sourceUrl,
      copyright: layerInfo?.copyright ?? null,
    }, ctx)
    : null;
  const rendered = renderQuery(a, {
    service,
    layerName,
    fields,
    spatial,
    got,
    exactTotal,
    pagingUnsupported,
    copyright: layerInfo?.copyright ?? null,
    warnings,
    fileLine: file?.line ?? null,
  }, ctx);
  return withFile({ text: rendered.text, structured: rendered.structured }, file);
}

/** The where clause with the spatial filter (bbox, point or polygon), and how the answer names it. */
function spatialFilter(a: QueryArgs): { filter: Record<string, QueryValue>; spatial: string | null } {
  const filter: Record<string, QueryValue> = { where: a.where };
  let spatial: string | null = null;
  const sr = { wkid: 4326 };
  const polygon = a.polygon as Position[] | undefined;
  if (a.bbox) {
    const [xmin, ymin, xmax, ymax] = a.bbox as Bbox;
    Object.assign(filter, {
      geometry: JSON.stringify({ xmin, ymin, xmax, ymax, spatialReference: sr }),
      geometryType: "esriGeometryEnvelope",
    });
    spatial = `${a.spatial_relation} bbox ${formatBbox(a.bbox as Bbox)}`;
  } else if (a.point) {
    Object.assign(filter, {
      geometry: JSON.stringify({ x: a.point.lon, y: a.point.lat, spatialReference: sr }),
      geometryType: "esriGeometryPoint",
    });
    if (a.distance_m !== undefined) {
      Object.assign(filter, { distance: a.distance_m, units: "esriSRUnit_Meter" });
    }
    spatial = `${a.spatial_relation} point ${formatLatLon(a.point)}${
      a.distance_m !== undefined ? ` within ${a.distance_m} m` : ""
    }`;
  } else if (polygon) {
    const ring = esriRing(polygon);
    Object.assign(filter, {
      geometry: JSON.stringify({ rings: [ring], spatialReference: sr }),
      geometryType: "esriGeometryPolygon",
    });
    spatial = `${a.spatial_relation} polygon of ${polygon.length} positions`;
  }
  if (spatial !== null) {
    Object.assign(filter, { inSR: 4326, spatialRel: SPATIAL_RELS[a.spatial_relation] });
  }
  return { filter, spatial };
}

/** What every page asks for beyond the filter: fields, geometry, order. */
function pageParams(
  a: QueryArgs,
  filter: Record<string, QueryValue>,
  toFile: boolean,
): Record<string, QueryValue> {
  // A JSON file carries whole geometries; elsewhere a generalised shape gives the point.
  const generalise = !a.include_geometry && !(toFile && a.response_format === "json");
  return {
    ...filter,
    outFields: a.out_fields ? a.out_fields.join(",") : "*",
    returnGeometry: true,
    outSR: 4326,
    geometryPrecision: 6,
    ...(generalise ? { maxAllowableOffset: 0.00005 } : {}),
    ...(a.order_by ? { orderByFields: a.order_by } : {}),
  };
}

/** The hint for coordinates that look swapped (lat for lon), if they do. */
function swappedHint(a: QueryArgs): string | undefined {
  const polygon = a.polygon as Position[] | undefined;
  return a.bbox
    ? swappedBboxHint(a.bbox as Bbox)
    : a.point
    ? swappedPointHint(a.point, { lat: "point.lat", lon: "point.lon" })
    : polygon
    ? swappedRingHint(polygon)
    : undefined;
}

/** Notes why reading stopped where it did: the page limit, the call's time, several pages read. */
function noteStops(
  got: Collected,
  limits: { a: QueryArgs; toFile: boolean; maxPages: number },
  warnings: string[],
): void {
  const { a, toFile } = limits;
  if (!toFile && got.features.length < a.limit && got.exceeded && got.requests >= limits.maxPages) {
    warnings.push(`Stopped after ${got.requests} requests (max_pages); continue with next_offset`);
  }
  if (got.shortOfTime) {
    warnings.push(
      `Stopped after ${got.requests} ${
        got.requests === 1 ? "page" : "pages"
      } to answer within the server's time limit for one call; continue with next_offset for the rest`,
    );
  }
  if (got.requests > 1) {
    warnings.push(
      `The server's transfer limit was reached: ${got.requests} pages were read to fill this result`,
    );
  }
}

/**
 * Whether the layer does not page. ArcGIS honours resultOffset and resultRecordCount only on
 * layers that support pagination (and then never sends more than asked); any other layer answers
 * every query from its first feature, so an offset would serve the same features again as the
 * next ones: refused, and without an offset the answer says there is no next_offset.
 */
function pagingVerdict(
  a: QueryArgs,
  layer: { service: string; got: Collected; paging: boolean | null },
  warnings: string[],
): boolean {
  const { service, got, paging } = layer;
  const pagingUnsupported = paging === false || got.repeated || (got.overflowed && paging !== true);
  if (pagingUnsupported && a.offset > 0) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `Layer ${a.layer} of "${service}" does not support paging (it ignores resultOffset), so offset ${a.offset} cannot be served: it would repeat the first features`,
      {
        field: "offset",
        hint:
          "Call with offset 0 and narrow the query with where, bbox, point or polygon to reach other features",
      },
    );
  }
  if (pagingUnsupported) {
    warnings.push(
      `Layer ${a.layer} does not support paging: only its first features can be read, so there is no next_offset; narrow the query with where, bbox, point or polygon to reach others`,
    );
  }
  return pagingUnsupported;
}

/** What the answer says beyond its features. */
interface QueryFacts {
  service: string;
  layerName: string | null;
  fields: readonly EsriField[];
  spatial: string | null;
  got: Collected;
  exactTotal: number | null;
  pagingUnsupported: boolean;
  copyright: string | null;
  warnings: string[];
  /** The file's sentence, when the features went to a file too. */
  fileLine: string | null;
}

/** The features shown, as many as fit the limit, in markdown or JSON. */
function renderQuery(
  a: QueryArgs,
  facts: QueryFacts,
  ctx: ToolCallContext,
) {
  const { service, layerName, fields, spatial, got, exactTotal, pagingUnsupported, warnings } = facts;
  const collected = got.features;
  const shownRaw = collected.slice(0, a.limit);
  const features = shownRaw.map((c) =>
    arcgisFeature(c.attrs, c.geometry, a.layer, layerName, fields, null, a.point ?? null)
  );
  if (a.include_geometry) {
    attachGeometries(features, shownRaw.map((c) => c.geometry), {
      format: a.response_format,
      characterLimit: ctx.limits.characterLimit,
      leftOutHint:
        'ask for fewer features, or write them whole with output "file" and response_format "json"',
    });
  }
  const room = ctx.limits.characterLimit - 400 - (facts.fileLine !== null ? 2 * facts.fileLine.length : 0);
  return fitToLimit(features, room, ({ items, truncated }) => {
    const shown = items.length;
    const more = truncated || collected.length > shown || got.exceeded ||
      (exactTotal !== null && a.offset + shown < exactTotal);
    const total = Math.max(exactTotal ?? 0, a.offset + shown + (more ? 1 : 0));
    const env = page(total, a.offset, shown);
    if (pagingUnsupported) env.next_offset = null;
    const structured = {
      service,
      layer: a.layer,
      layer_name: layerName,
      where: a.where,
      spatial_filter: spatial,
      features: items,
      ...env,
      total_is_exact: exactTotal !== null,
      exceeded_transfer_limit: got.exceeded,
      upstream_requests: got.requests,
      warnings,
      source_url: got.sourceUrl,
      licence: ARCGIS_LICENCE,
      coordinate_convention: COORDINATE_CONVENTION,
    };
    if (a.response_format === "json") return { text: jsonText(structured), structured };
    const lines = [
      `# ${service} layer ${a.layer}${layerName ? ` (${layerName})` : ""}`,
      `${shown ? `Features ${a.offset + 1}–${a.offset + shown}` : "No features"} of ${env.total}${
        exactTotal === null ? "+" : ""
      } for where ${a.where}${spatial ? `, ${spatial}` : ""}.`,
      "",
    ];
    items.forEach((f, i) => lines.push(arcgisFeatureMarkdown(f, a.offset + i + 1), ""));
    for (const w of warnings) lines.push(`Note: ${w}`);
    if (truncated) {
      lines.push(
        truncationNotice(shown, features.length, {
          nextOffset: env.next_offset,
          limit: ctx.limits.characterLimit,
        }),
      );
    } else if (env.next_offset !== null) lines.push(`More: call again with offset=${env.next_offset}.`);
    lines.push("", arcgisFooter(got.sourceUrl, facts.copyright));
    return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
  });
}
