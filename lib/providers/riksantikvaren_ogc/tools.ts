// The riksantikvaren-* tools: datasets and collections, features (bbox, text filter, paging),
// one feature, and features near a point ranked by true distance.
import { z } from "zod";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { bboxAround, bboxProblem, formatBbox, swappedOrderHint } from "../../geo/bbox.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../geo/coords.ts";
import { distanceToGeometryM, haversineM } from "../../geo/distance.ts";
import { representativePoint } from "../../geo/geojson.ts";
import type { LatLon } from "../../geo/geojson.ts";
import { attachGeometries, fitGeometry, simplificationNote } from "../../geo/simplify.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import {
  fitToLimit,
  jsonText,
  page,
  pageSchema,
  responseFormatField,
  truncationNotice,
} from "../../mcp/output.ts";
import type { CallOptions, OgcClient } from "./client.ts";
import type { RiksantikvarenOgcSettings } from "./config.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import {
  collectionsTable,
  featureMarkdown,
  featureSchema,
  footer,
  formatDistance,
  licenceSchema,
} from "./format.ts";
import type { FeatureOut, LicenceOut } from "./format.ts";
import { compactProperties, defaultLicence, fallbackPoint, heritageFields } from "./heritage.ts";
import type { CollectionEntry, FeaturePage, Licence, RawFeature } from "./parse.ts";

const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/**
 * Collections seen in public use of api.ra.no and the dataset (API) that serves each, so a
 * caller may name just the collection. Not verified live: riksantikvaren-collections reads the
 * real list, and an explicit `dataset` always wins.
 */
export const KNOWN_DATASETS: Readonly<Record<string, string>> = {
  lokaliteter: "LokaliteterEnkeltminnerOgSikringssoner",
  enkeltminner: "LokaliteterEnkeltminnerOgSikringssoner",
  sikringssoner: "LokaliteterEnkeltminnerOgSikringssoner",
  brukerminner: "brukerminner",
  kulturminner: "kulturminner",
  kulturmiljoer: "kulturmiljoer",
  fredabygninger: "KulturminnerFredaBygninger",
  sefrakbygninger: "KulturminnerSEFRAKbygninger",
  brannvern: "brannvern",
  verneverdigtettetrehusmiljo: "KulturminnerVerneverdigTetteTrehusmiljo",
};

const DATASET_RE = /^[A-Za-z0-9_-]{1,100}(\/v\d{1,3})?$/;
const COLLECTION_RE = /^[A-Za-z0-9_-]{1,100}$/;
const ID_RE = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,200}$/;
const PROPERTY_RE = /^[A-Za-z_][A-Za-z0-9_æøåÆØÅ]{0,63}$/;

const datasetField = z.string().regex(
  DATASET_RE,
  "letters, digits, _ and - only (an id from riksantikvaren-collections)",
)
  .describe(
    'Dataset (API) id on api.ra.no, e.g. "LokaliteterEnkeltminnerOgSikringssoner" or "brukerminner". Optional for known collections: it is looked up from the collection name',
  );
const collectionField = z.string().regex(COLLECTION_RE, "letters, digits, _ and - only").describe(
  'Collection id, e.g. "lokaliteter" (protected sites), "enkeltminner" (single monuments), "brukerminner" (user-contributed memories). riksantikvaren-collections lists them',
);

function resolveDataset(dataset: string | undefined, collection: string): string {
  return dataset ?? KNOWN_DATASETS[collection.toLowerCase()] ?? collection;
}

/** Everything the tools share. */
export interface OgcToolDeps {
  client: OgcClient;
  settings: RiksantikvarenOgcSettings;
}

// ---------------------------------------------------------------------------------------------
// riksantikvaren-collections

const collectionOut = z.object({
  id: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  item_type: z.string().nullable(),
  bbox: z.array(z.number()).nullable().describe("Spatial extent [min_lon, min_lat, max_lon, max_lat]"),
  licence: z.object({ name: z.string(), url: z.string().nullable() }).nullable(),
});

const collectionsOutput = z.object({
  datasets: z.array(z.object({
    id: z.string().describe("Dataset id: pass as dataset"),
    title: z.string().nullable(),
    description: z.string().nullable(),
    collections: z.array(collectionOut).nullable().describe(
      "Its collections, or null when they could not be read",
    ),
    error: z.string().nullable().describe("Why the collections could not be read"),
  })),
  ...pageSchema.shape,
  source_url: z.string(),
  licence: licenceSchema,
});

function collectionsTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof collectionsOutput> {
  const input = z.strictObject({
    dataset: datasetField.optional(),
    limit: z.number().int().min(1).max(50).default(20).describe("Datasets per page when listing all (1-50)"),
    offset: z.number().int().min(0).default(0).describe("Datasets to skip when listing all"),
    response_format: responseFormatField,
  });
  return {
    name: "riksantikvaren-collections",
    title: "Riksantikvaren datasets and collections",
    description:
      "Lists the datasets (APIs) on Riksantikvaren's OGC API (api.ra.no) and the feature collections of each, with titles and spatial extents. api.ra.no has no single /collections: every dataset is its own API. Give dataset to list only its collections. Use the ids with riksantikvaren-features, riksantikvaren-feature and riksantikvaren-nearby.",
    input,
    output: collectionsOutput,
    annotations: { ...READ_ONLY, title: "Riksantikvaren datasets and collections" },
    async handler(args, ctx) {
      const call = callOptions(ctx);
      const a = args as z.output<typeof input>;
      let entries: { id: string; title: string | null; description: string | null }[];
      let total: number;
      let offset: number;
      let sourceUrl: string;
      if (a.dataset !== undefined) {
        entries = [{ id: a.dataset, title: null, description: null }];
        [total, offset] = [1, 0];
        sourceUrl = deps.client.url(`${a.dataset}/collections`, { f: "json" });
      } else {
        const catalog = await deps.client.catalog(call);
        total = catalog.datasets.length;
        offset = a.offset;
        entries = catalog.datasets.slice(a.offset, a.offset + a.limit);
        sourceUrl = catalog.url;
      }
      const datasets = await mapLimit(entries, 4, async (d) => {
        try {
          const r = await deps.client.collections(d.id, call);
          return { ...d, collections: r.collections.map(collectionShape), error: null };
        } catch (e) {
          // One broken dataset must not hide the others; a single asked-for dataset fails loudly.
          if (a.dataset !== undefined || ctx.signal.aborted) throw e;
          return { ...d, collections: null, error: e instanceof Error ? e.message : String(e) };
        }
      });
      const licence = licenceOut(null, "", "");
      const rendered = fitToLimit(datasets, ctx.limits.characterLimit - 300, ({ items, truncated }) => {
        const env = page(total, offset, items.length);
        const structured = { datasets: items, ...env, source_url: sourceUrl, licence };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          a.dataset === undefined
            ? `# Riksantikvaren OGC API: ${total} datasets (showing ${offset + 1}–${offset + items.length})`
            : `# Riksantikvaren OGC API: collections of "${a.dataset}"`,
        ];
        for (const d of items) {
          lines.push("", `## ${d.id}${d.title ? ` — ${d.title}` : ""}`);
          if (d.description) lines.push(d.description);
          if (d.collections) {
            lines.push("", d.collections.length ? collectionsTable(d.collections) : "(no collections)");
          } else lines.push(`Collections could not be read: ${d.error}`);
        }
        lines.push(
          "",
          'Next: riksantikvaren-features with {"dataset": "<dataset id>", "collection": "<collection id>"}.',
        );
        if (env.has_more) {
          lines.push(
            truncated
              ? truncationNotice(items.length, total - offset, {
                nextOffset: env.next_offset,
                limit: ctx.limits.characterLimit,
              })
              : `More datasets: call again with offset=${env.next_offset}.`,
          );
        }
        lines.push("", footer(sourceUrl, licence));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

function collectionShape(c: CollectionEntry): z.output<typeof collectionOut> {
  return {
    id: c.id,
    title: c.title,
    description: c.description,
    item_type: c.item_type,
    bbox: c.bbox,
    licence: c.licence,
  };
}

// ---------------------------------------------------------------------------------------------
// riksantikvaren-features

const featuresOutput = z.object({
  dataset: z.string(),
  collection: z.string(),
  bbox: z.array(z.number()).nullable().describe("The bbox used, [min_lon, min_lat, max_lon, max_lat]"),
  query: z.string().nullable().describe("The text filter used"),
  features: z.array(featureSchema),
  ...pageSchema.shape,
  total_is_exact: z.boolean().describe(
    "False when the upstream did not say how many match: total is a lower bound",
  ),
  next_cursor: z.string().nullable().describe("Opaque cursor for the next page (pass as cursor), or null"),
  warnings: z.array(z.string()),
  source_url: z.string(),
  licence: licenceSchema,
  coordinate_convention: z.string(),
});

function featuresTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof featuresOutput> {
  const { settings } = deps;
  const input = z.strictObject({
    dataset: datasetField.optional(),
    collection: collectionField.optional().describe(
      'Collection id, e.g. "lokaliteter", "enkeltminner", "brukerminner". Required unless cursor is given',
    ),
    bbox: z.array(z.number()).length(4).optional().describe(
      `Area filter [min_lon, min_lat, max_lon, max_lat] in WGS 84 degrees (longitude first, GeoJSON order), e.g. [10.70, 59.90, 10.80, 59.95] for central Oslo. Longest side ${settings.max_bbox_km} km`,
    ),
    query: z.string().trim().min(1).max(200).optional().describe(
      "Text that the name must contain (case-insensitive; sent as a CQL2 filter, which not every collection supports)",
    ),
    query_property: z.string().regex(PROPERTY_RE).optional().describe(
      'Property the text filter searches; default "navn" ("tittel" for brukerminner)',
    ),
    limit: z.number().int().min(1).max(settings.max_limit).default(10).describe(
      `Features per page (1-${settings.max_limit})`,
    ),
    offset: z.number().int().min(0).max(1_000_000).default(0).describe("Features to skip"),
    cursor: z.string().min(1).max(8000).optional().describe(
      "Opaque next_cursor from an earlier result: continues that listing (its dataset, collection and filters apply)",
    ),
    include_geometry: z.boolean().default(false).describe(
      "Include each feature's GeoJSON geometry ([lon, lat]); large shapes are simplified to fit",
    ),
    response_format: responseFormatField,
  }).superRefine((v, issues) => {
    if (v.collection === undefined && v.cursor === undefined) {
      issues.addIssue({ code: "custom", path: ["collection"], message: "required (or give cursor)" });
    }
    if (v.bbox) {
      const problem = bboxProblem(v.bbox, { maxSideKm: settings.max_bbox_km });
      if (problem) issues.addIssue({ code: "custom", path: ["bbox"], message: problem });
    }
  });
  return {
    name: "riksantikvaren-features",
    title: "Riksantikvaren features",
    description:
      "Lists cultural-heritage features of one api.ra.no collection (protected sites, monuments, buildings, user-contributed memories), optionally inside a bbox [min_lon, min_lat, max_lon, max_lat] and filtered by name text. Returns name, category, protection status, municipality, dating, a representative point (lat, lon) and the Kulturminnesøk link, paged with offset or the returned next_cursor. " +
      COORDINATE_CONVENTION,
    input,
    output: featuresOutput,
    annotations: { ...READ_ONLY, title: "Riksantikvaren features" },
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const call = callOptions(ctx);
      let dataset: string;
      let collection: string;
      let offset: number;
      let query: Record<string, QueryValue>;
      let bbox: Bbox | null = (a.bbox as Bbox | undefined) ?? null;
      let text: string | null = a.query ?? null;
      if (a.cursor !== undefined) {
        const state = decodeCursor(a.cursor);
        if (!state || !DATASET_RE.test(state.dataset) || !COLLECTION_RE.test(state.collection)) {
          throw new ToolError("VALIDATION_ERROR", "The cursor is not one this tool issued", {
            field: "cursor",
            hint: "Pass next_cursor exactly as an earlier result gave it, or page with offset instead",
          });
        }
        if (a.collection !== undefined && a.collection !== state.collection) {
          throw new ToolError(
            "VALIDATION_ERROR",
            `The cursor continues collection "${state.collection}", not "${a.collection}"`,
            { field: "cursor", hint: "Leave out collection when passing a cursor" },
          );
        }
        ({ dataset, collection, offset } = state);
        const params = new URLSearchParams(state.query);
        params.delete("f");
        query = Object.fromEntries(params);
        const lim = Number(query["limit"]);
        if (!Number.isInteger(lim) || lim < 1 || lim > settings.max_limit) query["limit"] = String(a.limit);
        bbox = parseBboxParam(params.get("bbox"));
        text = queryFromFilter(params.get("filter"));
      } else {
        collection = a.collection!;
        dataset = resolveDataset(a.dataset, collection);
        offset = a.offset;
        query = { limit: a.limit, offset };
        if (bbox) query["bbox"] = bbox.join(",");
        if (text !== null) {
          const prop = a.query_property ?? (/brukerminne/i.test(collection) ? "tittel" : "navn");
          query["filter"] = `CASEI(${prop}) LIKE CASEI('%${likeEscape(text)}%')`;
          query["filter-lang"] = "cql2-text";
        }
      }
      const warnings: string[] = [];
      let fetched: { page: FeaturePage; url: string };
      try {
        fetched = await itemsWithFallback(deps, dataset, collection, query, call, warnings);
      } catch (e) {
        if (e instanceof UpstreamError && e.status === 400 && query["filter"] !== undefined) {
          throw new ToolError(
            "VALIDATION_ERROR",
            `api.ra.no refused the text filter on collection "${collection}" (HTTP 400)`,
            {
              field: "query",
              status: 400,
              hint:
                "This collection may not support CQL2 filters or lack the searched property: try query_property, or leave out query and use bbox",
            },
          );
        }
        throw e;
      }
      const { page: pg } = fetched;
      // A server that ignores `limit` sends more than asked: keep the page size, page by offset.
      const asked = Number(query["limit"]);
      const overflow = Number.isInteger(asked) && asked > 0 && pg.features.length > asked;
      if (overflow) {
        pg.features.length = asked;
        warnings.push("api.ra.no sent more features than asked for; the rest were left out: use next_offset");
      }
      const features = pg.features.map((f) => featureOut(f, deps, dataset, collection, false));
      if (a.include_geometry) {
        attachGeometries(features, pg.features.map((f) => f.geometry), {
          format: a.response_format,
          characterLimit: ctx.limits.characterLimit,
          leftOutHint: "use riksantikvaren-feature",
        });
      }
      let nextQuery: string | null = null;
      if (pg.next !== null && pg.features.length > 0 && !overflow) {
        const vetted = await deps.client.vetNextLink(pg.next);
        if (vetted.ok) nextQuery = vetted.query;
        else warnings.push(vetted.warning);
      }
      if (features.length === 0 && bbox) {
        const hint = swappedOrderHint(bbox);
        if (hint) warnings.push(hint);
      }
      const hasNext = (pg.next !== null && pg.features.length > 0) || overflow;
      const licence = licenceOut(pg.licence, dataset, collection);
      const exactTotal = pg.numberMatched;
      const sourceUrl = fetched.url;
      const rendered = fitToLimit(features, ctx.limits.characterLimit - 400, ({ items, truncated }) => {
        const shown = items.length;
        const total = exactTotal ?? offset + shown + (hasNext || truncated ? 1 : 0);
        const env = page(Math.max(total, offset + shown), offset, shown);
        if (hasNext && !env.has_more) Object.assign(env, { has_more: true, next_offset: offset + shown });
        const next_cursor = !truncated && env.has_more && nextQuery !== null
          ? encodeCursor({ dataset, collection, query: nextQuery, offset: offset + shown })
          : null;
        const structured = {
          dataset,
          collection,
          bbox,
          query: text,
          features: items,
          ...env,
          total_is_exact: exactTotal !== null,
          next_cursor,
          warnings,
          source_url: sourceUrl,
          licence,
          coordinate_convention: COORDINATE_CONVENTION,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const head = [
          `# ${collection} (${dataset})`,
          `${shown === 0 ? "No features" : `Features ${offset + 1}–${offset + shown}`} of ${env.total}${
            exactTotal === null ? "+" : ""
          }${bbox ? ` in bbox ${formatBbox(bbox)}` : ""}${text ? ` matching "${text}"` : ""}.`,
        ];
        const body = items.map((f, i) => featureMarkdown(f, offset + i + 1));
        const tail: string[] = [];
        for (const w of warnings) tail.push(`Note: ${w}`);
        if (truncated) {
          tail.push(
            truncationNotice(shown, features.length, {
              nextOffset: env.next_offset,
              limit: ctx.limits.characterLimit,
            }),
          );
        } else if (env.has_more) {
          tail.push(
            `More: call again with offset=${env.next_offset}${
              next_cursor ? ` or cursor="${next_cursor}"` : ""
            }.`,
          );
        }
        const lines = [...head, "", ...body.flatMap((b) => [b, ""]), ...tail, "", footer(sourceUrl, licence)];
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// riksantikvaren-feature

const featureOutput = z.object({
  dataset: z.string(),
  collection: z.string(),
  feature: featureSchema,
  source_url: z.string(),
  licence: licenceSchema,
  coordinate_convention: z.string(),
});

function featureTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof featureOutput> {
  const input = z.strictObject({
    dataset: datasetField.optional(),
    collection: collectionField,
    id: z.union([z.string().regex(ID_RE, "letters, digits and . _ : - only"), z.number().int().min(0)])
      .describe(
        'Feature id as listed by riksantikvaren-features, e.g. "42178"',
      ),
    include_geometry: z.boolean().default(true).describe(
      "Include the GeoJSON geometry ([lon, lat]); a large polygon is simplified to fit the response limit",
    ),
    response_format: responseFormatField,
  });
  return {
    name: "riksantikvaren-feature",
    title: "Riksantikvaren feature",
    description:
      "Gets one cultural-heritage feature from api.ra.no by collection and id: all its properties, the summary fields (name, category, protection, municipality, dating, Kulturminnesøk link) and its GeoJSON geometry, simplified when too large for the response. " +
      COORDINATE_CONVENTION,
    input,
    output: featureOutput,
    annotations: { ...READ_ONLY, title: "Riksantikvaren feature" },
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const dataset = resolveDataset(a.dataset, a.collection);
      const id = String(a.id);
      const { feature: raw, url } = await deps.client.feature(
        { dataset, collection: a.collection, id },
        callOptions(ctx),
      );
      const f = featureOut(raw, deps, dataset, a.collection, true);
      const licence = licenceOut(null, dataset, a.collection);
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
        const lines = [featureMarkdown(feature, null)];
        if (feature.geometry) {
          lines.push(
            "",
            "Geometry (GeoJSON, [lon, lat]):",
            "```json",
            JSON.stringify(feature.geometry),
            "```",
          );
        }
        lines.push(
          "",
          "Properties:",
          "```json",
          JSON.stringify(feature.properties),
          "```",
          "",
          footer(url, licence),
        );
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      };
      const fits = (feature: FeatureOut) => {
        const r = build(feature);
        return r.text.length <= limit && JSON.stringify(r.structured).length <= limit;
      };
      if (!fits(f)) f.properties = compactProperties(f.properties);
      if (a.include_geometry && raw.geometry) {
        const fitted = fitGeometry(raw.geometry, (g) => fits({ ...f, geometry: g }));
        if (fitted) {
          f.geometry = fitted.geometry;
          f.geometry_note = fitted.simplified ? simplificationNote(fitted) : null;
        } else {
          f.geometry_note = "Geometry left out: even its bounding box did not fit the response limit";
        }
      } else if (a.include_geometry && raw.geometryUnreadable) {
        f.geometry_note = "The upstream geometry could not be read (not GeoJSON in WGS 84)";
      }
      const r = build(f);
      return { text: r.text, structured: r.structured };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// riksantikvaren-nearby

const nearbyOutput = z.object({
  center: z.object({ lat: z.number(), lon: z.number() }),
  radius_m: z.number(),
  dataset: z.string(),
  collection: z.string(),
  search_bbox: z.array(z.number()).describe("The box searched, [min_lon, min_lat, max_lon, max_lat]"),
  features: z.array(featureSchema.extend({
    distance_m: z.number().describe(
      "Great-circle distance from the center to the feature (0 inside it), metres",
    ),
  })),
  ...pageSchema.shape,
  scanned: z.number().int().describe("Features read from the search box"),
  scan_complete: z.boolean().describe(
    "False when the box held more features than were read: narrow radius_m",
  ),
  without_location: z.number().int().describe("Features in the box with no usable location (left out)"),
  warnings: z.array(z.string()),
  source_url: z.string(),
  licence: licenceSchema,
  coordinate_convention: z.string(),
});

function nearbyTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof nearbyOutput> {
  const { settings } = deps;
  const input = z.strictObject({
    lat: z.number().min(-90).max(90).describe("Latitude of the center in WGS 84 degrees, e.g. 59.9075"),
    lon: z.number().min(-180).max(180).describe("Longitude of the center in WGS 84 degrees, e.g. 10.7637"),
    radius_m: z.number().min(10).max(settings.max_radius_m).default(500).describe(
      `Search radius in metres (10-${settings.max_radius_m})`,
    ),
    dataset: datasetField.optional(),
    collection: collectionField.default("lokaliteter").describe(
      'Collection to search: "lokaliteter" (protected sites, default), "enkeltminner", "brukerminner" (user-contributed memories), ...',
    ),
    limit: z.number().int().min(1).max(50).default(10).describe("Features to return, nearest first (1-50)"),
    offset: z.number().int().min(0).default(0).describe("Nearest features to skip (for the next page)"),
    include_geometry: z.boolean().default(false).describe(
      "Include GeoJSON geometries ([lon, lat]), simplified to fit",
    ),
    response_format: responseFormatField,
  });
  return {
    name: "riksantikvaren-nearby",
    title: "Riksantikvaren features near a point",
    description:
      "Finds cultural-heritage features (protected sites by default; brukerminner for user-contributed memories) within radius_m of a point given as lat and lon, sorted by true distance on the sphere (0 when the point is inside a site), with distances in metres. " +
      COORDINATE_CONVENTION,
    input,
    output: nearbyOutput,
    annotations: { ...READ_ONLY, title: "Riksantikvaren features near a point" },
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const call = callOptions(ctx);
      const center: LatLon = { lat: a.lat, lon: a.lon };
      const dataset = resolveDataset(a.dataset, a.collection);
      const collection = a.collection;
      const box = bboxAround(center, a.radius_m).map((v) => Math.round(v * 1e6) / 1e6) as Bbox;
      const pageSize = Math.min(settings.max_limit, 100);
      const raws: RawFeature[] = [];
      const warnings: string[] = [];
      let scanComplete = false;
      let repeated = false;
      let sourceUrl = "";
      let licenceFromData: Licence | null = null;
      // A feature already read (a server that ignores offset, or shifting pages) is ranked once.
      const seen = new Set<string>();
      for (let off = 0; raws.length < settings.nearby_max_scan;) {
        const limit = Math.min(pageSize, settings.nearby_max_scan - raws.length);
        const { page: pg, url } = await itemsWithFallback(
          deps,
          dataset,
          collection,
          { limit, offset: off, bbox: box.join(",") },
          call,
          warnings,
        );
        if (!sourceUrl) [sourceUrl, licenceFromData] = [url, pg.licence];
        let fresh = 0;
        for (const f of pg.features) {
          if (f.id !== null && seen.has(f.id)) continue;
          if (f.id !== null) seen.add(f.id);
          raws.push(f);
          fresh++;
        }
        off += pg.features.length;
        if (pg.features.length > 0 && fresh === 0) {
          repeated = true;
          break;
        }
        const more = pg.features.length > 0 &&
          (pg.next !== null || (pg.numberMatched !== null && off < pg.numberMatched));
        if (!more) {
          scanComplete = true;
          break;
        }
      }
      if (repeated) {
        warnings.push(
          `api.ra.no sent the same features again for a later offset, so the scan stopped after ${raws.length} distinct features; the ranking may be incomplete`,
        );
      } else if (!scanComplete) {
        warnings.push(
          `The search box holds more than ${settings.nearby_max_scan} features; only the first ${settings.nearby_max_scan} were ranked. Use a smaller radius_m for a complete ranking`,
        );
      }
      let withoutLocation = 0;
      const ranked: { raw: RawFeature; out: FeatureOut; d: number }[] = [];
      for (const raw of raws) {
        const out = featureOut(raw, deps, dataset, collection, false);
        let d: number | null = null;
        if (raw.geometry) d = distanceToGeometryM(center, raw.geometry);
        else if (out.lat !== null && out.lon !== null) d = haversineM(center, { lat: out.lat, lon: out.lon });
        if (d === null) {
          withoutLocation++;
          continue;
        }
        if (d <= a.radius_m) ranked.push({ raw, out, d });
      }
      ranked.sort((x, y) => x.d - y.d || (x.out.name ?? "").localeCompare(y.out.name ?? ""));
      const slice = ranked.slice(a.offset, a.offset + a.limit);
      const features = slice.map((r) => ({ ...r.out, distance_m: Math.round(r.d * 10) / 10 }));
      if (a.include_geometry) {
        attachGeometries(features, slice.map((r) => r.raw.geometry), {
          format: a.response_format,
          characterLimit: ctx.limits.characterLimit,
          leftOutHint: "use riksantikvaren-feature",
        });
      }
      const licence = licenceOut(licenceFromData, dataset, collection);
      const rendered = fitToLimit(features, ctx.limits.characterLimit - 400, ({ items, truncated }) => {
        const env = page(ranked.length, a.offset, items.length);
        const structured = {
          center: roundLatLon(center),
          radius_m: a.radius_m,
          dataset,
          collection,
          search_bbox: box,
          features: items,
          ...env,
          scanned: raws.length,
          scan_complete: scanComplete,
          without_location: withoutLocation,
          warnings,
          source_url: sourceUrl,
          licence,
          coordinate_convention: COORDINATE_CONVENTION,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          `# ${collection} within ${formatDistance(a.radius_m)} of ${formatLatLon(center)}`,
          `${ranked.length} found${scanComplete ? "" : " (scan incomplete)"}; showing ${
            items.length ? `${a.offset + 1}–${a.offset + items.length}` : "none"
          }, nearest first.`,
          "",
        ];
        items.forEach((f, i) => lines.push(featureMarkdown(f, a.offset + i + 1), ""));
        for (const w of warnings) lines.push(`Note: ${w}`);
        if (truncated) {
          lines.push(truncationNotice(items.length, ranked.length - a.offset, {
            nextOffset: env.next_offset,
            limit: ctx.limits.characterLimit,
          }));
        } else if (env.has_more) lines.push(`More: call again with offset=${env.next_offset}.`);
        lines.push("", footer(sourceUrl, licence));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// shared helpers

/** The four riksantikvaren-* tools. */
// deno-lint-ignore no-explicit-any
export function ogcTools(deps: OgcToolDeps): ToolDefinition<any, any>[] {
  return [collectionsTool(deps), featuresTool(deps), featureTool(deps), nearbyTool(deps)];
}

function callOptions(ctx: ToolCallContext): CallOptions {
  return { signal: ctx.signal, logger: ctx.logger };
}

/**
 * Fetches a page of items. api.ra.no is reported to send cut-off bodies for large pages (with
 * HTTP 200), so a body that does not decode is asked for again with half the page size, twice.
 */
async function itemsWithFallback(
  deps: OgcToolDeps,
  dataset: string,
  collection: string,
  query: Record<string, QueryValue>,
  call: CallOptions,
  warnings: string[],
): Promise<{ page: FeaturePage; url: string }> {
  let q = { ...query };
  for (let attempt = 0;; attempt++) {
    try {
      return await deps.client.items({ dataset, collection }, q, call);
    } catch (e) {
      const limit = Number(q["limit"]);
      if (!(e instanceof UpstreamError) || e.errorType !== "DECODE_ERROR" || attempt >= 2 || !(limit > 10)) {
        throw e;
      }
      const smaller = Math.ceil(limit / 2);
      warnings.push(`api.ra.no sent a broken page for limit=${limit}; asked again with limit=${smaller}`);
      q = { ...q, limit: smaller };
    }
  }
}

function featureOut(
  raw: RawFeature,
  deps: OgcToolDeps,
  dataset: string,
  collection: string,
  full: boolean,
): FeatureOut {
  const fields = heritageFields(raw.properties);
  const point = (raw.geometry ? representativePoint(raw.geometry) : null) ?? fallbackPoint(raw.properties);
  const p = point ? roundLatLon(point) : null;
  const apiPath = `${dataset}/collections/${collection}/items${
    raw.id ? `/${encodeURIComponent(raw.id)}` : ""
  }`;
  return {
    id: raw.id,
    ...fields,
    description: full || !fields.description ? fields.description : clip(fields.description, 500),
    lat: p?.lat ?? null,
    lon: p?.lon ?? null,
    geometry_type: raw.geometry?.type ?? null,
    geometry: null,
    geometry_note: null,
    api_url: deps.client.url(apiPath, { f: "json" }),
    properties: full ? capStrings(raw.properties) : compactProperties(raw.properties),
  };
}

function licenceOut(fromData: Licence | null, dataset: string, collection: string): LicenceOut {
  const known = defaultLicence(dataset, collection);
  if (fromData) return { name: fromData.name, url: fromData.url, note: known.note };
  return known;
}

function parseBboxParam(text: string | null): Bbox | null {
  if (!text) return null;
  const n = text.split(",").map(Number);
  return n.length === 4 && n.every(Number.isFinite) ? n as Bbox : null;
}

/** The text of a filter this tool wrote (`CASEI(p) LIKE CASEI('%text%')`), else the filter itself. */
function queryFromFilter(filter: string | null): string | null {
  if (filter === null) return null;
  const m = /LIKE CASEI\('%(.*)%'\)$/.exec(filter);
  return m ? m[1]!.replaceAll("''", "'").replace(/\\(.)/g, "$1") : filter;
}

/** Escapes a CQL2 string literal's quotes and LIKE wildcards. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll("'", "''");
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function capStrings(props: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) out[k] = typeof v === "string" ? clip(v, 5000) : v;
  return out;
}

async function mapLimit<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
