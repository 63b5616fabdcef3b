// riksantikvaren-features with a bbox: a scan that drops records located outside the box (or
// nowhere), reads pages until the page is full, the upstream ends or time runs short, and
// resumes at the exact record where it stopped; with output "file", the whole scan to a file.
import { bboxesIntersect, formatBbox } from "../../geo/bbox.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { COORDINATE_CONVENTION } from "../../geo/latlon.ts";
import { geometryBbox } from "../../geo/geojson.ts";
import { pointInBbox, swappedBboxHint } from "../../geo/swap.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../mcp/shaping.ts";
import { licenceOut } from "./_common.ts";
import type { OgcToolDeps } from "./_common.ts";
import type { CallOptions } from "./client.ts";
import { fallbackPoint } from "./heritage.ts";
import type { RawFeature } from "./parse.ts";
import { scanItems } from "./scan.ts";
import type { ScanResult, ScanStop } from "./scan.ts";
import { featureRows, geoJsonFeature } from "./rows.ts";
import { fileName, withFile, written } from "../../output/result_files.ts";
import type { Written } from "../../output/result_files.ts";
import {
  type Answer,
  markdown,
  type Output,
  type Plan,
  resumeCursor,
  shownFeatures,
  withFilterErrors,
} from "./features_listing.ts";

/** A scan of the box: only features located in it, with an honest count and an exact cursor. */
export async function bboxListing(
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
export async function fileListing(
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
