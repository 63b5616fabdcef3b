// Output shapes (zod) and markdown of the arcgis-* tools, and readers of the service listings.
import { z } from "zod";
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../geo/latlon.ts";
import { markdownTable, shorten } from "../../mcp/shaping.ts";
import type { ArcgisHeritage } from "./heritage.ts";
import { asObject, objectId, parseFields } from "./esri.ts";
import type { EsriField } from "./esri.ts";
import { distanceToGeometryM } from "../../geo/distance.ts";
import { representativePoint } from "../../geo/geojson.ts";
import type { Geometry, LatLon } from "../../geo/geojson.ts";
import { arcgisHeritage } from "./heritage.ts";

/** The licence line of kart.ra.no data. */
export const ARCGIS_LICENCE = {
  name: "NLOD 2.0 (Norwegian Licence for Open Government Data)",
  url: "https://data.norge.no/nlod/en/2.0",
  note: "Credit: Riksantikvaren (the Norwegian Directorate for Cultural Heritage)",
};

// Output schemas are compact, since every agent pays for them on every turn: no descriptions (the
// tool description and the text say what fields mean), open objects where only a few fields are
// worth declaring.

/** Output-schema shape of the licence line. */
export const licenceSchema = z.looseObject({ name: z.string() });

/** Output-schema shape of one feature in query and identify results. */
export const arcgisFeatureSchema = z.looseObject({ layer_id: z.number(), name: z.string().nullable() });

/** One feature in results. */
export type ArcgisFeatureOut =
  & {
    layer_id: number;
    layer_name: string | null;
    /** OBJECTID of the feature in its layer. */
    object_id: string | null;
    /** The layer's display field value (identify). */
    display_value: string | null;
  }
  & ArcgisHeritage
  & {
    /** A representative point (WGS 84). */
    lat: number | null;
    lon: number | null;
    /** Distance from the given point in metres (0 inside), when a point was given. */
    distance_m: number | null;
    geometry_type: string | null;
    /** GeoJSON geometry when asked for (include_geometry); positions [lon, lat]. */
    geometry: ({ type: string } & Record<string, unknown>) | null;
    /** Says when the geometry was simplified or left out. */
    geometry_note: string | null;
    /** The layer's attributes (dates as YYYY-MM-DD). */
    attributes: Record<string, unknown>;
  };

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

/** A layer summary. */
export type LayerSummary = {
  id: number;
  name: string;
  /** "Feature Layer", "Group Layer", ... when the server says. */
  type: string | null;
  geometry_type: string | null;
  parent_layer_id: number | null;
  sub_layer_ids: number[];
};

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

/** A layer description. */
export type LayerDetail = {
  id: number;
  name: string | null;
  type: string | null;
  geometry_type: string | null;
  display_field: string | null;
  description: string | null;
  copyright: string | null;
  /** Most features one request returns (the transfer limit). */
  max_record_count: number | null;
  supports_pagination: boolean | null;
  fields: { name: string; type: string | null; alias: string | null }[];
};

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

/** One feature as the arcgis-* tools return it: heritage fields, a representative point, the distance from `from`. */
export function arcgisFeature(
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
