// riksantikvaren-features: one page of a collection, optionally in a bbox and filtered by name.
// Without a bbox it is one upstream page, continued by the upstream's next link. With a bbox it
// is a scan: api.ra.no answers a bbox with every record that has no geometry as well, wherever it
// lies, so records without a location in the box are dropped and pages are read until the page
// is full, the upstream ends, or the call's time runs short; the cursor resumes at the exact
// record where the scan stopped.
import { z } from "zod";
import { ToolError, UpstreamError } from "../../../errors.ts";
import type { QueryValue } from "../../../http/fetch_client.ts";
import { bboxesIntersect, bboxProblem, formatBbox } from "../../../geo/bbox.ts";
import type { Bbox } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION } from "../../../geo/coords.ts";
import { geometryBbox } from "../../../geo/geojson.ts";
import { attachGeometries } from "../../../geo/simplify.ts";
import { pointInBbox, swappedBboxHint } from "../../../geo/swap.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import {
  fitToLimit,
  jsonText,
  page,
  pageSchema,
  responseFormatField,
  truncationNotice,
} from "../../../mcp/output.ts";
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
} from "../_common.ts";
import type { OgcToolDeps } from "../_common.ts";
import type { CallOptions } from "../client.ts";
import { decodeCursor, encodeCursor } from "../cursor.ts";
import { featureMarkdown, featureSchema, footer, licenceSchema } from "../format.ts";
import type { FeatureOut } from "../format.ts";
import { fallbackPoint } from "../heritage.ts";
import type { RawFeature } from "../parse.ts";
import { scanItems } from "../scan.ts";
import type { ScanStop } from "../scan.ts";

const scanSchema = z.object({
  records_read: z.number().int().describe("Upstream records read for this page"),
  upstream_requests: z.number().int(),
  without_location: z.number().int().describe(
    "Records read that have no location (geometry null), left out: api.ra.no returns them for any bbox",
  ),
  outside_bbox: z.number().int().describe("Records read whose location is outside the bbox, left out"),
  complete: z.boolean().describe("Whether the upstream's list was read to its end"),
  stopped_because: z.enum(["filled", "end", "deadline", "max_records", "repeated", "failed"]).describe(
    "filled: the page is full; end: nothing more upstream; deadline: the call's time ran short; max_records: the per-call record cap; repeated/failed: the upstream misbehaved",
  ),
  next_upstream_offset: z.number().int().describe(
    "Upstream offset where the scan stopped (the cursor resumes there)",
  ),
});

const featuresOutput = z.object({
  dataset: z.string(),
  collection: z.string(),
  bbox: z.array(z.number()).nullable().describe("The bbox used, [min_lon, min_lat, max_lon, max_lat]"),
  query: z.string().nullable().describe("The text filter used"),
  features: z.array(featureSchema),
  ...pageSchema.shape,
  total_is_exact: z.boolean().describe(
    "False when total is a lower bound (the upstream gave no count, or a bbox scan has not reached the end)",
  ),
  upstream_matched: z.number().int().nullable().describe(
    "numberMatched as api.ra.no reported it; with a bbox it also counts records without a location, wherever they are",
  ),
  scan: scanSchema.nullable().describe("How a bbox listing read the upstream; null without bbox"),
  next_cursor: z.string().nullable().describe("Opaque cursor for the next page (pass as cursor), or null"),
  warnings: z.array(z.string()),
  source_url: z.string(),
  licence: licenceSchema,
  coordinate_convention: z.string(),
});

type Output = z.output<typeof featuresOutput>;

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
export function featuresTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof featuresOutput> {
  const { settings } = deps;
  const input = z.strictObject({
    dataset: datasetField.optional(),
    collection: collectionField.optional().describe(
      'Collection id, e.g. "lokaliteter", "enkeltminner", "brukerminner". Required unless cursor is given',
    ),
    bbox: z.array(z.number()).length(4).optional().describe(
      `Area filter [min_lon, min_lat, max_lon, max_lat] in WGS 84 degrees (longitude first, GeoJSON order), e.g. [10.70, 59.90, 10.80, 59.95] for central Oslo. Longest side ${settings.max_bbox_km} km. Only features located in the box are listed`,
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
    offset: z.number().int().min(0).max(1_000_000).default(0).describe(
      "Features to skip (with a bbox, prefer the cursor: an offset reads the box from its start again)",
    ),
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
  type Args = z.output<typeof input>;
  return {
    name: "riksantikvaren-features",
    title: "Riksantikvaren features",
    description:
      "Lists cultural-heritage features of one api.ra.no collection (protected sites, monuments, buildings, user-contributed memories), optionally inside a bbox [min_lon, min_lat, max_lon, max_lat] and filtered by name text. Returns name, category, protection status, municipality, dating, a representative point (lat, lon) and the Kulturminnesøk link, paged with the returned next_cursor (or offset). With a bbox only features located in the box are listed. " +
      COORDINATE_CONVENTION,
    input,
    output: featuresOutput,
    annotations: { ...READ_ONLY, title: "Riksantikvaren features" },
    async handler(args, ctx) {
      const a = args as Args;
      const plan = planListing(a, settings.max_limit, settings.max_bbox_km);
      const call = callOptions(ctx);
      const warnings: string[] = [];
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
  const features = pg.features.map((f) => featureOut(f, deps, dataset, collection, false));
  if (a.include_geometry) {
    attachGeometries(features, pg.features.map((f) => f.geometry), {
      format: a.response_format,
      characterLimit,
      leftOutHint: "use riksantikvaren-feature",
    });
  }
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

/** A scan of the box: only features located in it, with an honest count and an exact cursor. */
async function bboxListing(
  deps: OgcToolDeps,
  plan: Plan,
  a: { include_geometry: boolean; response_format: "markdown" | "json" },
  call: CallOptions,
  warnings: string[],
  characterLimit: number,
): Promise<{ text: string; structured: Output }> {
  const { dataset, collection, offset, limit, skip } = plan;
  const bbox = plan.bbox!;
  const swapHint = swappedBboxHint(bbox);
  if (swapHint) warnings.push(swapHint);
  const want = skip + limit;
  const scan = await withFilterErrors(plan, () =>
    scanItems(
      deps,
      {
        dataset,
        collection,
        query: plan.query,
        start: plan.upstreamOffset,
        firstLimit: Math.min(want, deps.settings.scan_page_size),
        pageSize: deps.settings.scan_page_size,
        want,
        maxRecords: deps.settings.max_scan,
        classify: (r) => locatedIn(r, bbox),
      },
      call,
      warnings,
    ));
  const passedOver = Math.min(skip, scan.kept.length);
  const list = scan.kept.slice(passedOver);
  const records = list.map((k) => k.record);
  const features = records.map((f) => featureOut(f, deps, dataset, collection, false));
  if (a.include_geometry) {
    attachGeometries(features, records.map((f) => f.geometry), {
      format: a.response_format,
      characterLimit,
      leftOutHint: "use riksantikvaren-feature",
    });
  }
  const complete = scan.stop === "end";
  // Features in the box known so far, counted from the start of the listing.
  const found = offset - skip + scan.kept.length + scan.keptAhead;
  const withoutLocation = scan.passed["none"] ?? 0;
  const licence = licenceOut(scan.licence, dataset, collection);
  const sourceUrl = scan.sourceUrl ||
    deps.client.url(`${dataset}/collections/${collection}/items`, { ...plan.query, f: "json" });
  const stopNote = scanStopNote(scan.stop, scan.read, scan.pages);
  if (stopNote) warnings.push(stopNote);
  return fitToLimit(features, characterLimit - 600, ({ items, truncated }) => {
    const shown = items.length;
    const total = complete ? found : Math.max(found, offset + shown + 1);
    const env = page(total, offset, shown);
    // The next page starts at the first feature found but not shown, else where the scan stopped.
    const resumeAt = list[shown]?.position ?? scan.next;
    const next_cursor = env.has_more
      ? encodeCursor({
        dataset,
        collection,
        query: new URLSearchParams({
          ...stringify(plan.query),
          limit: String(limit),
          offset: String(resumeAt),
        })
          .toString(),
        offset: offset + shown,
        skip: skip - passedOver,
      })
      : null;
    const structured: Output = {
      dataset,
      collection,
      bbox,
      query: plan.text,
      features: items,
      ...env,
      total_is_exact: complete,
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
    const where = `located in bbox ${formatBbox(bbox)}${plan.text ? ` matching "${plan.text}"` : ""}`;
    const head = [
      `# ${collection} (${dataset})`,
      shown > 0
        ? `Features ${offset + 1}–${offset + shown} of ${complete ? found : `at least ${found}`} ${where}.`
        : `No features ${where}${complete ? "" : ` among the ${scan.read} records read so far`}.`,
    ];
    if (scan.numberMatched !== null && scan.numberMatched > found) {
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
        `More: call again with cursor="${next_cursor}" (it resumes where this page stopped; offset=${env.next_offset} works too but reads the box from its start again).`,
      );
    }
    return { text: markdown(head, items, offset, tail, sourceUrl, licence), structured };
  });
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
