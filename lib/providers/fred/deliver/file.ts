// A FRED result written to a project file: its name, the row writer, and the answer with an
// excerpt and a link.
import { fitToLimit, jsonText } from "../../../mcp/shaping.ts";
import type { ContentBlock, ToolOutput } from "../../../mcp/provider.ts";
import { renderFilenamePattern, stamp } from "../../../output/paths.ts";
import { resourceLink } from "../../../output/resources.ts";
import type { ReservedFile } from "../../../output/storage.ts";
import { toMb } from "../../../output/storage.ts";
import type { OutputDecision } from "../../../output/tokens.ts";
import { openRowWriter, resumeRowWriter } from "../../../output/row_writers.ts";
import type { RowWriter, RowWriterOptions, WriterCheckpoint } from "../../../output/row_writers.ts";
import { boundedMeta, itemsTable, sourceLines } from "../format.ts";
import type { ClipCount, Source } from "../format.ts";
import { CSV_COLUMNS, itemFor } from "../parse.ts";
import type { Parsed } from "../parse.ts";
import {
  base,
  BATCH_ROWS,
  type Call,
  citedVintage,
  CLIP_NOTE,
  type DataResult,
  EXCERPT_ROWS,
  heading,
  ITEMS_KEY,
  metaBudget,
  type Missing,
  shownItems,
  vintageLine,
} from "./call.ts";

/** File name for a call: the caller's, or the configured pattern filled in. */
export function fileName(call: Call): string {
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
export async function reserveFile(call: Call): Promise<ReservedFile> {
  return await call.storage.reserve(call.project, call.spec.subdir, fileName(call), call.format);
}

/** The row writer's options for a reserved file; the JSON head carries the source and metadata. */
function writerOptions(
  call: Call,
  file: ReservedFile,
  meta: Record<string, unknown>,
  source: Source,
): RowWriterOptions {
  return {
    format: call.format,
    path: file.path,
    tempPath: file.tempPath,
    ...(csvColumns(call) ? { columns: csvColumns(call)! } : {}),
    head: { source, request: requestSummary(call), ...meta },
    itemsKey: ITEMS_KEY[call.spec.kind] ?? call.spec.kind,
    charge: (bytes) => file.charge(bytes),
    ...(file.secrets ? { secrets: file.secrets } : {}),
  };
}

/** Opens the streaming writer of a reserved file; the JSON head carries the source and metadata. */
export async function openWriter(
  call: Call,
  file: ReservedFile,
  meta: Record<string, unknown>,
  source: Source,
): Promise<RowWriter> {
  try {
    return await openRowWriter(writerOptions(call, file, meta, source));
  } catch (e) {
    call.storage.release(file);
    throw e;
  }
}

/**
 * Reopens a reclaimed file at a job's checkpoint (its head is written already), cutting off
 * what the replica that died wrote after it.
 */
export async function resumeWriter(
  call: Call,
  file: ReservedFile,
  source: Source,
  point: WriterCheckpoint,
): Promise<RowWriter> {
  try {
    return await resumeRowWriter(writerOptions(call, file, {}, source), point);
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
export function fileRows(call: Call, items: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const target = call.format === "csv" ? "csv" : "json_file";
  return items.map((i) => itemFor(call.spec.kind, i, target));
}

/** Writes rows in batches, so no encoded page is held whole. */
export async function writeRows(
  call: Call,
  writer: RowWriter,
  items: readonly Record<string, unknown>[],
): Promise<void> {
  for (let k = 0; k < items.length; k += BATCH_ROWS) {
    await writer.write(fileRows(call, items.slice(k, k + BATCH_ROWS)));
  }
}

/** Reserves the call's file and opens its row writer with the metadata and source. */
export async function openFile(call: Call, meta: Record<string, unknown>, source: Source): Promise<{
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
export function jobRequest(call: Call): Record<string, unknown> {
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

/** A finished file: how much it holds and what is missing from it. */
export interface Written {
  file: ReservedFile;
  rows: number;
  bytes: number;
  missing?: Missing;
}

/** Closes the writer, records the file in the project with what is missing, and releases its reservation. */
export async function finishFile(
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
export async function discard(call: Call, file: ReservedFile, writer: RowWriter | undefined): Promise<void> {
  await writer?.abort();
  call.storage.release(file);
}

/**
 * Stops a job's writer without removing its file: another replica carries the job on from its
 * last checkpoint in that file. The name is given back here.
 */
export function leaveFile(call: Call, file: ReservedFile, writer: RowWriter): void {
  writer.leave();
  call.storage.release(file);
}

/** Writes a fetched result to a project file and answers with an excerpt and a resource link. */
export async function fileResult(
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
export function pulledMeta(call: Call, parsed: Parsed, rows: number): Record<string, unknown> {
  return { ...parsed.meta, offset: call.offset, limit: rows };
}

/** The answer to a call whose result went to a file: where it is, an excerpt, and what is missing. */
export function fileAnswer(
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
