// riksantikvaren-features: one page of a collection, optionally in a bbox and filtered by name.
// Without a bbox it is one upstream page, continued by the upstream's next link. With a bbox it
// is a scan: api.ra.no answers a bbox with every record that has no geometry as well, wherever it
// lies, so records without a location in the box are dropped and pages are read until the page
// is full, the upstream ends, or the call's time runs short; the cursor resumes at the exact
// record where the scan stopped.
import { ogcPlacesView } from "../view.ts";
import { z } from "zod";
import { ToolError, UpstreamError } from "../../../errors.ts";
import type { QueryValue } from "../../../http/fetch_client.ts";
import { bboxesIntersect, bboxProblem, formatBbox } from "../../../geo/bbox.ts";
import type { Bbox } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION } from "../../../geo/coords.ts";
import { geometryBbox } from "../../../geo/geojson.ts";
import { attachGeometries } from "../../../geo/simplify.ts";
import { pointInBbox, swappedBboxHint } from "../../../geo/swap.ts";
import type { ContentBlock, ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/output.ts";
import {
  callOptions,
  COLLECTION_RE,
  collectionField,
  DATASET_RE,
  datasetField,
  featureOut,
  itemsWithFallback,
  licenceOut,
  likeEscape,
  PROPERTY_RE,
  READ_ONLY,
  resolveDataset,
  TOOLSET,
} from "../_common.ts";
import type { OgcToolDeps } from "../_common.ts";
import type { CallOptions } from "../client.ts";
import { decodeCursor, encodeCursor } from "../cursor.ts";
import { featureMarkdown, featureSchema, footer, licenceSchema } from "../format.ts";
import type { FeatureOut, LicenceOut } from "../format.ts";
import { fallbackPoint } from "../heritage.ts";
import type { RawFeature } from "../parse.ts";
import { scanItems } from "../scan.ts";
import type { ScanResult, ScanStop } from "../scan.ts";
import { featureRows, geoJsonFeature } from "../rows.ts";
import {
  fileName,
  fileSchema,
  formatField,
  orDefault,
  outputField,
  withFile,
  written,
} from "../../../output/result_files.ts";
import type { Written } from "../../../output/result_files.ts";

const featuresOutput = z.looseObject({
  features: z.array(featureSchema),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  next_cursor: z.string().nullable(),
  licence: licenceSchema,
  file: fileSchema.optional(),
});

/** Everything a listing carries (the output schema declares the main fields only). */
type Output = {
  dataset: string;
  collection: string;
  /** The bbox used, [min_lon, min_lat, max_lon, max_lat]. */
  bbox: number[] | null;
  /** The text filter used. */
  query: string | null;
  features: FeatureOut[];
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  /** False when total is a lower bound (no count from the upstream, or a scan not at its end). */
  total_is_exact: boolean;
  /** numberMatched as api.ra.no reported it; with a bbox it also counts records without a location. */
  upstream_matched: number | null;
  /** How a scan read the upstream (bbox listings and files); null for one plain page. */
  scan: {
    records_read: number;
    upstream_requests: number;
    /** Records without a location (geometry null), left out: api.ra.no returns them for any bbox. */
    without_location: number;
    outside_bbox: number;
    complete: boolean;
    stopped_because: ScanStop;
    /** Upstream offset where the scan stopped (the cursor resumes there). */
    next_upstream_offset: number;
  } | null;
  /** Opaque cursor for the next page (pass as cursor), or null. */
  next_cursor: string | null;
  warnings: string[];
  source_url: string;
  licence: LicenceOut;
  coordinate_convention: string;
};

/** A tool answer: the text, the structured content and, with a file, its link. */
type Answer = { text: string; structured: Output; content?: ContentBlock[] };

/** Where a listing starts: from the caller's arguments or from a cursor. */
interface Plan {
  dataset: string;
  collection: string;
  /** Listing offset of the first feature this call shows. */
  offset: number;
  limit: number;
  bbox: Bbox | null;
  text: string | null;
  /** Query of every upstream request except limit and offset. */
  query: Record<string, QueryValue>;
  /** Upstream offset to start at. */
  upstreamOffset: number;
  /** Features in the box to pass over before listing (an offset given without a cursor). */
  skip: number;
}

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
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

function planListing(
  a: {
    dataset?: string | undefined;
    collection?: string | undefined;
    bbox?: number[] | undefined;
    query?: string | undefined;
    query_property?: string | undefined;
    limit: number;
    offset: number;
    cursor?: string | undefined;
  },
  maxLimit: number,
  maxBboxKm: number,
): Plan {
  if (a.cursor === undefined) {
    const collection = a.collection!;
    const bbox = (a.bbox as Bbox | undefined) ?? null;
    const text = a.query ?? null;
    const query: Record<string, QueryValue> = {};
    if (bbox) query["bbox"] = bbox.join(",");
    if (text !== null) {
      const prop = a.query_property ?? (/brukerminne/i.test(collection) ? "tittel" : "navn");
      query["filter"] = `CASEI(${prop}) LIKE CASEI('%${likeEscape(text)}%')`;
      query["filter-lang"] = "cql2-text";
    }
    return {
      dataset: resolveDataset(a.dataset, collection),
      collection,
      offset: a.offset,
      limit: a.limit,
      bbox,
      text,
      query,
      // Without a bbox the upstream's offset is the listing's; with one, the box is read from
      // its start and the first `offset` features in it are passed over.
      upstreamOffset: bbox ? 0 : a.offset,
      skip: bbox ? a.offset : 0,
    };
  }
  const state = decodeCursor(a.cursor);
  const invalid = () =>
    new ToolError("VALIDATION_ERROR", "The cursor is not one this tool issued", {
      field: "cursor",
      hint: "Pass next_cursor exactly as an earlier result gave it, or page with offset instead",
    });
  if (!state || !DATASET_RE.test(state.dataset) || !COLLECTION_RE.test(state.collection)) throw invalid();
  if (a.collection !== undefined && a.collection !== state.collection) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `The cursor continues collection "${state.collection}", not "${a.collection}"`,
      { field: "cursor", hint: "Leave out collection when passing a cursor" },
    );
  }
  const params = new URLSearchParams(state.query);
  const upstreamOffset = Number(params.get("offset") ?? 0);
  const lim = Number(params.get("limit"));
  for (const k of ["f", "offset", "limit"]) params.delete(k);
  const bboxText = params.get("bbox");
  const bbox = bboxText === null ? null : parseBboxParam(bboxText);
  if (
    !Number.isInteger(upstreamOffset) || upstreamOffset < 0 ||
    (bboxText !== null && (!bbox || bboxProblem(bbox, { maxSideKm: maxBboxKm })))
  ) {
    throw invalid();
  }
  return {
    dataset: state.dataset,
    collection: state.collection,
    offset: state.offset,
    limit: Number.isInteger(lim) && lim >= 1 && lim <= maxLimit ? lim : a.limit,
    bbox,
    text: queryFromFilter(params.get("filter")),
    query: Object.fromEntries(params),
    upstreamOffset,
    skip: bbox ? state.skip ?? 0 : 0,
  };
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

/** The features of `records` as a listing shows them, with their geometries when asked for. */
function shownFeatures(
  deps: OgcToolDeps,
  records: readonly RawFeature[],
  plan: Plan,
  a: { include_geometry: boolean; response_format: "markdown" | "json" },
  characterLimit: number,
): FeatureOut[] {
  const features = records.map((f) => featureOut(f, deps, plan.dataset, plan.collection, false));
  if (a.include_geometry) {
    attachGeometries(features, records.map((f) => f.geometry), {
      format: a.response_format,
      characterLimit,
      leftOutHint: "use riksantikvaren-feature",
    });
  }
  return features;
}

/** A scan of the box: only features located in it, with an honest count and an exact cursor. */
async function bboxListing(
  deps: OgcToolDeps,
  plan: Plan,
  a: { include_geometry: boolean; response_format: "markdown" | "json" },
  call: CallOptions,
  warnings: string[],
  characterLimit: number,
): Promise<{ text: string; structured: Output }> {
  const scan = await scanListing(deps, plan, call, warnings, plan.skip + plan.limit);
  return renderScan(deps, plan, a, scan, warnings, characterLimit, null);
}

/**
 * Reads the listing from where the plan starts until `want` features are kept (with a bbox: those
 * located in it; without: every record), the upstream ends, `max_scan` records were read under a
 * bbox, or the call's time runs short.
 */
function scanListing(
  deps: OgcToolDeps,
  plan: Plan,
  call: CallOptions,
  warnings: string[],
  want: number,
): Promise<ScanResult> {
  const bbox = plan.bbox;
  if (bbox) {
    const swapHint = swappedBboxHint(bbox);
    if (swapHint) warnings.push(swapHint);
  }
  return withFilterErrors(plan, () =>
    scanItems(
      deps,
      {
        dataset: plan.dataset,
        collection: plan.collection,
        query: plan.query,
        start: plan.upstreamOffset,
        firstLimit: Math.min(want, deps.settings.scan_page_size),
        pageSize: deps.settings.scan_page_size,
        want,
        // Without a bbox every record read is kept, so `want` bounds the reading.
        maxRecords: bbox ? deps.settings.max_scan : Infinity,
        classify: bbox ? (r) => locatedIn(r, bbox) : () => "keep",
      },
      call,
      warnings,
    ));
}

/** The cursor that resumes the listing at upstream offset `at`, as feature `listed` of it. */
function resumeCursor(plan: Plan, at: number, listed: number, skip: number): string {
  return encodeCursor({
    dataset: plan.dataset,
    collection: plan.collection,
    query: new URLSearchParams({ ...stringify(plan.query), limit: String(plan.limit), offset: String(at) })
      .toString(),
    offset: listed,
    skip,
  });
}

/** The answer for a scanned listing: at most `plan.limit` of the features it kept, and the cursor after them. */
function renderScan(
  deps: OgcToolDeps,
  plan: Plan,
  a: { include_geometry: boolean; response_format: "markdown" | "json" },
  scan: ScanResult,
  warnings: string[],
  characterLimit: number,
  file: Written | null,
): Answer {
  const { dataset, collection, offset, skip, bbox } = plan;
  const passedOver = Math.min(skip, scan.kept.length);
  const list = scan.kept.slice(passedOver);
  const records = list.slice(0, plan.limit).map((k) => k.record);
  const features = shownFeatures(deps, records, plan, a, characterLimit);
  const complete = scan.stop === "end";
  // Features known so far, counted from the start of the listing; without a bbox the upstream's
  // count is exact.
  const found = offset - skip + scan.kept.length + scan.keptAhead;
  const exactTotal = bbox ? null : scan.numberMatched;
  const withoutLocation = scan.passed["none"] ?? 0;
  const licence = licenceOut(scan.licence, dataset, collection);
  const sourceUrl = scan.sourceUrl ||
    deps.client.url(`${dataset}/collections/${collection}/items`, { ...plan.query, f: "json" });
  const stopNote = file ? null : scanStopNote(scan.stop, scan.read, scan.pages);
  if (stopNote) warnings.push(stopNote);
  const room = characterLimit - 600 - (file ? 2 * file.line.length : 0);
  const rendered = fitToLimit(features, room, ({ items, truncated }) => {
    const shown = items.length;
    const total = exactTotal ?? (complete ? found : Math.max(found, offset + shown + 1));
    const env = page(Math.max(total, offset + shown), offset, shown);
    // The next page starts at the first feature found but not shown, else where the scan stopped.
    const resumeAt = list[shown]?.position ?? scan.next;
    const next_cursor = env.has_more ? resumeCursor(plan, resumeAt, offset + shown, skip - passedOver) : null;
    const structured: Output = {
      dataset,
      collection,
      bbox,
      query: plan.text,
      features: items,
      ...env,
      total_is_exact: exactTotal !== null || complete,
      upstream_matched: scan.numberMatched,
      scan: {
        records_read: scan.read,
        upstream_requests: scan.pages,
        without_location: withoutLocation,
        outside_bbox: scan.passed["outside"] ?? 0,
        complete,
        stopped_because: scan.stop,
        next_upstream_offset: scan.next,
      },
      next_cursor,
      warnings,
      source_url: sourceUrl,
      licence,
      coordinate_convention: COORDINATE_CONVENTION,
    };
    if (a.response_format === "json") return { text: jsonText(structured), structured };
    const where = [
      bbox ? `located in bbox ${formatBbox(bbox)}` : "",
      plan.text ? `matching "${plan.text}"` : "",
    ].filter(Boolean).join(" ");
    const of = exactTotal !== null ? `${exactTotal}` : complete ? `${found}` : `at least ${found}`;
    const head = [
      `# ${collection} (${dataset})`,
      shown > 0
        ? `Features ${offset + 1}–${offset + shown} of ${of}${where ? ` ${where}` : ""}.`
        : `No features${where ? ` ${where}` : ""}${
          complete ? "" : ` among the ${scan.read} records read so far`
        }.`,
    ];
    if (bbox && scan.numberMatched !== null && scan.numberMatched > found) {
      head.push(
        `api.ra.no's count for this bbox, ${
          scan.numberMatched.toLocaleString("en-US")
        }, includes records without a location (geometry null), wherever they are: they are left out here (${withoutLocation} of the ${scan.read} records read had none).`,
      );
    }
    const tail: string[] = warnings.map((w) => `Note: ${w}`);
    if (truncated) tail.push(truncationNotice(shown, features.length, { limit: characterLimit }));
    if (next_cursor) {
      tail.push(
        `More: call again with cursor="${next_cursor}" (it resumes where this page stopped${
          bbox ? `; offset=${env.next_offset} works too but reads the box from its start again` : ""
        }).`,
      );
    }
    return { text: markdown(head, items, offset, tail, sourceUrl, licence), structured };
  });
  return withFile({ text: rendered.text, structured: rendered.structured }, file);
}

/**
 * output "file": every feature of the listing (in the bbox, by the filter) from where the plan
 * starts, up to `file_max_features`, as GeoJSON properties in CSV rows or a GeoJSON
 * FeatureCollection; the answer previews the first page. A partial file says which cursor goes on.
 */
async function fileListing(
  deps: OgcToolDeps,
  plan: Plan,
  a: { include_geometry: boolean; response_format: "markdown" | "json" },
  call: CallOptions,
  warnings: string[],
  ctx: ToolCallContext,
): Promise<Answer> {
  const cap = deps.settings.file_max_features;
  const scan = await scanListing(deps, plan, call, warnings, plan.skip + Math.max(cap, plan.limit));
  const list = scan.kept.slice(Math.min(plan.skip, scan.kept.length));
  const inFile = list.slice(0, cap);
  const licence = licenceOut(scan.licence, plan.dataset, plan.collection);
  const sourceUrl = scan.sourceUrl || deps.client.url(`${plan.dataset}/collections/${plan.collection}/items`);
  const after = list[inFile.length]?.position ?? scan.next;
  const more = list.length > inFile.length || scan.stop !== "end";
  const cursor = more ? resumeCursor(plan, after, plan.offset + inFile.length, 0) : null;
  const why: Record<ScanStop, string> = {
    filled: `it holds the most one call writes (${cap}, file_max_features)`,
    end: "",
    deadline: "the call ran short of time",
    max_records: `the scan read the most records one call reads (${deps.settings.max_scan}, max_scan)`,
    repeated: "api.ra.no sent the same records again",
    failed: "a page failed",
  };
  const partial = cursor
    ? `${why[scan.stop] || why.filled}; call again with cursor="${cursor}" and output "file" for the rest`
    : undefined;
  const records = inFile.map((k) => k.record);
  const json = a.response_format === "json";
  const saved = await ctx.files.save({
    name: fileName(`${plan.collection}`, [plan.bbox ? plan.bbox.join("_") : "", plan.text ?? ""].join(" ")),
    format: json ? "json" : "csv",
    rows: [json ? records.map(geoJsonFeature) : featureRows(records)],
    head: {
      type: "FeatureCollection",
      dataset: plan.dataset,
      collection: plan.collection,
      bbox: plan.bbox,
      query: plan.text,
      complete: cursor === null,
      next_cursor: cursor,
      source_url: sourceUrl,
      licence,
      coordinate_convention: COORDINATE_CONVENTION,
    },
    itemsKey: "features",
    description: `${plan.collection} (${plan.dataset})${plan.bbox ? ` in ${formatBbox(plan.bbox)}` : ""}${
      plan.text ? ` matching "${plan.text}"` : ""
    }: ${records.length} features; ${licence.name}`,
  });
  const file = written(saved, `${records.length} features`, ctx, partial);
  return renderScan(deps, plan, a, scan, warnings, ctx.limits.characterLimit, file);
}

/** Where a record is relative to the box: inside (`keep`), `outside`, or without a location (`none`). */
function locatedIn(r: RawFeature, bbox: Bbox): "keep" | "outside" | "none" {
  if (r.geometry) {
    const g = geometryBbox(r.geometry);
    return g === null || bboxesIntersect(g, bbox) ? "keep" : "outside";
  }
  // A geometry in another CRS matched the server's own bbox test: trust it.
  if (r.geometryUnreadable) return "keep";
  const p = fallbackPoint(r.properties);
  if (!p) return "none";
  return pointInBbox(p, bbox) ? "keep" : "outside";
}

function scanStopNote(stop: ScanStop, read: number, pages: number): string | null {
  const what = `${read.toLocaleString("en-US")} records (${pages} upstream ${
    pages === 1 ? "page" : "pages"
  })`;
  if (stop === "deadline") {
    return `Stopped after reading ${what} to answer within the server's time limit for one call; the cursor resumes at the next record, so nothing is skipped or repeated`;
  }
  if (stop === "max_records") {
    return `Stopped after reading ${what}, the most one call reads (max_scan); the cursor resumes at the next record`;
  }
  if (stop === "failed") return "The cursor asks for the failed page again";
  return null;
}

async function withFilterErrors<T>(plan: Plan, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof UpstreamError && e.status === 400 && plan.query["filter"] !== undefined) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `api.ra.no refused the text filter on collection "${plan.collection}" (HTTP 400)`,
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
}

function markdown(
  head: string[],
  items: FeatureOut[],
  offset: number,
  tail: string[],
  sourceUrl: string,
  licence: { name: string; url: string | null; note: string | null },
): string {
  const body = items.map((f, i) => featureMarkdown(f, offset + i + 1));
  const lines = [...head, "", ...body.flatMap((b) => [b, ""]), ...tail, "", footer(sourceUrl, licence)];
  return lines.join("\n").replace(/\n{3,}/g, "\n\n");
}

function stringify(query: Record<string, QueryValue>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) out[k] = String(v);
  return out;
}

function parseBboxParam(text: string): Bbox | null {
  const n = text.split(",").map(Number);
  return n.length === 4 && n.every(Number.isFinite) ? n as Bbox : null;
}

/** The text of a filter this tool wrote (`CASEI(p) LIKE CASEI('%text%')`), else the filter itself. */
function queryFromFilter(filter: string | null): string | null {
  if (filter === null) return null;
  const m = /LIKE CASEI\('%(.*)%'\)$/.exec(filter);
  return m ? m[1]!.replaceAll("''", "'").replace(/\\(.)/g, "$1") : filter;
}
