// Where a FRED result goes: inline (cut to the response limit), to a project file with an
// excerpt, or to a background job that streams pages into a file. Shared by the six data tools.
//
// Paged operations written to a file (observations in auto or file mode, lists in file mode)
// fetch every page asked for. The first request asks for at most `job_row_threshold + 1` rows,
// which is enough to learn FRED's count and so decide, by the row threshold alone, whether the
// rest runs in the call or in a background job; a call whose pages could not finish well within
// its deadline goes to a job too. Pages after the first are scanned item by item from the raw
// body and written in batches (lib/output/json_scan.ts), so memory follows a batch, not the page
// size or the series.
import { cite } from "../../output/provenance.ts";
import { VINTAGE_HINT, vintageOf } from "./vintage.ts";
import type { Vintage } from "./vintage.ts";
import * as nodePath from "node:path";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { remainingMs } from "../../http/request_scope.ts";
import type { Logger } from "../../log.ts";
import { fitToLimit, jsonText, markdownTable, page, truncationNotice } from "../../mcp/output.ts";
import type { ContentBlock, ToolCallContext, ToolOutput } from "../../mcp/provider.ts";
import type { JobHandle, JobManager, JobOutcome, OwnerRef } from "../../output/jobs.ts";
import { JsonScanError, scanJsonList } from "../../output/json_scan.ts";
import {
  checkFilename,
  checkProjectName,
  checkRelativePath,
  renderFilenamePattern,
  stamp,
} from "../../output/paths.ts";
import { resourceLink } from "../../output/resources.ts";
import type { ProjectStorage, ReservedFile } from "../../output/storage.ts";
import { toMb } from "../../output/storage.ts";
import {
  chooseOutput,
  countRowsTokens,
  modelProfile,
  tokenBudget,
  tokenCounter,
} from "../../output/tokens.ts";
import type { OutputDecision, OutputFacts, OutputMode } from "../../output/tokens.ts";
import { OUTPUT_MODES } from "../../output/tokens.ts";
import { FILE_FORMATS, openRowWriter } from "../../output/writers.ts";
import type { FileFormat, RowWriter } from "../../output/writers.ts";
import type { FredClient } from "./client.ts";
import type { FredSettings } from "./settings.ts";
import { boundedMeta, clipValue, ITEM_CLIP, itemsTable, metaLine, sourceLines, sourceOf } from "./format.ts";
import type { ClipCount, Source } from "./format.ts";
import type { ItemKind, OperationSpec } from "./operations.ts";
import { OPERATIONS } from "./operations.ts";
import { CSV_COLUMNS, isReadable, itemFor, LIST_KEYS, listItem, parseResponse, screenItem } from "./parse.ts";
import type { Parsed } from "./parse.ts";
import { fredQuery, resolveOperation } from "./params.ts";
import type { DataArgs } from "./params.ts";

/** What the data tools share. */
export interface FredDeps {
  settings: FredSettings;
  client: FredClient;
  storage: ProjectStorage;
  jobs: JobManager;
  clock: Clock;
  /** The provider's logger (jobs outlive the call's logger context). */
  logger: Logger;
}

/** The structured result of a data tool (one shape for inline, file and job answers). */
export interface DataResult extends Record<string, unknown> {
  status: "success" | "accepted";
  tool: string;
  operation: string;
  endpoint: string;
  output_mode: "screen" | "file";
  kind: string;
  message: string;
  source: Source;
}

/** What a file lacks of what was asked for, and why (an `incomplete` result). */
export interface Missing {
  rows: number;
  reason: string;
  /** The offset a call continues from to get the rest. */
  next_offset: number;
}

const EXCERPT_ROWS = 10;
const FILE_HINT =
  'For all of it at once, call again with output: "file" (writes a project file and returns its path and a resource link).';
const CLIP_NOTE =
  'Some long FRED fields were shortened to keep this answer within the response limit; output: "file" keeps them whole.';
/** Rows handed to the file writer at once: what the server holds of a page at any time. */
const BATCH_ROWS = 2000;

const ITEMS_KEY: Record<string, string> = {
  series: "seriess",
  regional_data: "data",
  shapes: "features",
};

interface Call {
  tool: string;
  spec: OperationSpec;
  args: DataArgs;
  ctx: ToolCallContext;
  deps: FredDeps;
  /** The caller's view of the storage (its owner's projects). */
  storage: ProjectStorage;
  query: Record<string, QueryValue>;
  offset: number;
  mode: OutputMode;
  format: FileFormat;
  project: string;
  /** The file name a resumed job keeps (the one its first replica had reserved). */
  fileName?: string;
}

/** Runs one data tool call: checks, the FRED request(s), and the delivery the mode asks for. */
export async function runDataCall(
  tool: string,
  args: DataArgs,
  ctx: ToolCallContext,
  deps: FredDeps,
): Promise<
  ToolOutput<DataResult>
> {
  const mode = args.output ?? deps.settings.output_mode;
  const spec = resolveOperation(tool, args, { multiPage: mode === "file" });
  deps.client.requireKey();
  const format = args.format ?? deps.settings.output_format;
  const project = args.project ?? deps.settings.project_name;
  if (mode !== "screen") {
    checkProjectName(project, "project");
    if (args.filename !== undefined) checkFilename(args.filename, format);
  }
  const call: Call = {
    tool,
    spec,
    args,
    ctx,
    deps,
    storage: deps.storage.forOwner(ctx.owner, ctx.client),
    query: fredQuery(spec, args),
    offset: typeof args["offset"] === "number" ? args["offset"] : 0,
    mode,
    format,
    project,
  };
  const seriesId = typeof args["series_id"] === "string" ? args["series_id"] : undefined;
  if (seriesId) {
    const alfred = ["realtime_start", "realtime_end", "vintage_dates", "output_type"].some((k) =>
      args[k] !== undefined
    );
    cite({
      permalink: alfred
        ? `https://alfred.stlouisfed.org/series?seid=${encodeURIComponent(seriesId)}`
        : `https://fred.stlouisfed.org/series/${encodeURIComponent(seriesId)}`,
    });
  }
  if (spec.job === "always" && mode !== "screen") return await startSingleFetchJob(call);
  if (spec.paged && mode !== "screen" && (spec.kind === "observations" || mode === "file")) {
    return await pagedToFile(call);
  }

  const limit = requestLimit(call);
  const params = { ...call.query, ...(limit === undefined ? {} : { limit, offset: call.offset }) };
  const response = await deps.client.get(spec.endpoint, params, {
    signal: ctx.signal,
    logger: ctx.logger,
    fresh: args.fresh === true,
    cacheable: (data) => isReadable(spec.kind, data),
  });
  const parsed = parseResponse(spec.kind, response.data);
  // One series' metadata: FRED's own last update is the answer's as-of.
  const updated = spec.kind === "series" && parsed.items.length === 1
    ? parsed.items[0]!["last_updated"]
    : undefined;
  if (typeof updated === "string" && updated !== "") cite({ as_of: `series last updated ${updated}` });
  return await deliver(call, parsed, sourceOf(response.url, args["series_id"]));
}

/** The `limit` sent to FRED for a single-request call. */
function requestLimit(call: Call): number | undefined {
  const { spec, args, deps } = call;
  if (!spec.paged) return undefined;
  const asked = typeof args["limit"] === "number" ? args["limit"] : undefined;
  if (spec.kind === "observations") {
    // Inline: no point fetching more rows than could ever be shown.
    return Math.min(asked ?? spec.paged.max, deps.settings.screen_row_threshold);
  }
  return asked ?? spec.paged.defaultLimit;
}

/** Rows a request for pages of this operation asks for. */
function pageSize(call: Call): number {
  return call.spec.kind === "observations" ? call.deps.settings.page_size : call.spec.paged!.max;
}

/** Sends a fetched result inline or to a file, as the mode (and for auto, its size) decides. */
async function deliver(
  call: Call,
  parsed: Parsed,
  source: Source,
  missing?: Missing,
): Promise<ToolOutput<DataResult>> {
  if (call.mode === "screen") return screenResult(call, parsed, source);
  if (call.mode === "file") return await fileResult(call, parsed, source, undefined, missing);
  // Tokens are counted on what would be shown (notes shortened, repeated fields dropped).
  const shown = parsed.items.map((i) => screenItem(call.spec.kind, i, parsed.meta));
  const counter = await tokenCounter(modelProfile(call.deps.settings.model_name).encoding);
  const facts = autoFacts(call, parsed.items.length, countRowsTokens(shown, counter));
  // First as if it fitted: over the token budget or the row threshold it goes to a file anyway.
  const hopeful = chooseOutput("auto", { ...facts, fitsOnScreen: true });
  if (hopeful.mode === "screen" && !missing) {
    const screen = screenResult(call, parsed, source, hopeful);
    if (screen.structured?.["truncated"] === false && !screen.structured["clipped_fields"]) return screen;
  }
  return await fileResult(
    call,
    parsed,
    source,
    chooseOutput("auto", { ...facts, fitsOnScreen: false }),
    missing,
  );
}

/** The token budget of `auto`, from the model's profile and the FRED_* settings. */
function budgetOf(settings: FredSettings): number {
  const profile = modelProfile(settings.model_name);
  return tokenBudget({
    ...(settings.safe_token_limit > 0 ? { safeTokenLimit: settings.safe_token_limit } : {}),
    modelTokenLimit: settings.model_token_limit > 0 ? settings.model_token_limit : profile.contextTokens,
    assumeContextUsed: settings.assume_context_used,
    safetyMargin: settings.safety_margin,
  });
}

function autoFacts(call: Call, rows: number, estimatedTokens: number): Omit<OutputFacts, "fitsOnScreen"> {
  const { settings } = call.deps;
  return {
    rows,
    estimatedTokens,
    budget: budgetOf(settings),
    rowThreshold: settings.screen_row_threshold,
    characterLimit: call.ctx.limits.characterLimit,
  };
}

function heading(call: Call): string {
  const subject = [
    "series_id",
    "category_id",
    "release_id",
    "source_id",
    "series_group",
    "search_text",
    "tag_names",
    "shape",
  ]
    .map((k) => call.args[k])
    .find((v) => v !== undefined);
  return `## FRED ${call.tool} ${call.spec.operation}${subject === undefined ? "" : `: ${String(subject)}`}`;
}

function base(
  call: Call,
  source: Source,
): { tool: string; operation: string; endpoint: string; kind: string; source: Source } {
  return {
    tool: call.tool,
    operation: call.spec.operation,
    endpoint: call.spec.endpoint,
    kind: call.spec.kind,
    source,
  };
}

/** The share of the response limit FRED's answer fields may take in a result. */
function metaBudget(call: Call): number {
  return Math.max(200, Math.floor(call.ctx.limits.characterLimit / 5));
}

/**
 * Items as a result shows them: bounded copies for structuredContent, and for markdown the same
 * items with values in FRED's own text ("1065.0"; "missing" for FRED's ".").
 */
function shownItems(
  kind: ItemKind,
  items: readonly Record<string, unknown>[],
  meta: Record<string, unknown>,
  count: ClipCount,
): { structured: Record<string, unknown>; markdown: Record<string, unknown> }[] {
  return items.map((item) => {
    const structured = clipValue(screenItem(kind, item, meta), ITEM_CLIP, count) as Record<string, unknown>;
    const text = itemFor(kind, item, "markdown");
    const markdown: Record<string, unknown> = { ...structured };
    for (const key of Object.keys(structured)) {
      if (key in text && typeof structured[key] === "number") markdown[key] = text[key];
    }
    return { structured, markdown };
  });
}

/** The inline answer, cut at an item boundary to the character limit. */
function screenResult(
  call: Call,
  parsed: Parsed,
  source: Source,
  decision?: OutputDecision,
): ToolOutput<DataResult> {
  const { spec, offset } = call;
  const limit = call.ctx.limits.characterLimit;
  const count: ClipCount = { clipped: 0 };
  const meta = boundedMeta(parsed.meta, metaBudget(call), count);
  const shown = shownItems(spec.kind, parsed.items, parsed.meta, count);
  const clippedFields = count.clipped;
  const total = spec.paged ? Math.max(parsed.total ?? 0, offset + shown.length) : shown.length;
  const start = spec.paged ? offset : 0;
  const line = metaLine(meta);
  const vintage = citedVintage(call, parsed.meta);
  const fitted = fitToLimit(shown, limit, ({ items: pairs, truncated }) => {
    const items = pairs.map((p) => p.structured);
    const env = page(total, start, items.length);
    if (!spec.paged) env.next_offset = null;
    const notes: string[] = [];
    if (truncated) {
      notes.push(
        truncationNotice(items.length, total, {
          limit,
          ...(spec.paged ? { nextOffset: env.next_offset } : {}),
          hint: FILE_HINT,
        }),
      );
    } else if (env.has_more) {
      notes.push(
        `${
          total - start - items.length
        } more item(s): call again with offset=${env.next_offset}, or with output: "file" to save them.`,
      );
    }
    if (clippedFields > 0) notes.push(CLIP_NOTE);
    if (spec.kind === "vintage_dates" && items.length) {
      notes.push(
        'For the data as known on one of these dates: operation "get_observations" with realtime_start and ' +
          "realtime_end set to it, or vintage_dates (several) with output_type 2.",
      );
    }
    const message = items.length === 0
      ? "No items matched"
      : `Showing ${start + 1}-${start + items.length} of ${total}`;
    const structured: DataResult = {
      ...base(call, source),
      status: "success",
      output_mode: "screen",
      message,
      ...(vintage ? { vintage } : {}),
      items,
      meta,
      ...env,
      truncated,
      ...(clippedFields > 0 ? { clipped_fields: clippedFields } : {}),
      ...(decision ? { decision } : {}),
    };
    const text = call.args.response_format === "json" ? jsonText(structured) : [
      heading(call),
      ...(line ? [line] : []),
      ...(vintage ? [vintageLine(vintage)] : []),
      `${message}.`,
      itemsTable(spec.kind, pairs.map((p) => p.markdown)),
      ...notes,
      sourceLines(source),
    ].join("\n\n");
    return { text, structured };
  });
  return { text: fitted.text, structured: fitted.structured };
}

/**
 * The vintage of an observations answer (undefined for other operations), also named as the
 * answer's as-of in its provenance.
 */
function citedVintage(call: Call, meta: Record<string, unknown>): Vintage | undefined {
  if (call.spec.kind !== "observations") return undefined;
  const vintage = vintageOf(call.args, meta);
  cite({ as_of: `vintage: ${vintage.label}` });
  return vintage;
}

/** The line that says which vintage an answer shows, and how to reach another one. */
function vintageLine(v: Vintage): string {
  return `Vintage: ${v.label}. ${VINTAGE_HINT}.`;
}

/** File name for a call: the caller's, or the configured pattern filled in. */
function fileName(call: Call): string {
  if (call.fileName !== undefined) return call.fileName;
  if (call.args.filename !== undefined) return call.args.filename;
  const { args, spec, deps } = call;
  const { date, time } = stamp(deps.clock.now());
  const subject = typeof args["series_id"] === "string"
    ? args["series_id"]
    : args["category_id"] !== undefined
    ? `category_${args["category_id"]}`
    : args["release_id"] !== undefined
    ? `release_${args["release_id"]}`
    : args["source_id"] !== undefined
    ? `source_${args["source_id"]}`
    : args["series_group"] !== undefined
    ? `group_${args["series_group"]}_${args["region_type"] ?? ""}`
    : args["shape"] !== undefined
    ? String(args["shape"])
    : args["search_text"] ?? args["series_search_text"] ?? args["tag_names"];
  const text = Array.isArray(subject)
    ? subject.join("_")
    : subject === undefined
    ? undefined
    : String(subject);
  return renderFilenamePattern(deps.settings.filename_pattern, {
    series_id: text,
    operation: spec.label,
    date,
    time,
    timestamp: `${date}${time}`,
    project: call.project,
    query_hash: hash(JSON.stringify([spec.endpoint, call.query, args["limit"], call.offset])),
  });
}

/** FNV-1a, six hex digits: a short, stable tag of a query for `{query_hash}`. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0").slice(0, 6);
}

/** Claims the call's file name in its project (path checks, limits and permissions fail here, early). */
async function reserveFile(call: Call): Promise<ReservedFile> {
  return await call.storage.reserve(call.project, call.spec.subdir, fileName(call), call.format);
}

/** Opens the streaming writer of a reserved file; the JSON head carries the source and metadata. */
async function openWriter(
  call: Call,
  file: ReservedFile,
  meta: Record<string, unknown>,
  source: Source,
): Promise<RowWriter> {
  try {
    return await openRowWriter({
      format: call.format,
      path: file.path,
      tempPath: file.tempPath,
      ...(csvColumns(call) ? { columns: csvColumns(call)! } : {}),
      head: { source, request: requestSummary(call), ...meta },
      itemsKey: ITEMS_KEY[call.spec.kind] ?? call.spec.kind,
      charge: (bytes) => file.charge(bytes),
    });
  } catch (e) {
    call.storage.release(file);
    throw e;
  }
}

/**
 * The leading CSV columns of a call. Observations by vintage date (output types 2 and 3) have
 * no value or real-time fields, only the date and one column per vintage, which follow it.
 */
function csvColumns(call: Call): readonly string[] | undefined {
  const output = call.args["output_type"];
  if (call.spec.kind === "observations" && (output === 2 || output === 3)) return ["date"];
  return CSV_COLUMNS[call.spec.kind];
}

/** Rows as the file format writes them: values in FRED's text for CSV, as JSON numbers for JSON. */
function fileRows(call: Call, items: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const target = call.format === "csv" ? "csv" : "json_file";
  return items.map((i) => itemFor(call.spec.kind, i, target));
}

/** Writes rows in batches, so no encoded page is held whole. */
async function writeRows(
  call: Call,
  writer: RowWriter,
  items: readonly Record<string, unknown>[],
): Promise<void> {
  for (let k = 0; k < items.length; k += BATCH_ROWS) {
    await writer.write(fileRows(call, items.slice(k, k + BATCH_ROWS)));
  }
}

async function openFile(call: Call, meta: Record<string, unknown>, source: Source): Promise<{
  file: ReservedFile;
  writer: RowWriter;
}> {
  const file = await reserveFile(call);
  return { file, writer: await openWriter(call, file, meta, source) };
}

/** The call's arguments as stored with files and jobs (the key is never among them). */
function requestSummary(call: Call): Record<string, unknown> {
  const out: Record<string, unknown> = { tool: call.tool, operation: call.spec.operation };
  for (const [k, v] of Object.entries(call.args)) {
    if (v !== undefined && k !== "operation" && k !== "response_format" && k !== "fresh") out[k] = v;
  }
  return out;
}

/**
 * The request as a job's status shows it: long lists and texts (up to 2,000 vintage dates) are
 * abridged, so a status answer stays within the response limit. Files keep the whole request.
 */
function jobRequest(call: Call): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(requestSummary(call))) {
    if (Array.isArray(value) && value.length > 10) {
      out[key] = [...value.slice(0, 10), `... ${value.length - 10} more`];
    } else if (typeof value === "string" && value.length > 200) {
      out[key] = `${value.slice(0, 200)}... (${value.length} characters)`;
    } else {
      out[key] = value;
    }
  }
  return out;
}

interface Written {
  file: ReservedFile;
  rows: number;
  bytes: number;
  missing?: Missing;
}

async function finishFile(
  call: Call,
  file: ReservedFile,
  writer: RowWriter,
  source: Source,
  missing?: Missing,
): Promise<Written> {
  try {
    const summary = await writer.close(missing ? { incomplete: true, missing } : {});
    await call.storage.recordFile(call.project, file.relativePath, {
      rows: summary.rows_written,
      format: call.format,
      created: new Date(call.deps.clock.now()).toISOString(),
      operation: `${call.tool} ${call.spec.operation}`,
      source_url: source.url,
      ...(missing ? { incomplete: true, missing } : {}),
    });
    return { file, rows: summary.rows_written, bytes: summary.bytes, ...(missing ? { missing } : {}) };
  } finally {
    call.storage.release(file);
  }
}

/** Stops a writer after a failure and gives the file's name back: nothing is kept. */
async function discard(call: Call, file: ReservedFile, writer: RowWriter | undefined): Promise<void> {
  await writer?.abort();
  call.storage.release(file);
}

/** Writes a fetched result to a project file and answers with an excerpt and a resource link. */
async function fileResult(
  call: Call,
  parsed: Parsed,
  source: Source,
  decision?: OutputDecision,
  missing?: Missing,
): Promise<ToolOutput<DataResult>> {
  const { file, writer } = await openFile(call, parsed.meta, source);
  try {
    await writeRows(call, writer, parsed.items);
  } catch (e) {
    await discard(call, file, writer);
    throw e;
  }
  const written = await finishFile(call, file, writer, source, missing);
  return fileAnswer(call, written, source, parsed.items.slice(0, EXCERPT_ROWS), parsed, decision);
}

/**
 * FRED's answer fields for a paged pull, stating the request the file answers rather than the
 * first page's: `offset` where it starts, `limit` the rows it was to hold.
 */
function pulledMeta(call: Call, parsed: Parsed, rows: number): Record<string, unknown> {
  return { ...parsed.meta, offset: call.offset, limit: rows };
}

function fileAnswer(
  call: Call,
  written: Written,
  source: Source,
  firstRows: readonly Record<string, unknown>[],
  parsed: Parsed | undefined,
  decision?: OutputDecision,
): ToolOutput<DataResult> {
  const { file, missing } = written;
  // Over HTTP the caller gets the resource URI and the project-relative path, never the server's disk path.
  const where = call.ctx.owner === undefined ? file.path : file.uri;
  const sizeMb = toMb(written.bytes);
  const message = missing
    ? `Incomplete: saved ${written.rows} rows to "${where}", ${missing.rows} fewer than asked for (${missing.reason}). For the rest, call again with offset=${missing.next_offset}. Read it with resources/read at ${file.uri} or, without it, with the opendata_read next call`
    : `Data saved to "${where}" (${written.rows} rows). Read it with resources/read at ${file.uri} or, without it, with the opendata_read next call`;
  const total = parsed?.total;
  const nextOffset = call.offset + written.rows;
  // A file may hold less than FRED has: the caller's limit, or the row cap (then `missing` says so).
  const more = call.spec.paged !== undefined && total !== undefined && nextOffset < total;
  const count: ClipCount = { clipped: 0 };
  const meta = parsed ? boundedMeta(parsed.meta, metaBudget(call), count) : undefined;
  const shown = shownItems(call.spec.kind, firstRows, parsed?.meta ?? {}, count);
  const clippedFields = count.clipped;
  const vintage = citedVintage(call, parsed?.meta ?? {});
  const fitted = fitToLimit(shown, call.ctx.limits.characterLimit, ({ items: pairs, truncated }) => {
    const excerpt = pairs.map((p) => p.structured);
    const structured: DataResult = {
      ...base(call, source),
      status: "success",
      output_mode: "file",
      message,
      ...(vintage ? { vintage } : {}),
      file_path: call.ctx.owner === undefined ? file.path : file.relativePath,
      relative_path: file.relativePath,
      resource_uri: file.uri,
      project: call.project,
      format: call.format,
      rows_written: written.rows,
      file_size_mb: sizeMb,
      excerpt,
      ...(meta ? { meta } : {}),
      ...(total === undefined ? {} : { total }),
      ...(more ? { offset: call.offset, has_more: true, next_offset: nextOffset } : {}),
      ...(missing ? { incomplete: true, missing } : {}),
      ...(clippedFields > 0 ? { clipped_fields: clippedFields } : {}),
      ...(decision ? { decision } : {}),
    };
    const text = call.args.response_format === "json" ? jsonText(structured) : [
      heading(call),
      `Wrote ${
        written.rows.toLocaleString("en-US")
      } rows to \`${where}\` (project "${call.project}", ${call.format}, ${sizeMb} MB).`,
      ...(vintage ? [vintageLine(vintage)] : []),
      ...(missing
        ? [
          `**Incomplete:** ${
            missing.rows.toLocaleString("en-US")
          } rows asked for are not in the file (${missing.reason}). For the rest, call again with offset=${missing.next_offset}.`,
        ]
        : more
        ? [
          `FRED holds ${total.toLocaleString("en-US")} in all; this file has items ${
            call.offset + 1
          }-${nextOffset}. For the rest, call again with offset=${nextOffset}.`,
        ]
        : []),
      `Resource: ${file.uri}`,
      ...(decision ? [`Written to a file because ${decision.reason}.`] : []),
      excerpt.length
        ? `First ${excerpt.length} rows${truncated ? " that fit" : ""}:\n\n${
          itemsTable(call.spec.kind, pairs.map((p) => p.markdown))
        }`
        : "_No rows shown._",
      ...(clippedFields > 0 ? [CLIP_NOTE.replace('output: "file" keeps', "the file keeps")] : []),
      sourceLines(source),
    ].join("\n\n");
    return { text, structured };
  });
  const link: ContentBlock = resourceLink({
    uri: file.uri,
    name: file.name,
    format: call.format,
    bytes: written.bytes,
    description: `${written.rows} rows from FRED ${call.spec.endpoint}`,
  });
  return { text: fitted.text, structured: fitted.structured, content: [link] };
}

/** Fetches one page parsed whole (the first page: at most `job_row_threshold + 1` rows). */
async function parsedPage(
  call: Call,
  offset: number,
  limit: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<{ parsed: Parsed; url: string }> {
  const response = await call.deps.client.get(
    call.spec.endpoint,
    { ...call.query, limit, offset },
    { signal, logger, noCache: true },
  );
  return { parsed: parseResponse(call.spec.kind, response.data), url: response.url };
}

/**
 * Fetches one page and hands its items to `onItems` batch by batch, scanned from the raw body;
 * at most `limit` items. Resolves to the number of items.
 */
async function streamedPage(
  call: Call,
  offset: number,
  limit: number,
  signal: AbortSignal,
  logger: Logger,
  onItems: (items: Record<string, unknown>[]) => Promise<void>,
): Promise<number> {
  const kind = call.spec.kind;
  const { body } = await call.deps.client.getBytes(
    call.spec.endpoint,
    { ...call.query, limit, offset },
    { signal, logger },
  );
  let taken = 0;
  try {
    const scanned = await scanJsonList(body, LIST_KEYS[kind]!, async (batch) => {
      const room = limit - taken;
      if (room <= 0) return;
      const items = (batch.length > room ? batch.slice(0, room) : batch).map((raw) => listItem(kind, raw));
      taken += items.length;
      await onItems(items);
    }, { batchSize: BATCH_ROWS });
    if (!scanned.found && scanned.fields["error_message"] !== undefined) {
      throw new ToolError(
        "DECODE_ERROR",
        `FRED answered with an error: ${String(scanned.fields["error_message"])}`,
      );
    }
    if (!scanned.found) {
      // A page without the list is not "no more rows": it is an answer this call cannot read.
      throw new ToolError(
        "DECODE_ERROR",
        `FRED's answer did not have the expected shape: no "${LIST_KEYS[kind]}" list`,
        {
          retryable: false,
          hint: "Try again; if it persists, FRED may have changed this endpoint",
        },
      );
    }
  } catch (e) {
    if (!(e instanceof JsonScanError)) throw e;
    // Some rows of this page may be written already: retrying the page would repeat them.
    throw new ToolError("DECODE_ERROR", `FRED's answer could not be read: ${e.message}`, {
      retryable: false,
      hint: "Try again; if it persists, FRED may be sending broken data",
    });
  } finally {
    // Frees the page's bytes now rather than at the next full collection, which V8 puts off
    // while memory outside its heap grows: this keeps a job's memory flat across pages.
    release(body);
  }
  return taken;
}

/** Detaches a buffer nobody else holds, so its memory goes back at once. */
function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0) return;
  try {
    buffer.transfer?.(0);
  } catch {
    // Not transferable (shared or already detached): the collector will have it.
  }
}

/** What a paged pull is to deliver. */
interface Plan {
  /** Rows asked for and available (the caller's limit, or everything from the offset). */
  wanted: number;
  /** Rows to write: `wanted`, unless `max_rows` caps it. */
  target: number;
}

/** What the row cap leaves out, or undefined. */
function capMissing(call: Call, plan: Plan): Missing | undefined {
  if (plan.target >= plan.wanted) return undefined;
  return {
    rows: plan.wanted - plan.target,
    reason: `one file holds at most ${call.deps.settings.max_rows.toLocaleString("en-US")} rows (max_rows)`,
    next_offset: call.offset + plan.target,
  };
}

/** What is missing after writing `written` of `plan`'s rows (FRED may hold fewer than it said). */
function missingAfter(call: Call, plan: Plan, written: number): Missing | undefined {
  if (written < plan.target) {
    return {
      rows: plan.wanted - written,
      reason: `FRED stopped answering rows after ${
        (call.offset + written).toLocaleString("en-US")
      }, though its count said ${
        (call.offset + plan.wanted).toLocaleString("en-US")
      } (the series may have been revised meanwhile)`,
      next_offset: call.offset + written,
    };
  }
  return capMissing(call, plan);
}

/** Where a paged pull's data comes from, as results and files cite it. */
function pagedSource(call: Call): Source {
  return sourceOf(
    call.deps.client.publicUrl(call.spec.endpoint, {
      ...call.query,
      ...(call.args["limit"] === undefined ? {} : { limit: call.args["limit"] as number }),
      ...(call.offset ? { offset: call.offset } : {}),
    }),
    call.args["series_id"],
  );
}

/** Whether fetching `pages` more pages fits well within the call's deadline. */
function fitsDeadline(call: Call, pages: number): boolean {
  const left = remainingMs(call.deps.clock.now());
  return estimatedSeconds(call.deps.settings, pages) * 1000 <= left / 2;
}

/**
 * Paged operations to a file (observations with auto or file output, lists with file output):
 * the first request tells how many rows there are; small results are delivered at once, the rest
 * is streamed page by page into a file, in the call or, above the job threshold, in a job.
 */
async function pagedToFile(call: Call): Promise<ToolOutput<DataResult>> {
  const { settings } = call.deps;
  const asked = typeof call.args["limit"] === "number" ? call.args["limit"] : Infinity;
  const size = pageSize(call);
  const first = await parsedPage(
    call,
    call.offset,
    Math.min(asked, size, settings.job_row_threshold + 1),
    call.ctx.signal,
    call.ctx.logger,
  );
  const source = pagedSource(call);
  const total = first.parsed.total ?? call.offset + first.parsed.items.length;
  const wanted = Math.min(asked, Math.max(0, total - call.offset));
  const plan: Plan = { wanted, target: Math.min(wanted, settings.max_rows) };
  const got = first.parsed.items;
  const head: Parsed = { ...first.parsed, meta: pulledMeta(call, first.parsed, plan.target) };
  if (plan.target <= got.length) {
    return await deliver(
      call,
      { ...head, items: got.slice(0, plan.target) },
      source,
      capMissing(call, plan),
    );
  }
  if (call.mode === "auto" && plan.target <= settings.screen_row_threshold) {
    // Small enough to show: gather the few pages, then let auto decide.
    const items = [...got];
    while (items.length < plan.target) {
      const next = await parsedPage(
        call,
        call.offset + items.length,
        Math.min(size, plan.target - items.length),
        call.ctx.signal,
        call.ctx.logger,
      );
      if (next.parsed.items.length === 0) break;
      items.push(...next.parsed.items);
    }
    return await deliver(
      call,
      { ...head, items: items.slice(0, plan.target) },
      source,
      missingAfter(call, plan, Math.min(items.length, plan.target)),
    );
  }
  const pages = Math.ceil((plan.target - got.length) / size);
  if (plan.target > settings.job_row_threshold || !fitsDeadline(call, pages)) {
    return await startPagedJob(call, head, plan, source);
  }

  // At most the job threshold, and quick: stream in this call, reporting progress per page.
  const { file, writer } = await openFile(call, head.meta, source);
  let written: number;
  try {
    written = await streamPages(call, {
      first: head,
      target: plan.target,
      writer,
      signal: call.ctx.signal,
      logger: call.ctx.logger,
      onRows: (rows) => call.ctx.progress(rows, plan.target, `Fetched ${rows} of ${plan.target} rows`),
    });
  } catch (e) {
    await discard(call, file, writer);
    throw e;
  }
  const done = await finishFile(call, file, writer, source, missingAfter(call, plan, written));
  const decision = call.mode === "auto" ? await pagedDecision(call, head, plan.target) : undefined;
  return fileAnswer(call, done, source, got.slice(0, EXCERPT_ROWS), head, decision);
}

/** Why auto wrote a paged result to a file: its tokens, counted on the first page and scaled. */
async function pagedDecision(call: Call, first: Parsed, rows: number): Promise<OutputDecision> {
  const counter = await tokenCounter(modelProfile(call.deps.settings.model_name).encoding);
  const shown = first.items.map((i) => screenItem(call.spec.kind, i, first.meta));
  const tokens = Math.ceil(countRowsTokens(shown, counter) * rows / Math.max(1, shown.length));
  return chooseOutput("auto", { ...autoFacts(call, rows, tokens), fitsOnScreen: false });
}

interface StreamOptions {
  first: Parsed;
  target: number;
  writer: RowWriter;
  signal: AbortSignal;
  logger: Logger;
  onRows(rows: number): void | Promise<void>;
  /** Jobs retry a failed page; calls rely on the client's retries. */
  job?: JobHandle;
}

/**
 * Writes the first page's rows, then fetches and writes the rest page by page, batch by batch.
 * Resolves to the rows written: fewer than `target` when FRED runs out early.
 */
async function streamPages(call: Call, o: StreamOptions): Promise<number> {
  const size = pageSize(call);
  const head = o.first.items.slice(0, o.target);
  await writeRows(call, o.writer, head);
  let written = head.length;
  await o.onRows(written);
  while (written < o.target) {
    const limit = Math.min(size, o.target - written);
    const offset = call.offset + written;
    const fetch = () =>
      streamedPage(call, offset, limit, o.signal, o.logger, async (items) => {
        await o.writer.write(fileRows(call, items));
      });
    const rows = o.job ? await withJobRetries(call, o.job, fetch) : await fetch();
    // FRED may hold fewer rows than its count said (a revision between pages): stop there.
    if (rows === 0) break;
    written += rows;
    await o.onRows(written);
  }
  return written;
}

/** Retries a job step after a retryable failure, waiting `rate_limit_retry_delay` (or Retry-After). */
async function withJobRetries<T>(call: Call, job: JobHandle, step: () => Promise<T>): Promise<T> {
  const { settings, clock } = call.deps;
  for (let attempt = 0;; attempt++) {
    try {
      return await step();
    } catch (e) {
      if (
        !(e instanceof ToolError) || !e.retryable || attempt >= settings.job_retries || job.signal.aborted
      ) throw e;
      const delay = (e.retryAfterS ?? settings.rate_limit_retry_delay) * 1000;
      job.retrying({ code: e.errorType, message: e.message }, attempt + 1, delay);
      await clock.sleep(delay, job.signal);
    }
  }
}

function estimatedSeconds(settings: FredSettings, requests: number): number {
  const perRequest = Math.max(
    settings.rate_limit_per_second > 0 ? 1 / settings.rate_limit_per_second : 0,
    settings.rate_limit_per_minute > 0 ? 60 / settings.rate_limit_per_minute : 0,
  );
  // About one second of FRED's own time per page, plus the pacing the rate limits impose.
  return Math.max(1, Math.ceil(requests * (perRequest + 1)));
}

function acceptedAnswer(
  call: Call,
  jobId: string,
  estimatedRows: number | null,
  seconds: number,
  source: Source,
): ToolOutput<DataResult> {
  const message = estimatedRows === null
    ? "Large dataset detected. Processing in background..."
    : `Large dataset detected (${estimatedRows.toLocaleString("en-US")} rows). Processing in background...`;
  const structured: DataResult = {
    ...base(call, source),
    status: "accepted",
    output_mode: "file",
    message,
    job_id: jobId,
    estimated_rows: estimatedRows,
    estimated_time_seconds: seconds,
    project: call.project,
    format: call.format,
    check_status: "Use fred_job_status tool with this job_id",
  };
  const text = call.args.response_format === "json" ? jsonText(structured) : [
    heading(call),
    message,
    markdownTable(["job_id", "estimated rows", "estimated seconds", "project", "format"], [[
      jobId,
      estimatedRows ?? "unknown",
      seconds,
      call.project,
      call.format,
    ]]),
    `Check progress with fred_job_status {"job_id": "${jobId}"} (add "wait_seconds" to wait for it); cancel with fred_job_cancel.`,
    sourceLines(source),
  ].join("\n\n");
  return { text, structured };
}

function jobResult(call: Call, written: Written, source: Source): Record<string, unknown> {
  return {
    file_path: written.file.path,
    relative_path: written.file.relativePath,
    resource_uri: written.file.uri,
    project: call.project,
    rows_written: written.rows,
    file_size_mb: toMb(written.bytes),
    file_size_bytes: written.bytes,
    format: call.format,
    ...(written.missing ? { incomplete: true, missing: written.missing } : {}),
    source,
  };
}

/** The message of a finished job: "Ready for analysis" only when the file holds everything. */
function jobMessage(written: Written): string {
  const m = written.missing;
  if (!m) return "Data successfully saved to file. Ready for analysis.";
  return `Incomplete: saved ${written.rows.toLocaleString("en-US")} rows; ${
    m.rows.toLocaleString("en-US")
  } rows asked for are missing because ${m.reason}. For the rest, call again with offset=${m.next_offset}.`;
}

/** A job failure that keeps no file says so. */
function withoutFile(e: unknown): unknown {
  if (e instanceof ToolError && e.errorType === "STORAGE_LIMIT") {
    return new ToolError("STORAGE_LIMIT", `${e.message}; the partial file was removed`, {
      retryable: false,
      ...(e.hint ? { hint: e.hint } : {}),
    });
  }
  return e;
}

async function startPagedJob(
  call: Call,
  first: Parsed,
  plan: Plan,
  source: Source,
): Promise<ToolOutput<DataResult>> {
  // Refused before anything is reserved: a client at its running-jobs share loses nothing.
  call.deps.jobs.checkCapacity(call.ctx.client, call.ctx.owner);
  const { file, writer } = await openFile(call, first.meta, source);
  const pages = Math.ceil(plan.target / pageSize(call));
  // The first page is written as soon as the job runs, then let go.
  let firstPage: Parsed | undefined = first;
  const view = call.deps.jobs.start({
    kind: `${call.tool} ${call.spec.operation}`,
    request: jobRequest(call),
    estimatedRows: plan.target,
    ...(call.ctx.owner === undefined ? {} : { owner: call.ctx.owner }),
    ...(call.ctx.client === undefined ? {} : { client: call.ctx.client }),
    resume: { kind: RESUME_PAGED, data: recipe(call, file) },
    run: (job) => {
      const head = firstPage!;
      firstPage = undefined;
      return pagedJob(call, { file, writer, head, plan, source, job });
    },
  });
  await call.deps.jobs.persisted(view.job_id);
  return acceptedAnswer(
    call,
    view.job_id,
    plan.target,
    estimatedSeconds(call.deps.settings, pages - 1),
    source,
  );
}

/** The work of a paged job: the first page's rows, then the rest page by page, into the file. */
async function pagedJob(
  call: Call,
  o: { file: ReservedFile; writer: RowWriter; head: Parsed; plan: Plan; source: Source; job: JobHandle },
): Promise<JobOutcome> {
  const { file, writer, plan, source, job } = o;
  const logger = call.deps.logger.child({ tool_name: call.tool, job_id: job.id });
  let rows: number;
  try {
    rows = await streamPages(call, {
      first: o.head,
      target: plan.target,
      writer,
      signal: job.signal,
      logger,
      onRows: (n) => job.progress(n, plan.target, `Fetching ${call.spec.kind} from FRED API...`),
      job,
    });
    if (job.signal.aborted) throw job.signal.reason;
  } catch (e) {
    await discard(call, file, writer);
    throw withoutFile(e);
  }
  const written = await finishFile(call, file, writer, source, missingAfter(call, plan, rows));
  return {
    result: jobResult(call, written, source),
    message: jobMessage(written),
    incomplete: written.missing !== undefined,
  };
}

const RESUME_PAGED = "fred.paged";
const RESUME_SINGLE = "fred.single";

/**
 * What another replica needs to carry a job on: the call's arguments (FRED's key is never
 * among them) and the file it writes. The owner travels as a hash, with the job.
 */
function recipe(call: Call, file: ReservedFile): Record<string, unknown> {
  return {
    tool: call.tool,
    args: call.args,
    mode: call.mode,
    format: call.format,
    project: call.project,
    file: file.relativePath,
  };
}

/**
 * Lets this replica carry on with FRED jobs whose replica died: the pull starts again from its
 * first row (the dead replica's partial file is removed) and the file keeps its name.
 */
export function registerResumers(deps: FredDeps): void {
  deps.jobs.resumable(RESUME_PAGED, async (data, job, owner) => {
    const call = await resumedCall(data, owner, deps);
    const asked = typeof call.args["limit"] === "number" ? call.args["limit"] : Infinity;
    const logger = deps.logger.child({ tool_name: call.tool, job_id: job.id });
    const first = await withJobRetries(
      call,
      job,
      () => parsedPage(call, call.offset, Math.min(asked, pageSize(call)), job.signal, logger),
    );
    const total = first.parsed.total ?? call.offset + first.parsed.items.length;
    const wanted = Math.min(asked, Math.max(0, total - call.offset));
    const plan: Plan = { wanted, target: Math.min(wanted, deps.settings.max_rows) };
    const source = pagedSource(call);
    const head: Parsed = { ...first.parsed, meta: pulledMeta(call, first.parsed, plan.target) };
    const { file, writer } = await openFile(call, head.meta, source);
    return await pagedJob(call, { file, writer, head, plan, source, job });
  });
  deps.jobs.resumable(RESUME_SINGLE, async (data, job, owner) => {
    const call = await resumedCall(data, owner, deps);
    return await singleFetchJob(call, await reserveFile(call), job);
  });
}

/** Rebuilds a job's call from its recipe, and removes what the dead replica left half written. */
async function resumedCall(data: Record<string, unknown>, owner: OwnerRef, deps: FredDeps): Promise<Call> {
  // The recipe comes back from the shared store: every part is checked as a caller's input
  // would be before anything is fetched or removed (a forged one once removed files elsewhere).
  const { tool, args, mode, format, project, file: relative } = checkRecipe(data);
  const spec = resolveOperation(tool, args, { multiPage: mode === "file" });
  // Its file counts against the client it was started for, as on the replica that started it.
  const storage = deps.storage.forOwnerHash(owner.hash, owner.client);
  const path = nodePath.join(storage.projectPath(project), ...checkRelativePath(relative, 2, "file"));
  const partial = nodePath.join(nodePath.dirname(path), `.${nodePath.basename(path)}.partial`);
  await Deno.remove(partial).catch(() => {});
  await Deno.remove(`${partial}.wide`).catch(() => {});
  // A job's work never reads the call's context beyond these: it has its own signal and logger.
  const ctx = {
    signal: new AbortController().signal,
    logger: deps.logger,
    requestId: "resumed",
    limits: { characterLimit: 25_000 },
    progress: () => Promise.resolve(),
  } as unknown as ToolCallContext;
  return {
    tool,
    spec,
    args,
    ctx,
    deps,
    storage,
    query: fredQuery(spec, args),
    offset: typeof args["offset"] === "number" ? args["offset"] : 0,
    mode,
    format,
    project,
    fileName: nodePath.basename(path),
  };
}

/** A stored recipe ({@linkcode recipe}) read back: each part checked, else a refusal. */
function checkRecipe(data: Record<string, unknown>): {
  tool: string;
  args: DataArgs;
  mode: OutputMode;
  format: FileFormat;
  project: string;
  file: string;
} {
  const bad = (what: string): never => {
    throw new ToolError("WORKER_LOST", `The stored job cannot be resumed: its ${what} is not valid`, {
      retryable: true,
      hint: "Start the same request again",
    });
  };
  const { tool, args, mode, format, project, file } = data;
  if (typeof tool !== "string" || !Object.hasOwn(OPERATIONS, tool)) bad("tool");
  const scalar = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);
  if (
    typeof args !== "object" || args === null || Array.isArray(args) ||
    !Object.values(args).every((v) => scalar(v) || (Array.isArray(v) && v.length <= 1000 && v.every(scalar)))
  ) bad("arguments");
  if (typeof mode !== "string" || !(OUTPUT_MODES as readonly string[]).includes(mode)) bad("output mode");
  if (typeof format !== "string" || !(FILE_FORMATS as readonly string[]).includes(format)) bad("file format");
  if (typeof project !== "string" || typeof file !== "string") bad("file");
  return {
    tool: tool as string,
    args: args as DataArgs,
    mode: mode as OutputMode,
    format: format as FileFormat,
    project: checkProjectName(project as string, "project"),
    file: file as string,
  };
}

/** Shape files and other single large answers: fetched and written by a background job. */
async function startSingleFetchJob(call: Call): Promise<ToolOutput<DataResult>> {
  const source = singleSource(call);
  call.deps.jobs.checkCapacity(call.ctx.client, call.ctx.owner);
  const file = await reserveFile(call);
  const view = call.deps.jobs.start({
    kind: `${call.tool} ${call.spec.operation}`,
    request: jobRequest(call),
    estimatedRows: null,
    ...(call.ctx.owner === undefined ? {} : { owner: call.ctx.owner }),
    ...(call.ctx.client === undefined ? {} : { client: call.ctx.client }),
    resume: { kind: RESUME_SINGLE, data: recipe(call, file) },
    run: (job) => singleFetchJob(call, file, job),
  });
  await call.deps.jobs.persisted(view.job_id);
  return acceptedAnswer(call, view.job_id, null, estimatedSeconds(call.deps.settings, 1), source);
}

function singleSource(call: Call): Source {
  return sourceOf(call.deps.client.publicUrl(call.spec.endpoint, call.query));
}

/** The work of a single-fetch job: one request, written to the reserved file. */
async function singleFetchJob(call: Call, file: ReservedFile, job: JobHandle): Promise<JobOutcome> {
  const source = singleSource(call);
  const logger = call.deps.logger.child({ tool_name: call.tool, job_id: job.id });
  let writer: RowWriter | undefined;
  try {
    const response = await withJobRetries(
      call,
      job,
      () =>
        call.deps.client.get(call.spec.endpoint, call.query, {
          signal: job.signal,
          logger,
          noCache: true,
        }),
    );
    const parsed = parseResponse(call.spec.kind, response.data);
    job.progress(0, parsed.items.length, "Writing the file");
    writer = await openWriter(call, file, parsed.meta, source);
    await writeRows(call, writer, parsed.items);
    job.progress(parsed.items.length, parsed.items.length, "Written");
    if (job.signal.aborted) throw job.signal.reason;
  } catch (e) {
    await discard(call, file, writer);
    throw withoutFile(e);
  }
  const written = await finishFile(call, file, writer, source);
  return { result: jobResult(call, written, source), message: jobMessage(written) };
}
