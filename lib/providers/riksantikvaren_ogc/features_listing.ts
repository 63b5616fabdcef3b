// What a riksantikvaren-features call lists, planned from its arguments or its cursor, and the
// pieces every kind of listing shares (the shown features, the markdown, the cursor to resume).
import { ToolError, UpstreamError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { bboxProblem } from "../../geo/bbox.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { attachGeometries } from "../../geo/simplify.ts";
import type { ContentBlock } from "../../mcp/provider.ts";
import { COLLECTION_RE, DATASET_RE, featureOut, likeEscape, resolveDataset } from "./_common.ts";
import type { OgcToolDeps } from "./_common.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { featureMarkdown, footer } from "./format.ts";
import type { FeatureOut, LicenceOut } from "./format.ts";
import type { RawFeature } from "./parse.ts";
import type { ScanStop } from "./scan.ts";

/** Everything a listing carries (the output schema declares the main fields only). */
export type Output = {
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
export type Answer = { text: string; structured: Output; content?: ContentBlock[] };

/** Where a listing starts: from the caller's arguments or from a cursor. */
export interface Plan {
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

/** What to list: from the arguments, or from the cursor of an earlier call when one is given. */
export function planListing(
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

/** The features of `records` as a listing shows them, with their geometries when asked for. */
export function shownFeatures(
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

/** The cursor that resumes the listing at upstream offset `at`, as feature `listed` of it. */
export function resumeCursor(plan: Plan, at: number, listed: number, skip: number): string {
  return encodeCursor({
    dataset: plan.dataset,
    collection: plan.collection,
    query: new URLSearchParams({ ...stringify(plan.query), limit: String(plan.limit), offset: String(at) })
      .toString(),
    offset: listed,
    skip,
  });
}

/** Runs `work`, turning api.ra.no's 400 to a text filter into a VALIDATION_ERROR on `query`. */
export async function withFilterErrors<T>(plan: Plan, work: () => Promise<T>): Promise<T> {
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

/** The markdown of a listing: head lines, the numbered features, tail lines and the source footer. */
export function markdown(
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
