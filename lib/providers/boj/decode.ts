// Turns BOJ API bodies (JSON or CSV, UTF-8 or Shift_JIS) into one model. Field types vary
// between endpoints and formats (LAST_UPDATE is a number in data answers and a string in
// metadata; NEXTPOSITION a number, null or blank), so everything is read defensively.
import { periodLabel } from "./period.ts";
import { ToolError } from "../../errors.ts";
import { jsonTooDeepAt, MAX_JSON_DEPTH } from "../../http/json_depth.ts";
import { parseCsv } from "./csv.ts";

/** The common header of every answer. */
export interface Meta {
  status: number;
  message_id: string;
  message: string;
  date: string | null;
}

/** One observation. */
export interface Point {
  /** The period as BOJ writes it (YYYY, YYYYHH, YYYYQQ, YYYYMM or YYYYMMDD). */
  survey_date: string;
  /** The period labelled by the series' frequency: 2025Q4, 2025H2, FY2025, 2025-04, 2025-04-18. */
  period: string;
  /** A number, null when missing, or the API's text when it is not a number. */
  value: number | string | null;
}

/** Descriptive fields of a series, as the API names them (lower case). */
export interface SeriesFields {
  name_of_time_series?: string;
  name_of_time_series_j?: string;
  unit?: string;
  unit_j?: string;
  frequency?: string;
  category?: string;
  category_j?: string;
  last_update?: string;
}

/** One series of a getDataCode or getDataLayer answer. */
export interface Series extends SeriesFields {
  series_code: string;
  points: Point[];
}

/** A decoded getDataCode or getDataLayer answer. */
export interface DataResponse {
  meta: Meta;
  /** The request echo (PARAMETER), keys in lower snake case. */
  parameter: Record<string, string>;
  /** NEXTPOSITION as given: where to continue, or null when the answer is complete. */
  next_position: number | null;
  series: Series[];
}

/** One row of a getMetadata answer (a series, or a heading when `series_code` is ""). */
export interface MetadataEntry extends SeriesFields {
  series_code: string;
  layer1: number;
  layer2: number;
  layer3: number;
  layer4: number;
  layer5: number;
  start_of_the_time_series?: string;
  end_of_the_time_series?: string;
  notes?: string;
  notes_j?: string;
}

/** A decoded getMetadata answer. */
export interface MetadataResponse {
  meta: Meta;
  db: string;
  entries: MetadataEntry[];
}

/** The text fields of a series, as the API names them (lower case). */
export const SERIES_FIELDS = [
  "name_of_time_series",
  "name_of_time_series_j",
  "unit",
  "unit_j",
  "frequency",
  "category",
  "category_j",
  "last_update",
] as const;

const METADATA_TEXT_FIELDS = [
  ...SERIES_FIELDS,
  "start_of_the_time_series",
  "end_of_the_time_series",
  "notes",
  "notes_j",
] as const;

const PARAMETER_KEYS: Record<string, string> = {
  STARTDATE: "start_date",
  ENDDATE: "end_date",
  STARTPOSITION: "start_position",
};

function decodeError(message: string, status?: number): ToolError {
  return new ToolError("DECODE_ERROR", message, {
    retryable: false,
    ...(status === undefined ? {} : { status }),
    hint: 'The BOJ API sent something this server cannot read; try again later or with format "json"',
  });
}

/**
 * Decodes a body: strict UTF-8 (JSON and English CSV; a BOM is removed), else the charset the
 * response names, else Shift_JIS (the manual's encoding of Japanese CSV). UTF-8 goes first
 * because UTF-8 Japanese often also "decodes" as Shift_JIS, into nonsense, while Shift_JIS
 * Japanese is practically never valid UTF-8; a wrong label therefore cannot garble the text.
 */
export function decodeText(bytes: Uint8Array, contentType = ""): string {
  const declared = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  const attempts = ["utf-8", declared, "shift_jis"].filter((c): c is string => c !== undefined);
  for (const charset of attempts) {
    try {
      return new TextDecoder(charset, { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      // An unknown label or bytes invalid in this charset: try the next one.
    }
  }
  throw decodeError("The BOJ API sent text that is neither UTF-8 nor Shift_JIS");
}

/**
 * The STATUS a BOJ body states in its header (JSON `"STATUS":200` or CSV `STATUS,200`), read
 * from its first bytes only; undefined when there is none (an HTML page, an empty body).
 */
export function sniffStatus(bytes: Uint8Array): number | undefined {
  // The header is ASCII in every encoding the BOJ uses, so a lenient UTF-8 read of the start
  // is enough, even for Shift_JIS.
  const head = new TextDecoder().decode(bytes.subarray(0, 1024));
  const match = /"STATUS"\s*:\s*"?\s*(\d+)/.exec(head) ?? /^\s*STATUS\s*,\s*"?(\d+)/.exec(head);
  return match ? Number(match[1]) : undefined;
}

function text(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function int(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) return Number(value);
  return null;
}

function observation(value: unknown): number | string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  const s = String(value).trim();
  if (s === "") return null;
  const n = Number(s);
  return Number.isFinite(n) && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s) ? n : s;
}

function metaOf(record: Record<string, unknown>): Meta {
  const status = int(record["STATUS"]);
  if (status === null) throw decodeError("The BOJ API answer has no STATUS, so it is not an API result");
  return {
    status,
    message_id: text(record["MESSAGEID"]) ?? "",
    message: text(record["MESSAGE"]) ?? "",
    date: text(record["DATE"]) ?? null,
  };
}

function parameterKey(key: string): string {
  const upper = key.toUpperCase();
  return PARAMETER_KEYS[upper] ?? upper.toLowerCase();
}

function seriesFields(get: (key: string) => unknown): SeriesFields {
  const out: SeriesFields = {};
  for (const key of SERIES_FIELDS) {
    const v = text(get(key.toUpperCase()));
    if (v !== undefined && v !== "") out[key] = v;
  }
  return out;
}

function parseJsonBody(body: string): Record<string, unknown> {
  const deep = jsonTooDeepAt(body);
  if (deep >= 0) {
    throw decodeError(
      `The BOJ API sent JSON nested deeper than ${MAX_JSON_DEPTH} levels (at offset ${deep}); it was refused unread`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw decodeError("The BOJ API sent a body that is not valid JSON (it may have been cut off)");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw decodeError("The BOJ API sent JSON that is not an object");
  }
  return parsed as Record<string, unknown>;
}

function looksJson(body: string): boolean {
  return /^\s*\{/.test(body);
}

function checkNotHtml(body: string): void {
  if (/^\s*<(!doctype|html|\?xml|head|body)/i.test(body)) {
    throw decodeError("The BOJ API sent an HTML page instead of data (maintenance or an error page)");
  }
}

/** Reads the header of an error body (JSON even when CSV was asked for); undefined if unreadable. */
export function parseErrorMeta(body: string | undefined): Meta | undefined {
  if (!body || !looksJson(body)) return undefined;
  try {
    const record = JSON.parse(body.replace(/^\uFEFF/, ""));
    if (record && typeof record === "object" && !Array.isArray(record)) return metaOf(record);
  } catch {
    // A cut-off or non-JSON error body: the caller falls back to the HTTP status.
  }
  return undefined;
}

/** Decodes a getDataCode or getDataLayer body in either format. */
export function parseDataBody(body: string): DataResponse {
  const clean = body.replace(/^\uFEFF/, "");
  checkNotHtml(clean);
  return looksJson(clean) ? dataFromJson(parseJsonBody(clean)) : dataFromCsv(clean);
}

/** Decodes a getMetadata body in either format. */
export function parseMetadataBody(body: string): MetadataResponse {
  const clean = body.replace(/^\uFEFF/, "");
  checkNotHtml(clean);
  return looksJson(clean) ? metadataFromJson(parseJsonBody(clean)) : metadataFromCsv(clean);
}

/** Whether a MESSAGEID names an error (`…E`) or a system failure (`…S`) rather than information (`…I`). */
export function isErrorMessageId(id: string): boolean {
  return /^M\d+[ES]$/.test(id.trim());
}

/** Whether an answer claims success: STATUS 200 with no error message id. */
export function isSuccess(meta: Meta): boolean {
  return meta.status === 200 && !isErrorMessageId(meta.message_id);
}

/**
 * The RESULTSET rows of a successful JSON answer: a list of objects. Anything else (missing, a
 * string, a list of numbers) is a DECODE_ERROR, never "no data".
 */
function resultRows(record: Record<string, unknown>, meta: Meta): Record<string, unknown>[] {
  const rows = record["RESULTSET"];
  if (!isSuccess(meta)) return [];
  if (!Array.isArray(rows)) {
    throw decodeError(
      "The BOJ API answer says STATUS 200 but has no RESULTSET list, so it is not an API result",
    );
  }
  const objects = rows.filter((r): r is Record<string, unknown> =>
    !!r && typeof r === "object" && !Array.isArray(r)
  );
  if (rows.length > 0 && objects.length === 0) {
    throw decodeError("The BOJ API answer's RESULTSET holds no records, so it is not an API result");
  }
  return objects;
}

function dataFromJson(record: Record<string, unknown>): DataResponse {
  const meta = metaOf(record);
  const parameter: Record<string, string> = {};
  const echo = record["PARAMETER"];
  if (echo && typeof echo === "object" && !Array.isArray(echo)) {
    for (const [k, v] of Object.entries(echo)) parameter[parameterKey(k)] = text(v) ?? "";
  }
  const rows = resultRows(record, meta);
  const series: Series[] = [];
  for (const r of rows) {
    if (text(r["SERIES_CODE"]) === undefined) continue;
    const values = (r["VALUES"] && typeof r["VALUES"] === "object" ? r["VALUES"] : {}) as Record<
      string,
      unknown
    >;
    const dates = Array.isArray(values["SURVEY_DATES"]) ? values["SURVEY_DATES"] : [];
    const obs = Array.isArray(values["VALUES"]) ? values["VALUES"] : [];
    const fields = seriesFields((k) => r[k]);
    series.push({
      series_code: text(r["SERIES_CODE"]) ?? "",
      ...fields,
      points: dates.map((d, i) => {
        const raw = text(d) ?? "";
        const frequency = fields.frequency || parameter["frequency"];
        return { survey_date: raw, period: periodLabel(raw, frequency), value: observation(obs[i]) };
      }),
    });
  }
  if (rows.length > 0 && series.length === 0) {
    throw decodeError("The BOJ API answer's RESULTSET holds no series codes, so it is not an API result");
  }
  return { meta, parameter, next_position: int(record["NEXTPOSITION"]), series };
}

interface CsvHeader {
  fields: Record<string, string>;
  parameter: Record<string, string>;
  /** The table's column names, or empty when the body has no table. */
  columns: string[];
  rows: string[][];
}

function splitCsv(body: string): CsvHeader {
  const all = parseCsv(body);
  const fields: Record<string, string> = {};
  const parameter: Record<string, string> = {};
  let i = 0;
  for (; i < all.length; i++) {
    const row = all[i]!;
    const key = (row[0] ?? "").trim().toUpperCase();
    if (key === "SERIES_CODE") break;
    if (key === "PARAMETER") {
      parameter[parameterKey(row[1] ?? "")] = row[2] ?? "";
    } else {
      fields[key] = row[1] ?? "";
    }
  }
  if (i >= all.length) return { fields, parameter, columns: [], rows: [] };
  return {
    fields,
    parameter,
    columns: all[i]!.map((c) => c.trim().toUpperCase()),
    rows: all.slice(i + 1),
  };
}

function csvMeta(fields: Record<string, string>): Meta {
  if (fields["STATUS"] === undefined) {
    throw decodeError("The BOJ API sent CSV without a STATUS line, so it is not an API result");
  }
  return metaOf(fields);
}

function dataFromCsv(body: string): DataResponse {
  const { fields, parameter, columns, rows } = splitCsv(body);
  const meta = csvMeta(fields);
  // A successful CSV answer without a table is only "no data" when BOJ says so (M181030I).
  if (isSuccess(meta) && columns.length === 0 && meta.message_id !== "M181030I") {
    throw decodeError(
      "The BOJ API sent CSV that says STATUS 200 but has no table, so it is not an API result",
    );
  }
  const at = (name: string) => columns.indexOf(name);
  const codeAt = at("SERIES_CODE");
  const dateAt = at("SURVEY_DATES");
  const valueAt = at("VALUES");
  const bySeries = new Map<string, Series>();
  for (const row of rows) {
    const code = row[codeAt] ?? "";
    let series = bySeries.get(code);
    if (!series) {
      series = {
        series_code: code,
        ...seriesFields((k) => {
          const idx = at(k);
          return idx < 0 ? undefined : row[idx];
        }),
        points: [],
      };
      bySeries.set(code, series);
    }
    if (dateAt >= 0 && (row[dateAt] ?? "") !== "") {
      series.points.push({
        survey_date: row[dateAt]!,
        // A series without FREQUENCY (trimmed answers) takes the layer request's echo.
        period: periodLabel(row[dateAt]!, series.frequency || parameter["frequency"]),
        value: observation(valueAt >= 0 ? row[valueAt] : null),
      });
    }
  }
  return { meta, parameter, next_position: int(fields["NEXTPOSITION"]), series: [...bySeries.values()] };
}

function metadataEntry(get: (key: string) => unknown): MetadataEntry {
  const entry: MetadataEntry = {
    series_code: text(get("SERIES_CODE")) ?? "",
    layer1: int(get("LAYER1")) ?? 0,
    layer2: int(get("LAYER2")) ?? 0,
    layer3: int(get("LAYER3")) ?? 0,
    layer4: int(get("LAYER4")) ?? 0,
    layer5: int(get("LAYER5")) ?? 0,
  };
  for (const key of METADATA_TEXT_FIELDS) {
    const v = text(get(key.toUpperCase()));
    if (v !== undefined && v !== "") entry[key] = v;
  }
  return entry;
}

function metadataFromJson(record: Record<string, unknown>): MetadataResponse {
  const meta = metaOf(record);
  const entries = resultRows(record, meta).map((r) => metadataEntry((k) => r[k]));
  return { meta, db: text(record["DB"]) ?? "", entries };
}

function metadataFromCsv(body: string): MetadataResponse {
  const { fields, columns, rows } = splitCsv(body);
  const meta = csvMeta(fields);
  if (isSuccess(meta) && columns.length === 0) {
    throw decodeError(
      "The BOJ API sent metadata CSV that says STATUS 200 but has no table, so it is not an API result",
    );
  }
  const entries = rows.map((row) =>
    metadataEntry((k) => {
      const idx = columns.indexOf(k);
      return idx < 0 ? undefined : row[idx];
    })
  );
  return { meta, db: fields["DB"] ?? "", entries };
}
