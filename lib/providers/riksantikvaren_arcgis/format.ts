// Output shapes (zod) and markdown of the arcgis-* tools, and readers of the service listings.
import { z } from "zod";
import { COORDINATE_CONVENTION, formatLatLon } from "../../geo/coords.ts";
import { markdownTable, shorten } from "../../mcp/output.ts";
import { asObject, parseFields } from "./esri.ts";
import type { EsriField } from "./esri.ts";

/** The licence line of kart.ra.no data. */
export const ARCGIS_LICENCE = {
  name: "NLOD 2.0 (Norwegian Licence for Open Government Data)",
  url: "https://data.norge.no/nlod/en/2.0",
  note: "Credit: Riksantikvaren (the Norwegian Directorate for Cultural Heritage)",
};

/** zod shape of the licence line. */
export const licenceSchema = z.object({
  name: z.string(),
  url: z.string().nullable(),
  note: z.string().nullable().describe("Attribution to pass on with the data"),
});

/** zod shape of one feature in query and identify results. */
export const arcgisFeatureSchema = z.object({
  layer_id: z.number().int().describe("Layer id"),
  layer_name: z.string().nullable(),
  object_id: z.string().nullable().describe("OBJECTID of the feature in its layer"),
  display_value: z.string().nullable().describe("The layer's display field value (identify)"),
  name: z.string().nullable().describe("Name (navn)"),
  category: z.string().nullable().describe("Category (kulturminneKategori) and original function"),
  protection: z.string().nullable().describe("Protection status: vernetype, law and section"),
  municipality: z.string().nullable().describe("Municipality (kommune)"),
  dating: z.string().nullable().describe("Dating (kulturminneDatering)"),
  description: z.string().nullable().describe("Description (informasjon), shortened"),
  kulturminnesok_url: z.string().nullable().describe("Page on Kulturminnesøk"),
  lat: z.number().nullable().describe("Latitude of a representative point (WGS 84)"),
  lon: z.number().nullable().describe("Longitude of a representative point (WGS 84)"),
  distance_m: z.number().nullable().describe(
    "Distance from the given point in metres (0 inside), when a point was given",
  ),
  geometry_type: z.string().nullable().describe("GeoJSON type of the geometry"),
  geometry: z.looseObject({ type: z.string() }).nullable().describe(
    "GeoJSON geometry when asked for (include_geometry); positions [lon, lat]",
  ),
  geometry_note: z.string().nullable().describe("Says when the geometry was simplified or left out"),
  attributes: z.record(z.string(), z.unknown()).describe("The layer's attributes (dates as YYYY-MM-DD)"),
});

/** One feature in results. */
export type ArcgisFeatureOut = z.output<typeof arcgisFeatureSchema>;

/** A service in the folder listing. */
export interface ServiceEntry {
  /** Name within the configured folder ("Kulturminner20180301"). */
  name: string;
  /** Name as the server lists it ("Distribusjon/Kulturminner20180301"). */
  full_name: string;
  type: string;
}

/** Reads the folder listing (`services[]`, `folders[]`). */
export function parseFolder(data: unknown, folder: string): { services: ServiceEntry[]; folders: string[] } {
  const root = asObject(data);
  const services: ServiceEntry[] = [];
  for (const s of Array.isArray(root?.["services"]) ? root["services"] : []) {
    const o = asObject(s);
    if (typeof o?.["name"] !== "string") continue;
    const full = o["name"];
    const prefix = `${folder}/`;
    const name = full.toLowerCase().startsWith(prefix.toLowerCase()) ? full.slice(prefix.length) : full;
    services.push({ name, full_name: full, type: typeof o["type"] === "string" ? o["type"] : "" });
  }
  const folders = (Array.isArray(root?.["folders"]) ? root["folders"] : []).filter((f): f is string =>
    typeof f === "string"
  );
  return { services, folders };
}

/** zod shape of a layer summary. */
export const layerSummarySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string().nullable().describe('"Feature Layer", "Group Layer", ... when the server says'),
  geometry_type: z.string().nullable(),
  parent_layer_id: z.number().int().nullable(),
  sub_layer_ids: z.array(z.number().int()),
});

/** A layer summary. */
export type LayerSummary = z.output<typeof layerSummarySchema>;

/** Reads a service description. */
export function parseService(data: unknown): {
  description: string | null;
  copyright: string | null;
  max_record_count: number | null;
  capabilities: string | null;
  layers: LayerSummary[];
  tables: { id: number; name: string }[];
} {
  const root = asObject(data) ?? {};
  const layers: LayerSummary[] = [];
  for (const l of Array.isArray(root["layers"]) ? root["layers"] : []) {
    const o = asObject(l);
    if (!o || typeof o["id"] !== "number" || typeof o["name"] !== "string") continue;
    const parent = typeof o["parentLayerId"] === "number" && o["parentLayerId"] >= 0
      ? o["parentLayerId"]
      : null;
    layers.push({
      id: o["id"],
      name: o["name"],
      type: text(o["type"]),
      geometry_type: text(o["geometryType"]),
      parent_layer_id: parent,
      sub_layer_ids: Array.isArray(o["subLayerIds"])
        ? o["subLayerIds"].filter((n): n is number => Number.isInteger(n))
        : [],
    });
  }
  const tables: { id: number; name: string }[] = [];
  for (const t of Array.isArray(root["tables"]) ? root["tables"] : []) {
    const o = asObject(t);
    if (o && typeof o["id"] === "number" && typeof o["name"] === "string") {
      tables.push({ id: o["id"], name: o["name"] });
    }
  }
  return {
    description: text(root["serviceDescription"]) ?? text(root["description"]),
    copyright: text(root["copyrightText"]),
    max_record_count: typeof root["maxRecordCount"] === "number" ? root["maxRecordCount"] : null,
    capabilities: text(root["capabilities"]),
    layers,
    tables,
  };
}

/** zod shape of a layer description. */
export const layerDetailSchema = z.object({
  id: z.number().int(),
  name: z.string().nullable(),
  type: z.string().nullable(),
  geometry_type: z.string().nullable(),
  display_field: z.string().nullable(),
  description: z.string().nullable(),
  copyright: z.string().nullable(),
  max_record_count: z.number().int().nullable().describe(
    "Most features one request returns (the transfer limit)",
  ),
  supports_pagination: z.boolean().nullable(),
  fields: z.array(z.object({ name: z.string(), type: z.string().nullable(), alias: z.string().nullable() })),
});

/** A layer description. */
export type LayerDetail = z.output<typeof layerDetailSchema>;

/** Reads a layer description. */
export function parseLayer(data: unknown, id: number): LayerDetail & { esriFields: EsriField[] } {
  const root = asObject(data) ?? {};
  const adv = asObject(root["advancedQueryCapabilities"]);
  const paging = typeof adv?.["supportsPagination"] === "boolean"
    ? adv["supportsPagination"]
    : typeof root["supportsPagination"] === "boolean"
    ? root["supportsPagination"]
    : null;
  const fields = parseFields(root["fields"]);
  return {
    id: typeof root["id"] === "number" ? root["id"] : id,
    name: text(root["name"]),
    type: text(root["type"]),
    geometry_type: text(root["geometryType"]),
    display_field: text(root["displayField"]),
    description: text(root["description"]),
    copyright: text(root["copyrightText"]),
    max_record_count: typeof root["maxRecordCount"] === "number" ? root["maxRecordCount"] : null,
    supports_pagination: paging,
    fields,
    esriFields: fields,
  };
}

/** Markdown of one feature. */
export function arcgisFeatureMarkdown(f: ArcgisFeatureOut, n: number): string {
  const lines = [`### ${n}. ${f.name ?? f.display_value ?? "(no name)"}`];
  const add = (label: string, value: string | null) => {
    if (value) lines.push(`- ${label}: ${value}`);
  };
  add(
    "Layer",
    `${f.layer_id}${f.layer_name ? ` ${f.layer_name}` : ""}${
      f.object_id ? ` · OBJECTID ${f.object_id}` : ""
    }`,
  );
  if (f.distance_m !== null) add("Distance", `${Math.round(f.distance_m)} m`);
  add("Category", f.category);
  add("Protection", f.protection);
  add("Municipality", f.municipality);
  add("Dating", f.dating);
  if (f.lat !== null && f.lon !== null) {
    add(
      "Location",
      `${formatLatLon({ lat: f.lat, lon: f.lon })} (GeoJSON [${f.lon}, ${f.lat}])${
        f.geometry_type ? ` · ${f.geometry_type}` : ""
      }`,
    );
  }
  add("Kulturminnesøk", f.kulturminnesok_url);
  add("About", f.description ? shorten(f.description, 280) : null);
  add("Geometry", f.geometry_note);
  return lines.join("\n");
}

/** Markdown table of layers. */
export function layersTable(layers: readonly LayerSummary[]): string {
  return markdownTable(
    ["id", "name", "type", "geometry", "parent"],
    layers.map((l) => [l.id, l.name, l.type ?? "", l.geometry_type ?? "", l.parent_layer_id ?? ""]),
  );
}

/** Markdown table of fields. */
export function fieldsTable(
  fields: readonly { name: string; type: string | null; alias: string | null }[],
): string {
  return markdownTable(
    ["field", "type", "alias"],
    fields.map((f) => [f.name, (f.type ?? "").replace(/^esriFieldType/, ""), f.alias ?? ""]),
  );
}

/** Source, licence and the coordinate convention. */
export function arcgisFooter(sourceUrl: string, copyright: string | null = null): string {
  return [
    `Source: ${sourceUrl}`,
    `Licence: ${ARCGIS_LICENCE.name} (${ARCGIS_LICENCE.url}). ${ARCGIS_LICENCE.note}${
      copyright ? `. Service copyright: ${copyright}` : ""
    }`,
    COORDINATE_CONVENTION,
  ].join("\n");
}

function text(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}
