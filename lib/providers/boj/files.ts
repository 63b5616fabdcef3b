// `output: "file"`: whole answers written to CSV resources instead of one result cut to the size
// limit. A data answer follows BOJ's NEXTPOSITION request by request (each up to 250 series and
// 60,000 points) up to `file_max_requests`, writing one row per observation as BOJ's own CSV
// does; a request that fails, or the call's deadline drawing near, ends the file early and the
// result says where to continue. A metadata file holds every row that matches the query.
import type { Clock } from "../../clock.ts";
import { describeError } from "../../errors.ts";
import { timeForAnotherRequest } from "../../http/deadline.ts";
import type { ExportedFile, ResultFiles } from "../../output/exports.ts";
import { csvFileLine, partialFileOut } from "../../output/result_files.ts";
import type { ResponseFormat } from "../../mcp/shaping.ts";
import type { Rendered } from "../../mcp/shaping.ts";
import type { Fetched } from "./client.ts";
import type { DataResponse, MetadataEntry, MetadataResponse, Series } from "./decode.ts";
import { boundMeta, boundParameter, clippedNotice, sourceInfo, sourceLines } from "./format.ts";
import { layerPath } from "./metadata_format.ts";
import type { DataOutput, MetadataOutput } from "./schemas.ts";

/** Columns of an observations file, in order (BOJ's CSV columns, in lower case). */
export const DATA_COLUMNS = [
  "series_code",
  "name",
  "unit",
  "frequency",
  "category",
  "last_update",
  "survey_date",
  "period",
  "value",
] as const;

/** Columns of a metadata file, in order. */
export const METADATA_COLUMNS = [
  "series_code",
  "name_of_time_series",
  "name_of_time_series_j",
  "unit",
  "unit_j",
  "frequency",
  "category",
  "category_j",
  "layer",
  "start_of_the_time_series",
  "end_of_the_time_series",
  "last_update",
  "notes",
  "notes_j",
] as const;

function pick(en: string | undefined, ja: string | undefined, lang?: string): string | null {
  return (lang === "EN" ? en ?? ja : ja ?? en) ?? null;
}

/** One row per observation of `series`, names and units in `lang` (the other when missing). */
export function observationRows(series: readonly Series[], lang?: string): Record<string, unknown>[] {
  return series.flatMap((s) => {
    const head = {
      series_code: s.series_code,
      name: pick(s.name_of_time_series, s.name_of_time_series_j, lang),
      unit: pick(s.unit, s.unit_j, lang),
      frequency: s.frequency ?? null,
      category: pick(s.category, s.category_j, lang),
      last_update: s.last_update ?? null,
    };
    return s.points.map((p) => ({ ...head, survey_date: p.survey_date, period: p.period, value: p.value }));
  });
}

/** One row of a metadata file. */
export function metadataRow(e: MetadataEntry): Record<string, unknown> {
  return {
    series_code: e.series_code,
    name_of_time_series: e.name_of_time_series ?? null,
    name_of_time_series_j: e.name_of_time_series_j ?? null,
    unit: e.unit ?? null,
    unit_j: e.unit_j ?? null,
    frequency: e.frequency ?? null,
    category: e.category ?? null,
    category_j: e.category_j ?? null,
    layer: layerPath(e),
    start_of_the_time_series: e.start_of_the_time_series ?? null,
    end_of_the_time_series: e.end_of_the_time_series ?? null,
    last_update: e.last_update ?? null,
    notes: e.notes ?? null,
    notes_j: e.notes_j ?? null,
  };
}

/** A file name from words of the request (`FM08_FXERD01_FXERD02`), at most 80 characters. */
export function fileName(...words: string[]): string {
  return words.join("_").normalize("NFKD").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "")
    .slice(0, 80).replace(/_+$/, "") || "boj";
}

/** Options for {@linkcode writeDataFile}. */
export interface DataFileOptions {
  files: ResultFiles;
  name: string;
  /** What the file holds, for listings. */
  what: string;
  /** The first answer, already fetched (so a refused request writes no file). */
  first: Fetched<DataResponse>;
  /** The start_position the first answer was asked with (1 when none). */
  startPosition: number;
  /** Most requests in all, the first included (`file_max_requests`). */
  maxRequests: number;
  /** Asks BOJ for the same data from `startPosition`. */
  fetchFrom(startPosition: number): Promise<Fetched<DataResponse>>;
  lang?: "JP" | "EN";
  clock: Clock;
  signal: AbortSignal;
}

/** A written observations file and how far it got. */
export interface DataFile {
  file: ExportedFile;
  series: number;
  points: number;
  requests: number;
  /** Where BOJ's answer goes on (its last NEXTPOSITION), or null when the file holds all of it. */
  nextPosition: number | null;
  /** Why the file ends before BOJ's answer does, or null. */
  stopped: string | null;
}

/**
 * Writes every observation of the answer, following NEXTPOSITION until BOJ says it is complete,
 * `maxRequests` are made, the call's deadline leaves no room for about two more requests, or a
 * request fails (then the file ends there and the result says so instead of failing).
 */
export async function writeDataFile(o: DataFileOptions): Promise<DataFile> {
  let series = 0;
  let points = 0;
  let requests = 1;
  let nextPosition = o.first.data.next_position;
  let stopped: string | null = null;
  async function* pages(): AsyncGenerator<Record<string, unknown>[]> {
    let answer = o.first.data;
    let position = o.startPosition;
    let slowest = 0;
    for (;;) {
      series += answer.series.length;
      points += answer.series.reduce((n, s) => n + s.points.length, 0);
      yield observationRows(answer.series, o.lang);
      const next = answer.next_position;
      nextPosition = next;
      if (next === null) return;
      if (next <= position) {
        stopped = `BOJ's NEXTPOSITION ${next} does not move past the start position ${position}`;
        return;
      }
      if (requests >= o.maxRequests) {
        stopped = `the file takes at most ${o.maxRequests} BOJ requests (file_max_requests)`;
        return;
      }
      if (!timeForAnotherRequest(o.clock.now(), slowest)) {
        stopped = "the call's deadline drew near";
        return;
      }
      const started = o.clock.now();
      try {
        answer = (await o.fetchFrom(next)).data;
      } catch (e) {
        if (o.signal.aborted) throw e;
        stopped = `the request from start_position ${next} failed (${describeError(e)})`;
        return;
      }
      requests++;
      position = next;
      slowest = Math.max(slowest, o.clock.now() - started);
    }
  }
  const file = await o.files.save({
    name: o.name,
    format: "csv",
    columns: DATA_COLUMNS,
    rows: pages(),
    description: o.what,
  });
  return { file, series, points, requests, nextPosition, stopped };
}

/** Writes metadata rows (a database's series and headings, as filtered) to a CSV file. */
export async function writeMetadataFile(
  files: ResultFiles,
  entries: readonly MetadataEntry[],
  options: { name: string; what: string },
): Promise<ExportedFile> {
  return await files.save({
    name: options.name,
    format: "csv",
    columns: METADATA_COLUMNS,
    rows: [entries.map(metadataRow)],
    description: options.what,
  });
}

/** Options for {@linkcode renderDataFile}. */
export interface DataFileRenderOptions {
  tool: "boj_get_data_code" | "boj_get_data_layer";
  written: DataFile;
  first: Fetched<DataResponse>;
  responseFormat: ResponseFormat;
}

/** The result of a data tool whose observations went to a file. */
export function renderDataFile(o: DataFileRenderOptions): Rendered<DataOutput> {
  const w = o.written;
  const clipped = new Set<string>();
  const data = o.first.data;
  const notices: string[] = [];
  if (w.nextPosition !== null) {
    notices.push(
      `The file ends where BOJ's answer goes on at start_position ${w.nextPosition}: ${
        w.stopped ?? "BOJ has more"
      }. Call ${o.tool} again with the same arguments, start_position=${w.nextPosition} and output "file" ` +
        "for a further file with the rest.",
    );
  }
  if (w.points === 0) {
    notices.push(
      "BOJ found no data for this request: the dates may lie outside the series' range, or every value is " +
        "missing. Check the range with boj_get_metadata and adjust start_date/end_date.",
    );
  }
  const meta = boundMeta(data.meta, clipped);
  const parameter = boundParameter(data.parameter, clipped);
  const fieldsNotice = clippedNotice(clipped);
  const structured: DataOutput = {
    meta,
    parameter,
    next_position: w.nextPosition,
    series_total: w.series,
    series_offset: 0,
    series_count: w.series,
    next_series_offset: null,
    continue_with: w.nextPosition === null ? null : { start_position: w.nextPosition, series_offset: 0 },
    file: partialFileOut(w.file, w.nextPosition !== null),
    truncated: w.nextPosition !== null,
    notices: fieldsNotice ? [...notices, fieldsNotice] : notices,
    source: sourceInfo(o.first.url),
  };
  if (o.responseFormat === "json") return { text: JSON.stringify(structured), structured };
  const endpoint = o.tool === "boj_get_data_code" ? "getDataCode" : "getDataLayer";
  const db = structured.parameter["db"] || "";
  const requests = w.requests === 1 ? "one BOJ request" : `${w.requests} BOJ requests`;
  const lines = [
    `# BOJ ${endpoint}${db ? ` ${db}` : ""}: ${w.series} series to a file`,
    "",
    csvFileLine(
      structured.file!,
      `${
        w.points.toLocaleString("en-US")
      } observations of ${w.series} series (from ${requests}), one row each,`,
      DATA_COLUMNS,
    ),
    "",
    `Status ${structured.meta.status} ${structured.meta.message_id} "${structured.meta.message}"${
      structured.meta.date ? ` · data as of ${structured.meta.date}` : ""
    }`,
  ];
  if (structured.notices.length) lines.push("", ...structured.notices.map((n) => `> ${n}`));
  lines.push("", ...sourceLines(structured.source));
  return { text: lines.join("\n"), structured };
}

/** Options for {@linkcode renderMetadataFile}. */
export interface MetadataFileRenderOptions {
  response: MetadataResponse;
  url: string;
  query?: string;
  /** The rows written (those matching the query). */
  rows: number;
  file: ExportedFile;
  responseFormat: ResponseFormat;
}

/** The result of boj_get_metadata whose rows went to a file. */
export function renderMetadataFile(o: MetadataFileRenderOptions): Rendered<MetadataOutput> {
  const clipped = new Set<string>();
  const notices: string[] = [];
  if (o.rows === 0) {
    notices.push(
      o.query
        ? `No row matches "${o.query}": try fewer or other words (English or Japanese), or no query.`
        : "BOJ returned no rows for this database.",
    );
  }
  const meta = boundMeta(o.response.meta, clipped);
  const fieldsNotice = clippedNotice(clipped);
  const structured: MetadataOutput = {
    meta,
    db: o.response.db.slice(0, 64),
    entries_in_db: o.response.entries.length,
    query: o.query ?? null,
    total: o.rows,
    count: o.rows,
    offset: 0,
    has_more: false,
    next_offset: null,
    entries_count: o.rows,
    file: partialFileOut(o.file, false),
    truncated: false,
    notices: fieldsNotice ? [...notices, fieldsNotice] : notices,
    source: sourceInfo(o.url),
  };
  if (o.responseFormat === "json") return { text: JSON.stringify(structured), structured };
  const lines = [
    `# BOJ metadata ${structured.db}: ${o.rows} rows${o.query ? ` matching "${o.query}"` : ""} to a file`,
    "",
    csvFileLine(
      structured.file!,
      `${o.rows} of the ${structured.entries_in_db} rows (series, and headings without a code)`,
      METADATA_COLUMNS,
    ),
    "",
    `Status ${meta.status} ${meta.message_id} "${meta.message}"${meta.date ? ` · as of ${meta.date}` : ""}`,
  ];
  if (structured.notices.length) lines.push("", ...structured.notices.map((n) => `> ${n}`));
  lines.push("", ...sourceLines(structured.source));
  return { text: lines.join("\n"), structured };
}
