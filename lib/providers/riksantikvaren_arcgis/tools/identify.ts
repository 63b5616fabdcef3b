// arcgis-identify: what every layer of a service has at one point.
import { arcgisPlacesView } from "../view.ts";
import { z } from "zod";
import { bboxAround } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../../geo/latlon.ts";
import type { Geometry, LatLon } from "../../../geo/geojson.ts";
import { attachGeometries } from "../../../geo/simplify.ts";
import { swappedPointHint } from "../../../geo/swap.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import { formatField, orDefault } from "../../../output/result_files.ts";
import { asObject, esriToGeoJson, normalizeAttributes } from "../esri.ts";
import {
  ARCGIS_LICENCE,
  arcgisFeature,
  arcgisFeatureMarkdown,
  arcgisFeatureSchema,
  arcgisFooter,
  licenceSchema,
} from "../format.ts";
import type { ArcgisFeatureOut } from "../format.ts";
import {
  type ArcgisToolDeps,
  callOptions,
  READ_ONLY,
  serviceField,
  serviceName,
  TOOLSET,
} from "../_common.ts";

const IDENTIFY_PX = 10;
const IDENTIFY_IMAGE_PX = 200;

const identifyOutput = z.looseObject({
  features: z.array(arcgisFeatureSchema),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  licence: licenceSchema,
});

/** `arcgis-identify`. */
export function identifyTool(deps: ArcgisToolDeps): ToolDefinition<z.ZodType, typeof identifyOutput> {
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
      // One budget for matching holes across the whole answer (see esri.ts).
      const work = { visits: 0 };
      for (const item of results) {
        const o = asObject(item);
        if (!o) continue;
        const attrs = normalizeAttributes(o["attributes"], []);
        const geometry = esriToGeoJson(o["geometry"], work);
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
