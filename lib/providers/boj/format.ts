// Shapes data answers into structured content and markdown that stay within the
// character limit: observations are cut oldest first (the latest value stays exact) down to a
// floor, then whole series or rows, which the next call reaches (series_offset, offset); fields
// BOJ sends are clipped, and an include_raw excerpt keeps up to 30% of the limit.
import { clip } from "../../html.ts";
import { largestWhere, markdownTable } from "../../mcp/shaping.ts";
import type { Rendered, ResponseFormat } from "../../mcp/shaping.ts";
import { CREDIT_EN, CREDIT_JA, TERMS_URL } from "./catalog.ts";
import { SERIES_FIELDS } from "./decode.ts";
import type { DataResponse, Meta, MetadataEntry, Point, Series } from "./decode.ts";
import type { DataOutput, SeriesOut, SourceOut } from "./schemas.ts";

/** Where a result came from, with the credit the BOJ asks for. */
export function sourceInfo(url: string): SourceOut {
  return {
    name: "Bank of Japan Time-Series Data Search (stat-search.boj.or.jp)",
    url,
    terms_url: TERMS_URL,
    credit_ja: CREDIT_JA,
    credit_en: CREDIT_EN,
  };
}

/** The source and credit lines that end every markdown result. */
export function sourceLines(source: SourceOut): string[] {
  return [
    `Source: ${source.name}, ${source.url}`,
    `Credit: ${source.credit_en} / ${source.credit_ja} Terms: ${source.terms_url}`,
  ];
}

/** The most recent observation that has a value. */
export function latestPoint(points: readonly Point[]): Point | null {
  for (let i = points.length - 1; i >= 0; i--) {
    const p = points[i]!;
    if (p.value !== null) return p;
  }
  return null;
}

function show(value: Point["value"]): string {
  return value === null ? "—" : String(value);
}

/** Options for {@linkcode renderData}. */
export interface DataRenderOptions {
  tool: "boj_get_data_code" | "boj_get_data_layer";
  response: DataResponse;
  url: string;
  raw?: string;
  responseFormat: ResponseFormat;
  limit: number;
  lang?: "JP" | "EN";
  /** Series of BOJ's answer already delivered (the `series_offset` argument). */
  seriesOffset?: number;
  /** The `start_position` argument of this call, repeated in the continuation. */
  startPosition?: number;
}

/**
 * Observations every shown series keeps before whole series are left for the next call: below
 * this a result would say little about each series, while paging by series loses nothing.
 */
export const MIN_POINTS = 12;

/** The share of the limit an `include_raw` excerpt may take before the data is cut for it. */
export const RAW_SHARE = 0.3;

/**
 * Builds a data tool's result within `limit` characters (text and structured content alike).
 * Order of cuts: older observations (down to {@linkcode MIN_POINTS} per series), then whole
 * series, which the next call reaches with `series_offset`; upstream fields are clipped so no
 * field alone can break the limit; `raw` keeps an excerpt of up to 30% of the limit.
 */
export function renderData(o: DataRenderOptions): Rendered<DataOutput> {
  const offset = o.seriesOffset ?? 0;
  const clipped = new Set<string>();
  const cap = fieldMax(o.limit);
  const meta = boundMeta(o.response.meta, clipped);
  const parameter = boundParameter(o.response.parameter, clipped);
  const rest = o.response.series.slice(offset).map((s) => boundSeries(s, cap, clipped));
  const latest = rest.map((s) => latestPoint(s.points));
  const maxPoints = Math.max(0, ...rest.map((s) => s.points.length));
  const source = sourceInfo(o.url);
  const total = o.response.series.length;

  const build = (n: number, k: number, raw?: { text: string; cut: boolean }): Rendered<DataOutput> => {
    const series: SeriesOut[] = rest.slice(0, n).map((s, i) => seriesOut(s, latest[i]!, k));
    const shownEnd = offset + series.length;
    const seriesCut = shownEnd < total;
    const pointsCut = series.some((s) => s.points_truncated);
    const continueWith = seriesCut
      ? { start_position: o.startPosition ?? null, series_offset: shownEnd }
      : o.response.next_position !== null
      ? { start_position: o.response.next_position, series_offset: 0 }
      : null;
    const structured: DataOutput = {
      meta,
      parameter,
      next_position: o.response.next_position,
      series_total: total,
      series_offset: offset,
      series_count: series.length,
      next_series_offset: seriesCut ? shownEnd : null,
      continue_with: continueWith,
      series,
      truncated: seriesCut || pointsCut || (raw?.cut ?? false) || clipped.size > 0,
      notices: dataNotices(o, series, {
        offset,
        seriesCut,
        pointsCut,
        rawShown: raw?.cut ? raw.text.length : null,
        clipped,
      }),
      ...(raw ? { raw: raw.text, raw_truncated: raw.cut } : {}),
      source,
    };
    const text = o.responseFormat === "json" ? JSON.stringify(structured) : dataMarkdown(o, structured);
    return { text, structured };
  };
  const fits = (r: Rendered<DataOutput>): boolean =>
    r.text.length <= o.limit && JSON.stringify(r.structured).length <= o.limit;

  const raw = o.raw;
  const reserve = raw === undefined ? undefined : excerpt(raw, Math.floor(o.limit * RAW_SHARE));
  const floorK = Math.min(MIN_POINTS, maxPoints);
  let n = rest.length;
  let k = maxPoints;
  if (!fits(build(n, k, reserve))) {
    const kAll = largestWhere(floorK, maxPoints, (x) => fits(build(n, x, reserve)));
    if (kAll >= floorK) {
      k = kAll;
    } else {
      // At least one series per call, so continuing with series_offset always moves on.
      n = Math.max(
        Math.min(1, rest.length),
        largestWhere(1, rest.length, (x) => fits(build(x, floorK, reserve))),
      );
      const kn = largestWhere(floorK, maxPoints, (x) => fits(build(n, x, reserve)));
      k = kn >= floorK ? kn : Math.max(0, largestWhere(0, floorK, (x) => fits(build(n, x, reserve))));
    }
  }
  if (raw === undefined) return build(n, k);
  const ok = (x: number) => fits(build(n, k, excerpt(raw, x)));
  const len = ok(raw.length) ? raw.length : Math.max(0, largestWhere(0, raw.length, ok));
  return build(n, k, excerpt(raw, len));
}

/** The first `max` characters of `raw` (never half a surrogate pair), and whether that is all. */
export function excerpt(raw: string, max: number): { text: string; cut: boolean } {
  if (max >= raw.length) return { text: raw, cut: false };
  let end = Math.max(0, max);
  const code = raw.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: raw.slice(0, end), cut: true };
}

// ---------------------------------------------------------------------------------------------
// Bounds on what BOJ sends: every field is short in a real answer, so anything longer is
// clipped (and reported), and no upstream field alone can push a result past the limit.

/** Most characters kept of a name, unit, category or note: in proportion to the limit. */
export function fieldMax(limit: number): number {
  return Math.max(40, Math.min(1000, Math.floor(limit / 25)));
}

const PARAMETER_KEYS_MAX = 20;

const PARAMETER_KEY_MAX = 64;

const PARAMETER_VALUE_MAX = 200;

const MESSAGE_MAX = 500;

/** Most characters of a short field (a code, a unit, the DB name). */
export const SHORT_MAX = 64;

/** `value`, clipped to `max` with `what` noted in `clipped` when it was longer. */
export function bounded(value: string, max: number, what: string, clipped: Set<string>): string {
  if (value.length <= max) return value;
  clipped.add(what);
  return clip(value, max);
}

/** BOJ's header with over-long fields clipped (named in `clipped`). */
export function boundMeta(meta: Meta, clipped: Set<string>): Meta {
  return {
    status: meta.status,
    message_id: bounded(meta.message_id, SHORT_MAX, "MESSAGEID", clipped),
    message: bounded(meta.message, MESSAGE_MAX, "MESSAGE", clipped),
    date: meta.date === null ? null : bounded(meta.date, SHORT_MAX, "DATE", clipped),
  };
}

/** BOJ's parameter echo, bounded in keys and lengths (named in `clipped`). */
export function boundParameter(
  parameter: Record<string, string>,
  clipped: Set<string>,
): Record<string, string> {
  const entries = Object.entries(parameter);
  if (entries.length > PARAMETER_KEYS_MAX) clipped.add("PARAMETER");
  return Object.fromEntries(
    entries.slice(0, PARAMETER_KEYS_MAX).map(([k, v]) => [
      bounded(k, PARAMETER_KEY_MAX, "PARAMETER", clipped),
      bounded(v, PARAMETER_VALUE_MAX, "PARAMETER", clipped),
    ]),
  );
}

function boundFields<T extends object>(
  fields: T,
  keys: readonly string[],
  cap: number,
  clipped: Set<string>,
): T {
  const out = { ...fields } as Record<string, unknown>;
  for (const key of keys) {
    const v = out[key];
    if (typeof v === "string") {
      out[key] = bounded(v, key === "last_update" ? SHORT_MAX : cap, key.toUpperCase(), clipped);
    }
  }
  return out as T;
}

function boundSeries(s: Series, cap: number, clipped: Set<string>): Series {
  return {
    ...boundFields(s, SERIES_FIELDS, cap, clipped),
    series_code: bounded(s.series_code, SHORT_MAX, "SERIES_CODE", clipped),
    points: s.points.map((p) => ({
      survey_date: bounded(p.survey_date, SHORT_MAX, "SURVEY_DATES", clipped),
      period: bounded(p.period, SHORT_MAX, "SURVEY_DATES", clipped),
      value: typeof p.value === "string" ? bounded(p.value, SHORT_MAX, "VALUES", clipped) : p.value,
    })),
  };
}

/** A metadata row with its texts clipped to `cap` (notes to twice that). */
export function boundEntry(e: MetadataEntry, cap: number, clipped: Set<string>): MetadataEntry {
  const out = boundFields(
    e,
    [...SERIES_FIELDS, "start_of_the_time_series", "end_of_the_time_series"],
    cap,
    clipped,
  );
  out.series_code = bounded(e.series_code, SHORT_MAX, "SERIES_CODE", clipped);
  if (e.notes !== undefined) out.notes = bounded(e.notes, 2 * cap, "NOTES", clipped);
  if (e.notes_j !== undefined) out.notes_j = bounded(e.notes_j, 2 * cap, "NOTES_J", clipped);
  return out;
}

/** The notice for fields that were clipped, or null. */
export function clippedNotice(clipped: ReadonlySet<string>): string | null {
  if (clipped.size === 0) return null;
  return `BOJ sent fields far longer than any real value (${
    [...clipped].join(", ")
  }); they were shortened (marked …) so the result stays within the size limit. Call with include_raw to see the body as sent.`;
}

function seriesOut(s: Series, latest: Point | null, k: number): SeriesOut {
  const { points, series_code, ...fields } = s;
  const shown = k >= points.length ? points : points.slice(points.length - k);
  return {
    series_code,
    ...fields,
    points_total: points.length,
    points_truncated: shown.length < points.length,
    latest,
    points: shown,
  };
}

interface CutState {
  offset: number;
  seriesCut: boolean;
  pointsCut: boolean;
  /** Characters of the body in `raw` when it was cut, else null. */
  rawShown: number | null;
  clipped: ReadonlySet<string>;
}

function dataNotices(o: DataRenderOptions, shown: readonly SeriesOut[], cut: CutState): string[] {
  const notices: string[] = [];
  const r = o.response;
  const total = r.series.length;
  const end = cut.offset + shown.length;
  const limit = o.limit.toLocaleString("en-US");
  const same = o.startPosition === undefined
    ? "the same arguments"
    : `the same arguments (start_position=${o.startPosition})`;
  if (cut.seriesCut) {
    notices.push(
      `Showing series ${
        cut.offset + 1
      }–${end} of the ${total} in BOJ's answer to stay within the ${limit}-character ` +
        `limit. Call ${o.tool} again with ${same} and series_offset=${end} for the next series` +
        (r.next_position === null
          ? "."
          : `; after the last of them, continue with start_position=${r.next_position} (BOJ's next_position).`),
    );
  } else if (r.next_position !== null) {
    notices.push(
      `BOJ returned only part of the answer (it sends at most 250 series and 60,000 data points per request). ` +
        `Call ${o.tool} again with the same arguments and start_position=${r.next_position}` +
        `${cut.offset > 0 ? " (and no series_offset)" : ""} for the rest.`,
    );
  }
  if (r.meta.message_id === "M181030I" || (total === 0 && r.meta.status === 200)) {
    notices.push(
      "BOJ found no data for this request: the dates may lie outside the series' range, or every value is missing. " +
        "Check the range with boj_get_metadata (start/end of the time series) and adjust start_date/end_date.",
    );
  }
  if (cut.pointsCut) {
    const k = Math.max(0, ...shown.map((s) => s.points.length));
    notices.push(
      `To stay within the ${limit}-character limit only the most recent ${k} ` +
        `observations of each series are shown (points_total has the full count; latest is exact). ` +
        `Call again with output "file" for every observation in a CSV resource, or narrow ` +
        `start_date/end_date${
          o.tool === "boj_get_data_code" ? " or ask for fewer codes" : ""
        } to see the others.`,
    );
  }
  if (cut.rawShown !== null && o.raw !== undefined) {
    notices.push(
      `raw holds the first ${cut.rawShown.toLocaleString("en-US")} of the ${
        o.raw.length.toLocaleString("en-US")
      } characters of the body, to stay within the size limit; the structured fields hold the decoded data. ` +
        `Narrow the request (fewer codes or layers, a shorter date range) to see more of it.`,
    );
  }
  const fieldsNotice = clippedNotice(cut.clipped);
  if (fieldsNotice) notices.push(fieldsNotice);
  return notices;
}

/** A series' name in English when `lang` is EN, else in Japanese; the other when that one is missing. */
export function nameOf(
  f: { name_of_time_series?: string | undefined; name_of_time_series_j?: string | undefined },
  lang?: string,
): string {
  return (lang === "EN"
    ? f.name_of_time_series ?? f.name_of_time_series_j
    : f.name_of_time_series_j ?? f.name_of_time_series) ?? "";
}

/** The English text when `lang` is EN, else the Japanese; the other when that one is missing. */
export function pick(en: string | undefined, ja: string | undefined, lang?: string): string | undefined {
  return lang === "EN" ? en ?? ja : ja ?? en;
}

function dataMarkdown(o: DataRenderOptions, d: DataOutput): string {
  const endpoint = o.tool === "boj_get_data_code" ? "getDataCode" : "getDataLayer";
  const db = d.parameter["db"] || "";
  const params = Object.entries(d.parameter).filter(([, v]) => v !== "").map(([k, v]) => `${k}=${v}`);
  const range = d.series_count === 0
    ? `no series of ${d.series_total}`
    : `series ${d.series_offset + 1}–${d.series_offset + d.series_count} of ${d.series_total}`;
  const lines = [
    `# BOJ ${endpoint}${db ? ` ${db}` : ""}: ${range}`,
    "",
    `Status ${d.meta.status} ${d.meta.message_id} "${d.meta.message}"${
      d.meta.date ? ` · data as of ${d.meta.date}` : ""
    }`,
  ];
  if (params.length) lines.push(`Parameters: ${params.join(", ")}`);
  lines.push(
    d.continue_with === null
      ? "Complete: nothing more to fetch."
      : `Continue with: ${
        d.continue_with.start_position === null ? "" : `start_position=${d.continue_with.start_position}, `
      }series_offset=${d.continue_with.series_offset} (BOJ next_position: ${d.next_position ?? "none"})`,
  );
  // One row per series; observations inline, or as their own table when one series is shown.
  const shown = d.series ?? [];
  const single = shown.length === 1;
  if (shown.length) {
    lines.push(
      "",
      markdownTable(
        ["Code", "Name", "Unit", "Frequency", "Updated", "Latest", "Obs.", "Observations (oldest first)"],
        shown.map((s) => {
          const missing = s.points.filter((p) => p.value === null).length;
          const count = `${s.points_total}${s.points_truncated ? ` (last ${s.points.length})` : ""}${
            missing ? `, ${missing} missing` : ""
          }`;
          return [
            s.series_code,
            nameOf(s, o.lang),
            pick(s.unit, s.unit_j, o.lang) ?? "",
            s.frequency ?? "",
            s.last_update ?? "",
            s.latest ? `${s.latest.period} = ${s.latest.value}` : "no value",
            count,
            single ? "(below)" : s.points.map((p) => `${p.period} ${show(p.value)}`).join("; "),
          ];
        }),
      ),
    );
  }
  if (single && shown[0]!.points.length) {
    const s = shown[0]!;
    lines.push(
      "",
      markdownTable(
        ["Period", "BOJ date", "Value"],
        s.points.map((p) => [p.period, p.survey_date, show(p.value)]),
      ),
    );
  }
  if (d.notices.length) lines.push("", ...d.notices.map((n) => `> ${n}`));
  if (d.raw !== undefined) {
    lines.push("", `## Raw body${d.raw_truncated ? " (excerpt)" : ""}`, "", "```", d.raw, "```");
  }
  lines.push("", ...sourceLines(d.source));
  return lines.join("\n");
}
