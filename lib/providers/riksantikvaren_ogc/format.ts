// Output shapes (zod, for outputSchema) and markdown of the riksantikvaren-* tools.
import { z } from "zod";
import { formatBbox } from "../../geo/bbox.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon } from "../../geo/latlon.ts";
import { markdownTable, shorten } from "../../mcp/shaping.ts";
import type { HeritageFields } from "./heritage.ts";

// Output schemas are compact, since every agent pays for them on every turn: no descriptions (the
// tool description and the text say what fields mean), open objects where only a few fields are
// worth declaring.

/** Output-schema shape of a licence line (results carry name, url and note). */
export const licenceSchema = z.looseObject({ name: z.string() });

/** A licence line. */
export type LicenceOut = {
  /** Licence name as the data gives it, or the dataset's known licence. */
  name: string;
  url: string | null;
  /** Attribution or caveat to pass on with the data. */
  note: string | null;
};

/** Output-schema shape of one feature in results. */
export const featureSchema = z.looseObject({ id: z.string().nullable(), name: z.string().nullable() });

/** One feature in results. */
export type FeatureOut =
  & {
    /** Feature id (pass to riksantikvaren-feature). */
    id: string | null;
  }
  & HeritageFields
  & {
    /** A representative point (WGS 84). */
    lat: number | null;
    lon: number | null;
    geometry_type: string | null;
    /** The GeoJSON geometry when asked for (include_geometry), possibly simplified; positions [lon, lat]. */
    geometry: ({ type: string } & Record<string, unknown>) | null;
    /** Says when the geometry was simplified or left out. */
    geometry_note: string | null;
    /** This feature on the OGC API. */
    api_url: string;
    /** The upstream properties (scalars only in lists). */
    properties: Record<string, unknown>;
  };

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
