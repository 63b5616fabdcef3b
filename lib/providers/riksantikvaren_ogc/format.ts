// Output shapes (zod, for outputSchema) and markdown of the riksantikvaren-* tools.
import { z } from "zod";
import { formatBbox } from "../../geo/bbox.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon } from "../../geo/coords.ts";
import { markdownTable, shorten } from "../../mcp/output.ts";

/** zod shape of a licence line. */
export const licenceSchema = z.object({
  name: z.string().describe("Licence name as the data gives it, or the dataset's known licence"),
  url: z.string().nullable().describe("Licence text URL"),
  note: z.string().nullable().describe("Attribution or caveat to pass on with the data"),
});

/** A licence line. */
export type LicenceOut = z.output<typeof licenceSchema>;

/** zod shape of a GeoJSON geometry (positions [lon, lat]). */
export const geometrySchema = z.looseObject({
  type: z.string().describe("GeoJSON geometry type"),
}).describe("GeoJSON geometry; positions are [lon, lat] (GeoJSON order)");

/** zod shape of one feature in results. */
export const featureSchema = z.object({
  id: z.string().nullable().describe("Feature id (pass to riksantikvaren-feature)"),
  name: z.string().nullable().describe("Name (navn/tittel)"),
  category: z.string().nullable().describe("Category and kind (e.g. kulturminneKategori, lokalitetsart)"),
  protection: z.string().nullable().describe("Protection status: vernetype, law and section"),
  municipality: z.string().nullable().describe("Municipality (kommune; often the 4-digit number)"),
  county: z.string().nullable().describe("County (fylke)"),
  dating: z.string().nullable().describe("Dating or period"),
  description: z.string().nullable().describe("Description (informasjon/beskrivelse); shortened in lists"),
  kulturminnesok_url: z.string().nullable().describe("Page on Kulturminnesøk"),
  images: z.array(z.object({
    url: z.string(),
    licence: z.string().nullable(),
    photographer: z.string().nullable(),
  })).describe("Photos (user-contributed memories only), each with its own licence"),
  lat: z.number().nullable().describe("Latitude of a representative point (WGS 84)"),
  lon: z.number().nullable().describe("Longitude of a representative point (WGS 84)"),
  geometry_type: z.string().nullable().describe("GeoJSON type of the feature's geometry"),
  geometry: geometrySchema.nullable().describe(
    "The geometry when asked for (include_geometry), possibly simplified; positions [lon, lat]",
  ),
  geometry_note: z.string().nullable().describe("Says when the geometry was simplified or left out"),
  api_url: z.string().describe("This feature on the OGC API"),
  properties: z.record(z.string(), z.unknown()).describe("The upstream properties (scalars only in lists)"),
});

/** One feature in results. */
export type FeatureOut = z.output<typeof featureSchema>;

/** A feature with its distance (nearby). */
export type NearbyFeatureOut = FeatureOut & { distance_m: number };

/** The markdown of one feature in a list. */
export function featureMarkdown(f: FeatureOut & { distance_m?: number }, n: number | null): string {
  const title = `${n === null ? "##" : `### ${n}.`} ${f.name ?? "(no name)"}`;
  const lines = [title];
  const add = (label: string, value: string | null | undefined) => {
    if (value) lines.push(`- ${label}: ${value}`);
  };
  add("ID", f.id);
  if (f.distance_m !== undefined) add("Distance", formatDistance(f.distance_m));
  add("Category", f.category);
  add("Protection", f.protection);
  add("Municipality", f.municipality);
  add("County", f.county);
  add("Dating", f.dating);
  if (f.lat !== null && f.lon !== null) {
    add(
      "Location",
      `${formatLatLon({ lat: f.lat, lon: f.lon })} (GeoJSON [${f.lon}, ${f.lat}])${
        f.geometry_type ? ` · ${f.geometry_type}` : ""
      }`,
    );
  } else {
    add("Location", "none in the data");
  }
  add("Kulturminnesøk", f.kulturminnesok_url);
  for (const img of f.images.slice(0, 2)) {
    add(
      "Photo",
      `${img.url}${img.licence ? ` (${img.licence}${img.photographer ? `, ${img.photographer}` : ""})` : ""}`,
    );
  }
  add("About", f.description ? shorten(f.description, n === null ? 2000 : 280) : null);
  if (f.geometry_note) add("Geometry", f.geometry_note);
  return lines.join("\n");
}

/** The closing lines every result carries: source, licence and the coordinate convention. */
export function footer(sourceUrl: string, licence: LicenceOut): string {
  return [
    `Source: ${sourceUrl}`,
    `Licence: ${licence.name}${licence.url ? ` (${licence.url})` : ""}${
      licence.note ? `. ${licence.note}` : ""
    }`,
    COORDINATE_CONVENTION,
  ].join("\n");
}

/** Markdown of collections: id, title, extent. */
export function collectionsTable(
  rows: readonly {
    id: string;
    title: string | null;
    item_type: string | null;
    bbox: readonly number[] | null;
  }[],
): string {
  return markdownTable(
    ["collection", "title", "type", "extent [min_lon, min_lat, max_lon, max_lat]"],
    rows.map((
      c,
    ) => [
      c.id,
      c.title ?? "",
      c.item_type ?? "",
      c.bbox && c.bbox.length === 4 ? formatBbox(c.bbox as Bbox, 3) : "",
    ]),
  );
}

/** `120 m` or `2.4 km`. */
export function formatDistance(m: number): string {
  return m < 1000 ? `${Math.round(m)} m` : `${(m / 1000).toFixed(m < 10_000 ? 2 : 1)} km`;
}
