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
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import { fileSchema, formatField, orDefault, outputField, withFile } from "../../../output/result_files.ts";
import { asObject, esriRing, esriToGeoJson, normalizeAttributes, objectId, parseFields } from "../esri.ts";
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
  const { client, settings } = deps;
  const lon = (v: number) => v >= -180 && v <= 180;
  const lat = (v: number) => v >= -90 && v <= 90;
  const input = z.strictObject({
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
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const call = callOptions(ctx);
      const service = serviceName(a.service, settings.base_url);
      const toFile = a.output === "file";
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
      // A JSON file carries whole geometries; elsewhere a generalised shape gives the point.
      const generalise = !a.include_geometry && !(toFile && a.response_format === "json");
      const common: Record<string, QueryValue> = {
        ...filter,
        outFields: a.out_fields ? a.out_fields.join(",") : "*",
        returnGeometry: true,
        outSR: 4326,
        geometryPrecision: 6,
        ...(generalise ? { maxAllowableOffset: 0.00005 } : {}),
        ...(a.order_by ? { orderByFields: a.order_by } : {}),
      };
      // The count and the layer's description come alongside the first page; neither may fail it.
      const ref = { service, type: "MapServer" as const, layer: a.layer };
      // They may not outlast the answer: each must end before the deadline's margin.
      const side = withTimeout(call, budgetFor(deps));
      const countP = client.query(ref, { ...filter, returnCountOnly: true }, side);
      const layerP = client.layer(ref, side);
      countP.catch(() => {});
      layerP.catch(() => {});

      const warnings: string[] = [];
      const swapHint = a.bbox
        ? swappedBboxHint(a.bbox as Bbox)
        : a.point
        ? swappedPointHint(a.point, { lat: "point.lat", lon: "point.lon" })
        : polygon
        ? swappedRingHint(polygon)
        : undefined;
      if (swapHint) warnings.push(swapHint);
      // A layer without pagination answers every page from its first feature: ask it for no
      // offset and no second page (its description comes alongside the first page).
      const layerPaging = (): Promise<boolean | null> =>
        layerP.then((r) => parseLayer(r.data, a.layer).supports_pagination, () => null);
      // A file reads up to file_max_features in as many pages as the call's time allows.
      const want = toFile ? Math.max(settings.file_max_features, a.limit) : a.limit;
      const got: Collected = {
        features: [],
        fields: [],
        exceeded: false,
        requests: 0,
        sourceUrl: "",
        next: a.offset,
        repeated: false,
        shortOfTime: false,
        overflowed: false,
        failed: false,
      };
      const seen = new Set<string>();
      while (got.features.length < want && (toFile || got.requests < settings.max_pages)) {
        if ((got.requests > 0 || a.offset > 0) && (await layerPaging()) === false) break;
        let pageCall = call;
        if (got.requests > 0) {
          const budget = budgetFor(deps);
          if (!budget.go) {
            got.shortOfTime = true;
            break;
          }
          pageCall = withTimeout(call, budget);
        }
        let r;
        try {
          r = await client.query(ref, {
            ...common,
            resultOffset: got.next,
            resultRecordCount: want - got.features.length,
          }, pageCall);
        } catch (e) {
          // What the earlier pages brought is still an answer; next_offset asks for the rest.
          if (got.requests === 0 || ctx.signal.aborted || !(e instanceof ToolError) || !e.retryable) throw e;
          if (e.errorType === "TIMEOUT") got.shortOfTime = true;
          else {
            got.failed = true;
            warnings.push(`The page at offset ${got.next} failed: ${e.message}; continue with next_offset`);
          }
          break;
        }
        got.requests++;
        if (!got.sourceUrl) got.sourceUrl = r.url;
        const body = asObject(r.data) ?? {};
        if (got.fields.length === 0) got.fields = parseFields(body["fields"]);
        const list = Array.isArray(body["features"]) ? body["features"] : [];
        got.exceeded = body["exceededTransferLimit"] === true;
        let fresh = 0;
        for (const item of list) {
          const f = asObject(item);
          if (!f) continue;
          const attrs = normalizeAttributes(f["attributes"], got.fields);
          const oid = objectId(attrs, got.fields);
          if (oid !== null && seen.has(oid)) continue;
          if (oid !== null) seen.add(oid);
          got.features.push({ attrs, geometry: esriToGeoJson(f["geometry"]) });
          fresh++;
        }
        got.next += list.length;
        if (list.length > 0 && fresh === 0) {
          warnings.push(
            "The layer sent the same features again for a later offset: it may not support paging",
          );
          got.repeated = true;
          got.exceeded = false;
          break;
        }
        if (list.length === 0 || !got.exceeded) break;
      }
      // A server that ignores resultRecordCount sends more than asked: keep the page size.
      got.overflowed = got.features.length > want;
      if (got.overflowed) {
        got.features.length = want;
        got.exceeded = true;
        warnings.push(
          "The server sent more features than asked for (it may not support paging); the rest were left out",
        );
      }
      const collected = got.features;
      if (!toFile && collected.length < a.limit && got.exceeded && got.requests >= settings.max_pages) {
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
      const [countR, layerR] = await Promise.allSettled([countP, layerP]);
      const countBody = countR.status === "fulfilled" ? asObject(countR.value.data) : undefined;
      const exactTotal = typeof countBody?.["count"] === "number" ? countBody["count"] as number : null;
      const layerInfo = layerR.status === "fulfilled" ? parseLayer(layerR.value.data, a.layer) : null;
      const fields = got.fields.length === 0 && layerInfo ? layerInfo.esriFields : got.fields;
      const layerName = layerInfo?.name ?? null;
      // ArcGIS honours resultOffset and resultRecordCount only on layers that support pagination
      // (and then never sends more than asked); any other layer answers every query from its
      // first feature, so an offset would serve the same features again as the next ones.
      const paging = layerInfo?.supports_pagination ?? null;
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
      const file = toFile
        ? await queryFile(collected, {
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
      const room = ctx.limits.characterLimit - 400 - (file ? 2 * file.line.length : 0);
      const rendered = fitToLimit(features, room, ({ items, truncated }) => {
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
        lines.push("", arcgisFooter(got.sourceUrl, layerInfo?.copyright ?? null));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return withFile({ text: rendered.text, structured: rendered.structured }, file);
    },
  };
}
