// The arcgis-* tools: services and layers, layer queries that page past the transfer limit,
// and identify at a point across layers.
import { arcgisPlacesView } from "./view.ts";
import { z } from "zod";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { bboxAround, bboxProblem, formatBbox } from "../../geo/bbox.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../geo/coords.ts";
import { distanceToGeometryM } from "../../geo/distance.ts";
import { representativePoint } from "../../geo/geojson.ts";
import type { Geometry, LatLon, Position } from "../../geo/geojson.ts";
import { attachGeometries } from "../../geo/simplify.ts";
import { swappedBboxHint, swappedPointHint, swappedRingHint } from "../../geo/swap.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../mcp/output.ts";
import {
  fileName,
  fileSchema,
  formatField,
  orDefault,
  outputField,
  withFile,
  written,
} from "../../output/result_files.ts";
import type { Written } from "../../output/result_files.ts";
import { nextPageBudget } from "../../http/deadline.ts";
import type { PageBudget } from "../../http/deadline.ts";
import { mapLimit } from "../../http/map_limit.ts";
import type { ArcgisClient, CallOptions, ServiceType } from "./client.ts";
import type { RiksantikvarenArcgisSettings } from "./settings.ts";
import { asObject, esriToGeoJson, normalizeAttributes, objectId, parseFields } from "./esri.ts";
import type { EsriField } from "./esri.ts";
import {
  ARCGIS_LICENCE,
  arcgisFeatureMarkdown,
  arcgisFeatureSchema,
  arcgisFooter,
  fieldsTable,
  layersTable,
  licenceSchema,
  parseFolder,
  parseLayer,
  parseService,
} from "./format.ts";
import type { ArcgisFeatureOut, LayerDetail, LayerSummary } from "./format.ts";
import { arcgisHeritage } from "./heritage.ts";

const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

const SERVICE_RE = /^[A-Za-z0-9_]{1,100}$/;
const FIELD_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** What the tools share. */
export interface ArcgisToolDeps {
  client: ArcgisClient;
  settings: RiksantikvarenArcgisSettings;
  /** The clock the call deadline is measured on (the HTTP runtime's). */
  clock: Clock;
}

/** The toolset of every arcgis-* tool. */
export const TOOLSET = "arcgis";

function serviceField(settings: RiksantikvarenArcgisSettings) {
  return orDefault(
    z.string().refine((v) => v.length >= 1 && v.length <= 140, "give 1 to 140 characters"),
    settings.default_service,
  ).describe(`Map service (default "${settings.default_service}")`);
}

/** "Kulturminner20180301" from "Kulturminner20180301" or "Distribusjon/Kulturminner20180301". */
function serviceName(input: string, baseUrl: string): string {
  const folder = new URL(baseUrl).pathname.replace(/\/+$/, "").split("/").pop() ?? "";
  const name = folder && input.toLowerCase().startsWith(`${folder.toLowerCase()}/`)
    ? input.slice(folder.length + 1)
    : input;
  if (!SERVICE_RE.test(name)) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `Invalid "service": "${input}" is not a service name of the ${
        folder || "configured"
      } folder (letters, digits and _ only)`,
      { field: "service", hint: "Call arcgis-services to list the services" },
    );
  }
  return name;
}

function folderOf(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, "").split("/").pop() ?? "";
}

// ---------------------------------------------------------------------------------------------
// arcgis-services

const servicesOutput = z.looseObject({
  services: z.array(z.looseObject({ name: z.string() })),
  layer: z.looseObject({}).nullable(),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  licence: licenceSchema,
});

type ServiceOut = {
  /** Pass as service. */
  name: string;
  full_name: string;
  type: string;
  url: string;
  layers: LayerSummary[] | null;
  max_record_count: number | null;
  copyright: string | null;
  /** Why the layers could not be read. */
  error: string | null;
};

function servicesTool(deps: ArcgisToolDeps): ToolDefinition<z.ZodType, typeof servicesOutput> {
  const { client, settings } = deps;
  const input = z.strictObject({
    service: z.string().refine((v) => v.length >= 1 && v.length <= 140, "give 1 to 140 characters").optional()
      .describe("Service to describe (default: list all)"),
    layer: z.int().min(0).max(10_000).optional().describe(
      "Layer to describe (needs service)",
    ),
    service_type: orDefault(z.enum(["MapServer", "FeatureServer"]), "MapServer").describe(
      "Default MapServer",
    ),
    limit: orDefault(z.int().min(1).max(50), 20).describe("Services per page (default 20)"),
    offset: orDefault(z.int().min(0).max(1000), 0).describe("Skip this many (next_offset)"),
    response_format: formatField,
  }).superRefine((v, issues) => {
    if (v.layer !== undefined && v.service === undefined) {
      issues.addIssue({ code: "custom", path: ["layer"], message: "needs service as well" });
    }
  });
  return {
    name: "arcgis-services",
    title: "ArcGIS services",
    toolset: TOOLSET,
    description: "Lists Riksantikvaren's map services on kart.ra.no and their layers, or one layer's fields.",
    input,
    output: servicesOutput,
    annotations: READ_ONLY,
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const call = callOptions(ctx);
      const type = a.service_type as ServiceType;
      const folder = folderOf(settings.base_url);
      let services: ServiceOut[];
      let folders: string[] = [];
      let layer: LayerDetail | null = null;
      let total = 1;
      let offset = 0;
      let sourceUrl: string;
      let level: "folder" | "service" | "layer";
      const describe = async (
        name: string,
        fullName: string,
        t: string,
        c: CallOptions = call,
      ): Promise<ServiceOut> => {
        const r = await client.service({ service: name, type: t as ServiceType }, c);
        const s = parseService(r.data);
        return {
          name,
          full_name: fullName,
          type: t,
          url: r.url,
          layers: s.layers,
          max_record_count: s.max_record_count,
          copyright: s.copyright,
          error: null,
        };
      };
      if (a.service === undefined) {
        level = "folder";
        const r = await client.root(call);
        sourceUrl = r.url;
        const listing = parseFolder(r.data, folder);
        folders = listing.folders;
        total = listing.services.length;
        offset = a.offset;
        services = await mapLimit(listing.services.slice(a.offset, a.offset + a.limit), 4, async (s) => {
          const base = {
            name: s.name,
            full_name: s.full_name,
            type: s.type,
            url: client.url(`${encodeURIComponent(s.name)}/${s.type}`),
            layers: null,
            max_record_count: null,
            copyright: null,
          };
          if (s.type !== "MapServer" && s.type !== "FeatureServer") return { ...base, error: null };
          if (s.name.includes("/")) {
            return { ...base, error: "In another folder: not reachable through this base_url" };
          }
          // Each service is its own request: those that would end past the deadline are named, not read.
          const budget = budgetFor(deps);
          if (!budget.go) {
            return {
              ...base,
              error: `Not read: this call ran short of time; call again with service "${s.name}"`,
            };
          }
          try {
            return await describe(s.name, s.full_name, s.type, withTimeout(call, budget));
          } catch (e) {
            if (ctx.signal.aborted) throw e;
            return { ...base, error: e instanceof Error ? e.message : String(e) };
          }
        });
      } else {
        const name = serviceName(a.service, settings.base_url);
        const described = await describe(name, `${folder}/${name}`, type);
        services = [described];
        sourceUrl = described.url;
        level = "service";
        if (a.layer !== undefined) {
          level = "layer";
          const r = await client.layer({ service: name, type, layer: a.layer }, call);
          const { esriFields: _, ...detail } = parseLayer(r.data, a.layer);
          layer = detail;
          sourceUrl = r.url;
        }
      }
      const rendered = fitToLimit(services, ctx.limits.characterLimit - 300, ({ items, truncated }) => {
        const env = page(total, offset, items.length);
        const structured = {
          level,
          services: items,
          layer,
          folders,
          ...env,
          source_url: sourceUrl,
          licence: ARCGIS_LICENCE,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          level === "folder"
            ? `# kart.ra.no ${folder}: ${total} services (showing ${
              items.length ? `${offset + 1}–${offset + items.length}` : "none"
            })`
            : `# kart.ra.no ${folder}/${items[0]?.name ?? ""}`,
        ];
        for (const s of items) {
          if (level === "folder") lines.push("", `## ${s.name} (${s.type})`);
          if (s.max_record_count !== null) {
            lines.push(`Transfer limit (maxRecordCount): ${s.max_record_count}`);
          }
          if (s.layers) lines.push("", s.layers.length ? layersTable(s.layers) : "(no layers)");
          if (s.error) lines.push(`Layers could not be read: ${s.error}`);
        }
        if (layer) {
          lines.push(
            "",
            `## Layer ${layer.id}: ${layer.name ?? ""}`,
            `Geometry: ${layer.geometry_type ?? "none"} · display field: ${
              layer.display_field ?? "?"
            } · maxRecordCount: ${layer.max_record_count ?? "?"} · paging: ${
              layer.supports_pagination === null ? "?" : layer.supports_pagination ? "yes" : "no"
            }`,
            "",
            fieldsTable(layer.fields),
          );
        }
        if (folders.length) {
          lines.push("", `Sub-folders (not served through this base_url): ${folders.join(", ")}`);
        }
        lines.push("", 'Next: arcgis-query with {"service": "<name>", "layer": <id>, "where": "..."}.');
        if (env.has_more) {
          lines.push(
            truncated
              ? truncationNotice(items.length, total - offset, {
                nextOffset: env.next_offset,
                limit: ctx.limits.characterLimit,
              })
              : `More services: call again with offset=${env.next_offset}.`,
          );
        }
        lines.push("", arcgisFooter(sourceUrl));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// arcgis-query

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

/** What the query loop gathered. */
interface Collected {
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

function queryTool(deps: ArcgisToolDeps): ToolDefinition<z.ZodType, typeof queryOutput> {
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

/**
 * output "file": every feature the query loop read (up to `file_max_features`), as attribute rows
 * in CSV or a GeoJSON FeatureCollection; a partial file says which offset goes on.
 */
async function queryFile(
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

// ---------------------------------------------------------------------------------------------
// arcgis-identify

const IDENTIFY_PX = 10;
const IDENTIFY_IMAGE_PX = 200;

const identifyOutput = z.looseObject({
  features: z.array(arcgisFeatureSchema),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  licence: licenceSchema,
});

function identifyTool(deps: ArcgisToolDeps): ToolDefinition<z.ZodType, typeof identifyOutput> {
  const { client, settings } = deps;
  const input = z.strictObject({
    lat: z.number().refine((v) => v >= -90 && v <= 90, "must be between -90 and 90").describe(
      "Latitude (WGS 84)",
    ),
    lon: z.number().refine((v) => v >= -180 && v <= 180, "must be between -180 and 180").describe(
      "Longitude (WGS 84)",
    ),
    service: serviceField(settings),
    layers: z.array(z.int().min(0).max(10_000))
      .refine((l) => l.length >= 1 && l.length <= 50, "give 1 to 50 layer ids").optional()
      .describe("Layer ids (default all)"),
    tolerance_m: orDefault(z.number().min(1).max(1000), 25).describe("Tolerance in metres (default 25)"),
    limit: orDefault(z.int().min(1).max(100), 20).describe("Features, nearest first (default 20)"),
    offset: orDefault(z.int().min(0).max(10_000), 0).describe("Skip this many (next_offset)"),
    include_geometry: orDefault(z.boolean(), false).describe("Include GeoJSON geometries (default false)"),
    response_format: formatField,
  });
  return {
    name: "arcgis-identify",
    title: "ArcGIS identify",
    toolset: TOOLSET,
    description:
      "What protected site, monument or zone is at a point? Features of all layers within tolerance_m, nearest first.",
    input,
    output: identifyOutput,
    view: arcgisPlacesView,
    annotations: READ_ONLY,
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const service = serviceName(a.service, settings.base_url);
      const point: LatLon = { lat: a.lat, lon: a.lon };
      // The map extent is sized so that IDENTIFY_PX pixels of the image span tolerance_m metres.
      const halfM = (a.tolerance_m / IDENTIFY_PX) * (IDENTIFY_IMAGE_PX / 2);
      const extent = bboxAround(point, halfM);
      const layers = a.layers ? `all:${a.layers.join(",")}` : "all";
      const r = await client.identify(service, {
        geometry: JSON.stringify({ x: a.lon, y: a.lat, spatialReference: { wkid: 4326 } }),
        geometryType: "esriGeometryPoint",
        sr: 4326,
        layers,
        tolerance: IDENTIFY_PX,
        mapExtent: extent.map((v) => v.toFixed(7)).join(","),
        imageDisplay: `${IDENTIFY_IMAGE_PX},${IDENTIFY_IMAGE_PX},96`,
        returnGeometry: true,
        geometryPrecision: 6,
        ...(a.include_geometry ? {} : { maxAllowableOffset: 0.00005 }),
        returnFieldName: true,
        returnUnformattedValues: true,
      }, callOptions(ctx));
      const body = asObject(r.data) ?? {};
      const results = Array.isArray(body["results"]) ? body["results"] : [];
      const all: { out: ArcgisFeatureOut; geometry: Geometry | null }[] = [];
      for (const item of results) {
        const o = asObject(item);
        if (!o) continue;
        const attrs = normalizeAttributes(o["attributes"], []);
        const geometry = esriToGeoJson(o["geometry"]);
        const layerId = typeof o["layerId"] === "number" ? o["layerId"] : -1;
        const layerName = typeof o["layerName"] === "string" ? o["layerName"] : null;
        const value = typeof o["value"] === "string" && o["value"] !== "Null" ? o["value"] : null;
        all.push({ out: arcgisFeature(attrs, geometry, layerId, layerName, [], value, point), geometry });
      }
      all.sort((x, y) =>
        (x.out.distance_m ?? Infinity) - (y.out.distance_m ?? Infinity) || x.out.layer_id - y.out.layer_id
      );
      const swapHint = swappedPointHint(point);
      const slice = all.slice(a.offset, a.offset + a.limit);
      const features = slice.map((s) => s.out);
      if (a.include_geometry) {
        attachGeometries(features, slice.map((s) => s.geometry), {
          format: a.response_format,
          characterLimit: ctx.limits.characterLimit,
          leftOutHint: "ask for fewer features",
        });
      }
      const rendered = fitToLimit(features, ctx.limits.characterLimit - 400, ({ items, truncated }) => {
        const env = page(all.length, a.offset, items.length);
        const structured = {
          service,
          point: roundLatLon(point),
          tolerance_m: a.tolerance_m,
          layers,
          features: items,
          ...env,
          exceeded_transfer_limit: body["exceededTransferLimit"] === true,
          warnings: swapHint ? [swapHint] : [],
          source_url: r.url,
          licence: ARCGIS_LICENCE,
          coordinate_convention: COORDINATE_CONVENTION,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          `# ${service}: features at ${formatLatLon(point)} (within about ${a.tolerance_m} m)`,
          all.length
            ? `${all.length} found; nearest first.`
            : swapHint
            ? `Nothing found here. ${swapHint}`
            : "Nothing found here. Try a larger tolerance_m.",
          "",
        ];
        if (all.length && swapHint) lines.push(`Note: ${swapHint}`, "");
        items.forEach((f, i) => lines.push(arcgisFeatureMarkdown(f, a.offset + i + 1), ""));
        if (truncated) {
          lines.push(
            truncationNotice(items.length, all.length - a.offset, {
              nextOffset: env.next_offset,
              limit: ctx.limits.characterLimit,
            }),
          );
        } else if (env.has_more) lines.push(`More: call again with offset=${env.next_offset}.`);
        lines.push("", arcgisFooter(r.url));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// shared helpers

/** The three arcgis-* tools. */
// deno-lint-ignore no-explicit-any
export function arcgisTools(deps: ArcgisToolDeps): ToolDefinition<any, any>[] {
  return [servicesTool(deps), queryTool(deps), identifyTool(deps)];
}

function callOptions(ctx: ToolCallContext): CallOptions {
  return { signal: ctx.signal, logger: ctx.logger };
}

function budgetFor(deps: ArcgisToolDeps): PageBudget {
  return nextPageBudget(deps.clock.now(), deps.settings);
}

/** The call's options with the budget's timeout, when it has one. */
function withTimeout(call: CallOptions, budget: PageBudget): CallOptions {
  return budget.go && budget.timeoutMs !== undefined ? { ...call, timeoutMs: budget.timeoutMs } : call;
}

function arcgisFeature(
  attrs: Record<string, unknown>,
  geometry: Geometry | null,
  layerId: number,
  layerName: string | null,
  fields: readonly EsriField[],
  displayValue: string | null,
  from: LatLon | null,
): ArcgisFeatureOut {
  const h = arcgisHeritage(attrs, layerName);
  const p = geometry ? representativePoint(geometry) : null;
  const rp = p ? roundLatLon(p) : null;
  const d = from && geometry ? distanceToGeometryM(from, geometry) : null;
  return {
    layer_id: layerId,
    layer_name: layerName,
    object_id: objectId(attrs, fields),
    display_value: displayValue,
    ...h,
    description: h.description && h.description.length > 500
      ? `${h.description.slice(0, 499)}…`
      : h.description,
    lat: rp?.lat ?? null,
    lon: rp?.lon ?? null,
    distance_m: d === null ? null : Math.round(d * 10) / 10,
    geometry_type: geometry?.type ?? null,
    geometry: null,
    geometry_note: null,
    attributes: attrs,
  };
}

/** Esri wants outer rings clockwise; a GeoJSON-style (counter-clockwise) ring is reversed. */
function esriRing(positions: Position[]): Position[] {
  const ring = positions.slice();
  const first = ring[0]!;
  const last = ring[ring.length - 1]!;
  if (first[0] !== last[0] || first[1] !== last[1]) ring.push([first[0], first[1]]);
  let area = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    area += ring[j]![0] * ring[i]![1] - ring[i]![0] * ring[j]![1];
  }
  return area > 0 ? ring.reverse() : ring;
}
