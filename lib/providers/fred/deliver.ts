// Where a FRED result goes: inline (cut to the response limit), to a project file with an
// excerpt, or to a background job that streams pages into a file. Shared by the six data tools.
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import type { Logger } from "../../log.ts";
import { fitToLimit, jsonText, markdownTable, page, truncationNotice } from "../../mcp/output.ts";
import type { ContentBlock, ToolCallContext, ToolOutput } from "../../mcp/provider.ts";
import type { JobHandle, JobManager } from "../../output/jobs.ts";
import { checkFilename, checkProjectName, renderFilenamePattern, stamp } from "../../output/paths.ts";
import { resourceLink } from "../../output/resources.ts";
import type { ProjectStorage, ReservedFile } from "../../output/storage.ts";
import { toMb } from "../../output/storage.ts";
import { chooseOutput, estimateRowsTokens, tokenBudget } from "../../output/tokens.ts";
import type { OutputDecision, OutputFacts, OutputMode } from "../../output/tokens.ts";
import { openRowWriter } from "../../output/writers.ts";
import type { FileFormat, RowWriter } from "../../output/writers.ts";
import type { FredClient } from "./client.ts";
import type { FredSettings } from "./config.ts";
import { itemsTable, metaLine, sourceLines, sourceOf } from "./format.ts";
import type { Source } from "./format.ts";
import type { OperationSpec } from "./operations.ts";
import { CSV_COLUMNS, parseResponse, screenItem } from "./parse.ts";
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

const EXCERPT_ROWS = 10;
const FILE_HINT =
  'For all of it at once, call again with output: "file" (writes a project file and returns its path and a resource link).';

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
  query: Record<string, QueryValue>;
  offset: number;
  mode: OutputMode;
  format: FileFormat;
  project: string;
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
  const spec = resolveOperation(tool, args);
  deps.client.requireKey();
  const mode = args.output ?? deps.settings.output_mode;
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
    query: fredQuery(spec, args),
    offset: typeof args["offset"] === "number" ? args["offset"] : 0,
    mode,
    format,
    project,
  };
  if (spec.job === "always" && mode !== "screen") return await startSingleFetchJob(call);
  if (spec.kind === "observations" && mode !== "screen") return await observationsToFile(call);

  const limit = requestLimit(call);
  const params = { ...call.query, ...(limit === undefined ? {} : { limit, offset: call.offset }) };
  const response = await deps.client.get(spec.endpoint, params, { signal: ctx.signal, logger: ctx.logger });
  const parsed = parseResponse(spec.kind, response.data);
  return await deliver(call, parsed, sourceOf(response.url, args["series_id"]));
}

/** The `limit` sent to FRED for a single-request call. */
function requestLimit(call: Call): number | undefined {
  const { spec, args, mode, deps } = call;
  if (!spec.paged) return undefined;
  const asked = typeof args["limit"] === "number" ? args["limit"] : undefined;
  if (spec.kind === "observations") {
    // Inline: no point fetching more rows than could ever be shown.
    return Math.min(asked ?? spec.paged.max, deps.settings.screen_row_threshold);
  }
  return asked ?? (mode === "file" ? spec.paged.max : spec.paged.defaultLimit);
}

/** Sends a fetched result inline or to a file, as the mode (and for auto, its size) decides. */
async function deliver(call: Call, parsed: Parsed, source: Source): Promise<ToolOutput<DataResult>> {
  if (call.mode === "screen") return screenResult(call, parsed, source);
  if (call.mode === "file") return await fileResult(call, parsed, source);
  // Tokens are estimated on what would be shown (notes shortened, repeated fields dropped).
  const shown = parsed.items.map((i) => screenItem(call.spec.kind, i, parsed.meta));
  const facts = autoFacts(call, parsed.items.length, estimateRowsTokens(shown));
  // First as if it fitted: over the token budget or the row threshold it goes to a file anyway.
  const hopeful = chooseOutput("auto", { ...facts, fitsOnScreen: true });
  if (hopeful.mode === "screen") {
    const screen = screenResult(call, parsed, source, hopeful);
    if (screen.structured?.["truncated"] === false) return screen;
  }
  return await fileResult(call, parsed, source, chooseOutput("auto", { ...facts, fitsOnScreen: false }));
}

function autoFacts(call: Call, rows: number, estimatedTokens: number): Omit<OutputFacts, "fitsOnScreen"> {
  const { settings } = call.deps;
  return {
    rows,
    estimatedTokens,
    budget: tokenBudget({
      safeTokenLimit: settings.safe_token_limit,
      modelTokenLimit: settings.model_token_limit,
      assumeContextUsed: settings.assume_context_used,
      safetyMargin: settings.safety_margin,
    }),
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

/** The inline answer, cut at an item boundary to the character limit. */
function screenResult(
  call: Call,
  parsed: Parsed,
  source: Source,
  decision?: OutputDecision,
): ToolOutput<DataResult> {
  const { spec, offset } = call;
  const limit = call.ctx.limits.characterLimit;
  const slim = parsed.items.map((i) => screenItem(spec.kind, i, parsed.meta));
  const total = spec.paged ? Math.max(parsed.total ?? 0, offset + slim.length) : slim.length;
  const start = spec.paged ? offset : 0;
  const meta = metaLine(parsed.meta);
  const fitted = fitToLimit(slim, limit, ({ items, truncated }) => {
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
    const message = items.length === 0
      ? "No items matched"
      : `Showing ${start + 1}-${start + items.length} of ${total}`;
    const structured: DataResult = {
      ...base(call, source),
      status: "success",
      output_mode: "screen",
      message,
      items,
      meta: parsed.meta,
      ...env,
      truncated,
      ...(decision ? { decision } : {}),
    };
    const text = call.args.response_format === "json" ? jsonText(structured) : [
      heading(call),
      ...(meta ? [meta] : []),
      `${message}.`,
      itemsTable(spec.kind, items),
      ...notes,
      sourceLines(source),
    ].join("\n\n");
    return { text, structured };
  });
  return { text: fitted.text, structured: fitted.structured };
}

/** File name for a call: the caller's, or the configured pattern filled in. */
function fileName(call: Call): string {
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

/** Claims the call's file name in its project (path checks and permissions fail here, early). */
async function reserveFile(call: Call): Promise<ReservedFile> {
  return await call.deps.storage.reserve(call.project, call.spec.subdir, fileName(call), call.format);
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
    });
  } catch (e) {
    call.deps.storage.release(file);
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
    if (v !== undefined && k !== "operation" && k !== "response_format") out[k] = v;
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
}

async function finishFile(
  call: Call,
  file: ReservedFile,
  writer: RowWriter,
  source: Source,
): Promise<Written> {
  try {
    const summary = await writer.close();
    await call.deps.storage.recordFile(call.project, file.relativePath, {
      rows: summary.rows_written,
      format: call.format,
      created: new Date(call.deps.clock.now()).toISOString(),
      operation: `${call.tool} ${call.spec.operation}`,
      source_url: source.url,
    });
    return { file, rows: summary.rows_written, bytes: summary.bytes };
  } finally {
    call.deps.storage.release(file);
  }
}

/** Writes a fetched result to a project file and answers with an excerpt and a resource link. */
async function fileResult(
  call: Call,
  parsed: Parsed,
  source: Source,
  decision?: OutputDecision,
): Promise<ToolOutput<DataResult>> {
  const { file, writer } = await openFile(call, parsed.meta, source);
  try {
    await writer.write(parsed.items);
  } catch (e) {
    await writer.abort();
    call.deps.storage.release(file);
    throw e;
  }
  const written = await finishFile(call, file, writer, source);
  const excerpt = parsed.items.slice(0, EXCERPT_ROWS).map((i) => screenItem(call.spec.kind, i, parsed.meta));
  return fileAnswer(call, written, source, excerpt, parsed, decision);
}

function fileAnswer(
  call: Call,
  written: Written,
  source: Source,
  excerpt: Record<string, unknown>[],
  parsed: Parsed | undefined,
  decision?: OutputDecision,
): ToolOutput<DataResult> {
  const { file } = written;
  const sizeMb = toMb(written.bytes);
  const message =
    `Data saved to "${file.path}" (${written.rows} rows). Read it with resources/read at ${file.uri}`;
  // A file holds one request's worth (lists: at most FRED's per-request maximum); say what is left.
  const total = parsed?.total;
  const nextOffset = call.offset + written.rows;
  const more = call.spec.paged !== undefined && total !== undefined && nextOffset < total;
  const structured: DataResult = {
    ...base(call, source),
    status: "success",
    output_mode: "file",
    message,
    file_path: file.path,
    relative_path: file.relativePath,
    resource_uri: file.uri,
    project: call.project,
    format: call.format,
    rows_written: written.rows,
    file_size_mb: sizeMb,
    excerpt,
    ...(parsed ? { meta: parsed.meta } : {}),
    ...(total === undefined ? {} : { total }),
    ...(more ? { offset: call.offset, has_more: true, next_offset: nextOffset } : {}),
    ...(decision ? { decision } : {}),
  };
  const text = call.args.response_format === "json" ? jsonText(structured) : [
    heading(call),
    `Wrote ${
      written.rows.toLocaleString("en-US")
    } rows to \`${file.path}\` (project "${call.project}", ${call.format}, ${sizeMb} MB).`,
    ...(more
      ? [
        `FRED holds ${total.toLocaleString("en-US")} in all; this file has items ${
          call.offset + 1
        }-${nextOffset}. For the rest, call again with offset=${nextOffset}${
          call.spec.paged ? ` (up to ${call.spec.paged.max.toLocaleString("en-US")} per call with limit)` : ""
        }.`,
      ]
      : []),
    `Resource: ${file.uri}`,
    ...(decision ? [`Written to a file because ${decision.reason}.`] : []),
    excerpt.length ? `First ${excerpt.length} rows:\n\n${itemsTable(call.spec.kind, excerpt)}` : "_No rows._",
    sourceLines(source),
  ].join("\n\n");
  const link: ContentBlock = resourceLink({
    uri: file.uri,
    name: file.name,
    format: call.format,
    bytes: written.bytes,
    description: `${written.rows} rows from FRED ${call.spec.endpoint}`,
  });
  return { text, structured, content: [link] };
}

/** Fetches one observations page (`limit` rows from `offset`). */
async function observationsPage(
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
  return { parsed: parseResponse("observations", response.data), url: response.url };
}

/**
 * Observations with auto or file output: the first page says how many rows there are; small
 * results are delivered at once, large ones stream page by page into a file, in the call or,
 * above the job threshold, in a background job.
 */
async function observationsToFile(call: Call): Promise<ToolOutput<DataResult>> {
  const { settings } = call.deps;
  const asked = typeof call.args["limit"] === "number" ? call.args["limit"] : Infinity;
  const first = await observationsPage(
    call,
    call.offset,
    Math.min(asked, settings.page_size),
    call.ctx.signal,
    call.ctx.logger,
  );
  const source = sourceOf(
    call.deps.client.publicUrl(call.spec.endpoint, {
      ...call.query,
      ...(call.args["limit"] === undefined ? {} : { limit: call.args["limit"] as number }),
      ...(call.offset ? { offset: call.offset } : {}),
    }),
    call.args["series_id"],
  );
  const available = Math.max(0, (first.parsed.total ?? first.parsed.items.length) - call.offset);
  const wanted = Math.min(asked, available, settings.max_rows);
  if (wanted <= first.parsed.items.length) {
    return await deliver(call, { ...first.parsed, items: first.parsed.items.slice(0, wanted) }, source);
  }
  if (call.mode === "auto" && wanted <= settings.screen_row_threshold) {
    // Small enough to show: gather the few pages, then let auto decide.
    const items = [...first.parsed.items];
    while (items.length < wanted) {
      const next = await observationsPage(
        call,
        call.offset + items.length,
        Math.min(settings.page_size, wanted - items.length),
        call.ctx.signal,
        call.ctx.logger,
      );
      if (next.parsed.items.length === 0) break;
      items.push(...next.parsed.items);
    }
    return await deliver(call, { ...first.parsed, items: items.slice(0, wanted) }, source);
  }
  if (wanted > settings.job_row_threshold) {
    return await startObservationsJob(call, first.parsed, wanted, source);
  }

  // Below the job threshold: stream in this call, reporting progress per page.
  const { file, writer } = await openFile(call, first.parsed.meta, source);
  try {
    await streamObservations(call, {
      first: first.parsed,
      wanted,
      writer,
      signal: call.ctx.signal,
      logger: call.ctx.logger,
      onPage: (rows) => call.ctx.progress(rows, wanted, `Fetched ${rows} of ${wanted} observations`),
    });
  } catch (e) {
    await writer.abort();
    call.deps.storage.release(file);
    throw e;
  }
  const written = await finishFile(call, file, writer, source);
  const excerpt = first.parsed.items.slice(0, EXCERPT_ROWS).map((i) =>
    screenItem("observations", i, first.parsed.meta)
  );
  const decision = call.mode === "auto"
    ? chooseOutput("auto", {
      ...autoFacts(
        call,
        wanted,
        Math.ceil(
          estimateRowsTokens(
            first.parsed.items.map((i) => screenItem("observations", i, first.parsed.meta)),
          ) *
            wanted / Math.max(1, first.parsed.items.length),
        ),
      ),
      fitsOnScreen: false,
    })
    : undefined;
  return fileAnswer(call, written, source, excerpt, { ...first.parsed, items: [] }, decision);
}

interface StreamOptions {
  first: Parsed;
  wanted: number;
  writer: RowWriter;
  signal: AbortSignal;
  logger: Logger;
  onPage(rows: number): void | Promise<void>;
  /** Jobs retry a failed page; calls rely on the client's retries. */
  job?: JobHandle;
}

/** Writes the first page, then fetches and writes the rest one page at a time. */
async function streamObservations(call: Call, o: StreamOptions): Promise<number> {
  const pageSize = call.deps.settings.page_size;
  const head = o.first.items.slice(0, o.wanted);
  await o.writer.write(head);
  let written = head.length;
  await o.onPage(written);
  while (written < o.wanted) {
    const limit = Math.min(pageSize, o.wanted - written);
    const offset = call.offset + written;
    const next = o.job
      ? await withJobRetries(call, o.job, () => observationsPage(call, offset, limit, o.signal, o.logger))
      : await observationsPage(call, offset, limit, o.signal, o.logger);
    // FRED may hold fewer rows than its count said (a revision between pages): stop there.
    if (next.parsed.items.length === 0) break;
    const rows = next.parsed.items.slice(0, limit);
    await o.writer.write(rows);
    written += rows.length;
    await o.onPage(written);
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
    source,
  };
}

async function startObservationsJob(
  call: Call,
  first: Parsed,
  wanted: number,
  source: Source,
): Promise<ToolOutput<DataResult>> {
  const { file, writer } = await openFile(call, first.meta, source);
  const logger = call.deps.logger.child({ tool_name: call.tool });
  const pages = Math.ceil(wanted / call.deps.settings.page_size);
  const view = call.deps.jobs.start({
    kind: `${call.tool} ${call.spec.operation}`,
    request: jobRequest(call),
    estimatedRows: wanted,
    run: async (job) => {
      try {
        await streamObservations(call, {
          first,
          wanted,
          writer,
          signal: job.signal,
          logger: logger.child({ job_id: job.id }),
          onPage: (rows) => job.progress(rows, wanted, "Fetching observations from FRED API..."),
          job,
        });
        if (job.signal.aborted) throw job.signal.reason;
      } catch (e) {
        await writer.abort();
        call.deps.storage.release(file);
        throw e;
      }
      const written = await finishFile(call, file, writer, source);
      return {
        result: jobResult(call, written, source),
        message: "Data successfully saved to file. Ready for analysis.",
      };
    },
  });
  return acceptedAnswer(call, view.job_id, wanted, estimatedSeconds(call.deps.settings, pages - 1), source);
}

/** Shape files and other single large answers: fetched and written by a background job. */
async function startSingleFetchJob(call: Call): Promise<ToolOutput<DataResult>> {
  const source = sourceOf(call.deps.client.publicUrl(call.spec.endpoint, call.query));
  const file = await reserveFile(call);
  const logger = call.deps.logger.child({ tool_name: call.tool });
  const view = call.deps.jobs.start({
    kind: `${call.tool} ${call.spec.operation}`,
    request: jobRequest(call),
    estimatedRows: null,
    run: async (job) => {
      let writer: RowWriter | undefined;
      try {
        const response = await withJobRetries(
          call,
          job,
          () =>
            call.deps.client.get(call.spec.endpoint, call.query, {
              signal: job.signal,
              logger: logger.child({ job_id: job.id }),
              noCache: true,
            }),
        );
        const parsed = parseResponse(call.spec.kind, response.data);
        job.progress(0, parsed.items.length, "Writing the file");
        writer = await openWriter(call, file, parsed.meta, source);
        await writer.write(parsed.items);
        job.progress(parsed.items.length, parsed.items.length, "Written");
        if (job.signal.aborted) throw job.signal.reason;
      } catch (e) {
        await writer?.abort();
        call.deps.storage.release(file);
        throw e;
      }
      const written = await finishFile(call, file, writer, source);
      return {
        result: jobResult(call, written, source),
        message: "Data successfully saved to file. Ready for analysis.",
      };
    },
  });
  return acceptedAnswer(call, view.job_id, null, estimatedSeconds(call.deps.settings, 1), source);
}
