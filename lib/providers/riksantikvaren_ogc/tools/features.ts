// riksantikvaren-features: one page of a collection, optionally in a bbox and filtered by name.
// Without a bbox it is one upstream page, continued by the upstream's next link. With a bbox it
// is a scan: api.ra.no answers a bbox with every record that has no geometry as well, wherever it
// lies, so records without a location in the box are dropped and pages are read until the page
// is full, the upstream ends, or the call's time runs short; the cursor resumes at the exact
// record where the scan stopped.
import { ogcPlacesView } from "../view.ts";
import { z } from "zod";
import { bboxProblem } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION } from "../../../geo/latlon.ts";
import type { NextCall, ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import {
  callOptions,
  collectionField,
  datasetField,
  itemsWithFallback,
  licenceOut,
  PROPERTY_RE,
  READ_ONLY,
  TOOLSET,
} from "../_common.ts";
import type { OgcToolDeps } from "../_common.ts";
import type { CallOptions } from "../client.ts";
import { encodeCursor } from "../cursor.ts";
import { featureSchema, licenceSchema } from "../format.ts";
import { fileSchema, formatField, orDefault, outputField } from "../../../output/result_files.ts";
import {
  markdown,
  type Output,
  type Plan,
  planListing,
  shownFeatures,
  withFilterErrors,
} from "../features_listing.ts";
import { bboxListing, fileListing } from "../features_scan.ts";

const featuresOutput = z.looseObject({
  features: z.array(featureSchema),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  next_cursor: z.string().nullable(),
  licence: licenceSchema,
  file: fileSchema.optional(),
});

/** The riksantikvaren-features tool. */
export function featuresTool(deps: OgcToolDeps): ToolDefinition<z.ZodType, typeof featuresOutput> {
  const { settings } = deps;
  const input = z.strictObject({
    dataset: datasetField.optional(),
    collection: collectionField.optional().describe(
      'Collection, e.g. "lokaliteter" (not needed with cursor)',
    ),
    bbox: z.array(z.number()).length(4).optional().describe(
      `[min_lon, min_lat, max_lon, max_lat], at most ${settings.max_bbox_km} km a side`,
    ),
    query: z.string().trim()
      .refine((q) => q.length >= 1 && q.length <= 200, "give 1 to 200 characters")
      .optional().describe("Text the name contains"),
    query_property: z.string().refine((p) => PROPERTY_RE.test(p), "a property name").optional().describe(
      'Property searched (default "navn", "tittel" for brukerminner)',
    ),
    limit: orDefault(z.int().min(1).max(settings.max_limit), 10).describe("Features per page (default 10)"),
    offset: orDefault(z.int().min(0).max(1_000_000), 0).describe("Features to skip (prefer cursor)"),
    cursor: z.string().refine((c) => c.length >= 1 && c.length <= 8000, "not a cursor of this tool")
      .optional()
      .describe("next_cursor of the previous answer"),
    include_geometry: orDefault(z.boolean(), false).describe("Include GeoJSON geometries (default false)"),
    response_format: formatField,
    output: outputField("all features"),
  }).superRefine((v, issues) => {
    if (v.collection === undefined && v.cursor === undefined) {
      issues.addIssue({ code: "custom", path: ["collection"], message: "required (or give cursor)" });
    }
    if (v.bbox) {
      const problem = bboxProblem(v.bbox, { maxSideKm: settings.max_bbox_km });
      if (problem) issues.addIssue({ code: "custom", path: ["bbox"], message: problem });
    }
  });
  type Args = z.output<typeof input>;
  return {
    name: "riksantikvaren-features",
    title: "Riksantikvaren features",
    toolset: TOOLSET,
    description:
      "Cultural-heritage features of an api.ra.no collection, optionally in a bbox or by name, with a point and Kulturminnesøk link. Page with next_cursor.",
    input,
    output: featuresOutput,
    view: ogcPlacesView,
    annotations: READ_ONLY,
    async handler(args, ctx) {
      const a = args as Args;
      const plan = planListing(a, settings.max_limit, settings.max_bbox_km);
      const call = callOptions(ctx);
      const warnings: string[] = [];
      if (a.output === "file") return await fileListing(deps, plan, a, call, warnings, ctx);
      const rendered = plan.bbox
        ? await bboxListing(deps, plan, a, call, warnings, ctx.limits.characterLimit)
        : await plainListing(deps, plan, a, call, warnings, ctx.limits.characterLimit);
      const next = listingNext(a, rendered.structured);
      return { text: rendered.text, structured: rendered.structured, ...(next.length ? { next } : {}) };
    },
  };
}

/** Collections whose features carry names, searched in this order when one finds nothing. */
const NAMED_COLLECTIONS = ["lokaliteter", "enkeltminner", "fredabygninger", "kulturmiljoer"];

/**
 * What a listing names next: the first features' records; when a search by name finds nothing
 * on its first page, the same name in two other collections (never the same search again).
 */
function listingNext(
  a: { query?: string | undefined; offset: number; cursor?: string | undefined; limit: number },
  out: { dataset: string; collection: string; features: readonly { id: unknown }[]; total: number },
): NextCall[] {
  if (out.features.length) {
    return out.features.slice(0, 3).flatMap((f) =>
      typeof f.id === "string" || typeof f.id === "number"
        ? [{
          tool: "riksantikvaren-feature",
          arguments: { collection: out.collection, id: String(f.id) },
          for: `feature ${f.id}`,
        }]
        : []
    );
  }
  const query = typeof a.query === "string" ? a.query.trim() : "";
  if (!query || a.offset || a.cursor) return [];
  return NAMED_COLLECTIONS.filter((c) => c !== out.collection).slice(0, 2).map((collection) => ({
    tool: "riksantikvaren-features",
    arguments: { collection, query, limit: a.limit },
    for: `the name in ${collection}`,
  }));
}

/** One upstream page as it comes (records without a location are listed too). */
async function plainListing(
  deps: OgcToolDeps,
  plan: Plan,
  a: { include_geometry: boolean; response_format: "markdown" | "json" },
  call: CallOptions,
  warnings: string[],
  characterLimit: number,
): Promise<{ text: string; structured: Output }> {
  const { dataset, collection, offset } = plan;
  const query = { ...plan.query, limit: plan.limit, offset: plan.upstreamOffset };
  const { page: pg, url: sourceUrl } = await withFilterErrors(
    plan,
    () => itemsWithFallback(deps, dataset, collection, query, call, warnings),
  );
  // A server that ignores `limit` sends more than asked: keep the page size, page by offset.
  const overflow = pg.features.length > plan.limit;
  if (overflow) {
    pg.features.length = plan.limit;
    warnings.push("api.ra.no sent more features than asked for; the rest were left out: use next_offset");
  }
  const features = shownFeatures(deps, pg.features, plan, a, characterLimit);
  let nextQuery: string | null = null;
  if (pg.next !== null && pg.features.length > 0 && !overflow) {
    const vetted = await deps.client.vetNextLink(pg.next);
    if (vetted.ok) nextQuery = vetted.query;
    else warnings.push(vetted.warning);
  }
  const hasNext = (pg.next !== null && pg.features.length > 0) || overflow;
  const licence = licenceOut(pg.licence, dataset, collection);
  const exactTotal = pg.numberMatched;
  return fitToLimit(features, characterLimit - 400, ({ items, truncated }) => {
    const shown = items.length;
    const total = exactTotal ?? offset + shown + (hasNext || truncated ? 1 : 0);
    const env = page(Math.max(total, offset + shown), offset, shown);
    if (hasNext && !env.has_more) Object.assign(env, { has_more: true, next_offset: offset + shown });
    const next_cursor = !truncated && env.has_more && nextQuery !== null
      ? encodeCursor({ dataset, collection, query: nextQuery, offset: offset + shown })
      : null;
    const structured: Output = {
      dataset,
      collection,
      bbox: null,
      query: plan.text,
      features: items,
      ...env,
      total_is_exact: exactTotal !== null,
      upstream_matched: pg.numberMatched,
      scan: null,
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
      }${plan.text ? ` matching "${plan.text}"` : ""}.`,
    ];
    const tail: string[] = warnings.map((w) => `Note: ${w}`);
    if (truncated) {
      tail.push(
        truncationNotice(shown, features.length, { nextOffset: env.next_offset, limit: characterLimit }),
      );
    } else if (env.has_more) {
      tail.push(
        `More: call again with offset=${env.next_offset}${next_cursor ? ` or cursor="${next_cursor}"` : ""}.`,
      );
    }
    return { text: markdown(head, items, offset, tail, sourceUrl, licence), structured };
  });
}
