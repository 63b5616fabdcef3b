// riksantikvaren-feature: one feature by id, with all its properties and its geometry.
import { ogcPlacesView } from "../view.ts";
import { cite } from "../../../output/provenance.ts";
import { z } from "zod";
import { COORDINATE_CONVENTION } from "../../../geo/latlon.ts";
import { fitGeometryPaced, simplificationNote } from "../../../geo/simplify.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { jsonText, shorten } from "../../../mcp/shaping.ts";
import {
  callOptions,
  collectionField,
  datasetField,
  featureOut,
  ID_RE,
  licenceOut,
  READ_ONLY,
  resolveDataset,
  TOOLSET,
} from "../_common.ts";
import {
  fileName,
  formatField,
  orDefault,
  outputField,
  withFile,
  written,
} from "../../../output/result_files.ts";
import { geoJsonFeature } from "../rows.ts";
import type { OgcToolDeps } from "../_common.ts";
import { featureMarkdown, featureSchema, footer, licenceSchema } from "../format.ts";
import { geometrySummary } from "../../../geo/summary.ts";
import { countVertices } from "../../../geo/geojson.ts";
import type { Geometry } from "../../../geo/types.ts";
import type { FeatureOut } from "../format.ts";
import { compactProperties, pick } from "../heritage.ts";
import { Pace } from "../../../http/json_sliced.ts";

const featureOutput = z.looseObject({ feature: featureSchema, licence: licenceSchema });

/** The riksantikvaren-feature tool. */
export function featureTool(deps: OgcToolDeps): ToolDefinition<z.ZodType, typeof featureOutput> {
  const input = z.strictObject({
    dataset: datasetField.optional(),
    collection: collectionField.describe('Collection, e.g. "lokaliteter"'),
    // One plain type for strict clients: a string; integer ids as old callers sent them still pass.
    id: z.preprocess(
      (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : v,
      z.string().refine((v) => ID_RE.test(v), "letters, digits and . _ : - only"),
    ).describe('Feature id from a listing, e.g. "42178"'),
    include_geometry: orDefault(z.boolean(), true).describe("Include the GeoJSON geometry (default true)"),
    response_format: formatField,
    output: outputField("the whole feature"),
  });
  return {
    name: "riksantikvaren-feature",
    title: "Riksantikvaren feature",
    toolset: TOOLSET,
    description:
      "One cultural-heritage feature by collection and id: all properties and its GeoJSON geometry.",
    input,
    output: featureOutput,
    view: ogcPlacesView,
    annotations: READ_ONLY,
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const dataset = resolveDataset(a.dataset, a.collection);
      const id = String(a.id);
      const { feature: raw, url } = await deps.client.feature(
        { dataset, collection: a.collection, id },
        callOptions(ctx),
      );
      const f = featureOut(raw, deps, dataset, a.collection, true);
      // Each stage over a huge geometry (read, located, simplified) gets its own turn of the event loop.
      await new Pace().pause();
      const licence = licenceOut(null, dataset, a.collection);
      // The record's own page and last update, for the answer's provenance.
      const updated = pick(raw.properties, ["oppdateringsdato", "sistendret", "endretdato"]);
      cite({
        licence: licence.name,
        ...(f.kulturminnesok_url ? { permalink: f.kulturminnesok_url } : {}),
        ...(updated ? { as_of: `record updated ${updated}` } : {}),
      });
      const limit = ctx.limits.characterLimit - 200;
      const build = (feature: FeatureOut) => {
        const structured = {
          dataset,
          collection: a.collection,
          feature,
          source_url: url,
          licence,
          coordinate_convention: COORDINATE_CONVENTION,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const head = featureMarkdown(withAbout(feature), null);
        const lines = [head];
        if (feature.geometry) lines.push(geometryLines(feature.geometry as Geometry));
        // Said once: properties whose value the lines above already show are left out.
        const rest = otherProperties(feature.properties as Record<string, unknown>, head);
        if (rest) lines.push(`- Other properties: ${rest}`);
        lines.push("", footer(url, licence));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      };
      const fits = (feature: FeatureOut) => {
        const r = build(feature);
        return r.text.length <= limit && JSON.stringify(r.structured).length <= limit;
      };
      let cut = false;
      if (!fits(f)) {
        f.properties = compactProperties(f.properties);
        cut = true;
      }
      if (a.include_geometry && raw.geometry) {
        const fitted = await fitGeometryPaced(
          raw.geometry,
          (g) => fits({ ...f, geometry: g }),
          () => new Pace().pause(),
        );
        if (fitted) {
          f.geometry = fitted.geometry;
          f.geometry_note = fitted.simplified ? simplificationNote(fitted) : null;
          cut ||= fitted.simplified;
        } else {
          f.geometry_note = "Geometry left out: even its bounding box did not fit the response limit";
          cut = true;
        }
      } else if (a.include_geometry && raw.geometryUnreadable) {
        f.geometry_note = "The upstream geometry could not be read (not GeoJSON in WGS 84)";
      }
      let file = null;
      if (a.output === "file") {
        const saved = await ctx.files.save({
          name: fileName(`${a.collection}_feature`, id),
          format: "json",
          rows: [[geoJsonFeature(raw)]],
          head: {
            type: "FeatureCollection",
            dataset,
            collection: a.collection,
            source_url: url,
            licence,
            coordinate_convention: COORDINATE_CONVENTION,
          },
          itemsKey: "features",
          description:
            `${a.collection} feature ${id} (${dataset}), whole: every property and the geometry; ${licence.name}`,
        });
        file = written(saved, "The whole feature (GeoJSON FeatureCollection)", ctx);
      }
      const r = build(f);
      const note = cut && !file
        ? '\n\nCut to fit the response limit (long properties shortened, geometry simplified): call again with output "file" for the whole feature.'
        : "";
      return withFile({ text: r.text + note, structured: r.structured }, file);
    },
  };
}

/** The longest description the text shows whole; a longer one is cut there (whole in the JSON). */
const ABOUT_MAX = 1500;

/** The feature as its text shows it: a long description cut, saying where the rest is. */
function withAbout(feature: FeatureOut): FeatureOut {
  const d = feature.description;
  if (d === null || d.length <= ABOUT_MAX) return feature;
  return {
    ...feature,
    description: `${d.slice(0, ABOUT_MAX).trimEnd()}… (${
      (d.length - ABOUT_MAX).toLocaleString("en-US")
    } more characters: response_format "json")`,
  };
}

/** Vertices a geometry may have to be written out in the text; a larger one is summarised. */
const SHOWN_VERTICES = 24;

/**
 * The geometry in the text: small ones (a point, a site of a few corners) as GeoJSON, larger ones
 * as one line of facts; the whole geometry is in the structured content either way.
 */
function geometryLines(geometry: Geometry): string {
  if (countVertices(geometry) <= SHOWN_VERTICES) {
    return `- Geometry (GeoJSON, [lon, lat]): ${JSON.stringify(geometry)}`;
  }
  return `- Geometry: ${geometrySummary(geometry)} (the GeoJSON: response_format "json", or output "file")`;
}

/** Properties worth a line of their own: scalars not shown above, nulls and empties left out. */
function otherProperties(props: Record<string, unknown>, shown: string): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === "" || typeof value === "object") continue;
    const text = String(value).replace(/\s+/g, " ").trim();
    if (text === "" || (text.length >= 3 && shown.includes(text.slice(0, 200)))) continue;
    parts.push(`${key} ${shorten(text, 160)}`);
  }
  return parts.join(" · ");
}
