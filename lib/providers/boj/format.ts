// Shapes data and metadata answers into structured content and markdown that stay within the
// character limit: observations are cut oldest first (the latest value stays exact), then
// whole series or rows, and the raw body gets only what room is left.
import { fitToLimit, markdownTable, page, truncationNotice } from "../../mcp/output.ts";
import type { Rendered, ResponseFormat } from "../../mcp/output.ts";
import { CREDIT_EN, CREDIT_JA, TERMS_URL } from "./catalog.ts";
import type { DataResponse, MetadataEntry, MetadataResponse, Point, Series } from "./decode.ts";
import type { DataOutput, MetadataOutput } from "./schemas.ts";

type SourceOut = DataOutput["source"];
type SeriesOut = DataOutput["series"][number];
type EntryOut = MetadataOutput["entries"][number];

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

function sourceLines(source: SourceOut): string[] {
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

function quote(s: string): string {
  return `"${s}"`;
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
}

/** Builds a data tool's result within `limit` characters. */
export function renderData(o: DataRenderOptions): Rendered<DataOutput> {
  const all = o.response.series;
  const maxPoints = Math.max(0, ...all.map((s) => s.points.length));
  const latest = all.map((s) => latestPoint(s.points));
  const source = sourceInfo(o.url);

  const build = (n: number, k: number, raw?: { text: string; cut: boolean }): Rendered<DataOutput> => {
    const series: SeriesOut[] = all.slice(0, n).map((s, i) => seriesOut(s, latest[i]!, k));
    const notices = dataNotices(o, series, n, series.some((s) => s.points_truncated), raw?.cut ?? false);
    const structured: DataOutput = {
      meta: o.response.meta,
      parameter: o.response.parameter,
      next_position: o.response.next_position,
      series_total: all.length,
      series_count: series.length,
      series,
      truncated: n < all.length || series.some((s) => s.points_truncated) || (raw?.cut ?? false),
      notices,
      ...(raw ? { raw: raw.text, raw_truncated: raw.cut } : {}),
      source,
    };
    const text = o.responseFormat === "json" ? JSON.stringify(structured) : dataMarkdown(o, structured);
    return { text, structured };
  };
  const fits = (r: Rendered<DataOutput>): boolean =>
    r.text.length <= o.limit && JSON.stringify(r.structured).length <= o.limit;

  // Whole answer first; then fewer (older) points for every series; then fewer series.
  const empty = o.raw === undefined ? undefined : { text: "", cut: o.raw.length > 0 };
  let n = all.length;
  let k = maxPoints;
  if (!fits(build(n, k, empty))) {
    k = largest(1, maxPoints, (x) => fits(build(n, x, empty)));
    if (k < 1) {
      n = Math.max(0, largest(0, all.length, (x) => fits(build(x, Math.min(1, maxPoints), empty))));
      k = n === 0 ? 0 : Math.max(1, largest(1, maxPoints, (x) => fits(build(n, x, empty))));
    }
  }
  if (o.raw === undefined) return build(n, k);
  const raw = o.raw;
  const whole = build(n, k, { text: raw, cut: false });
  if (fits(whole)) return whole;
  const len = largest(0, raw.length, (x) => fits(build(n, k, { text: raw.slice(0, x), cut: true })));
  return build(n, k, { text: raw.slice(0, Math.max(0, len)), cut: true });
}

/** The largest x in [lo, hi] for which `ok` holds (monotone), or lo - 1 when none does. */
function largest(lo: number, hi: number, ok: (x: number) => boolean): number {
  let best = lo - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ok(mid)) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
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

function dataNotices(
  o: DataRenderOptions,
  shown: readonly SeriesOut[],
  n: number,
  pointsCut: boolean,
  rawCut: boolean,
): string[] {
  const notices: string[] = [];
  const r = o.response;
  if (r.next_position !== null) {
    notices.push(
      `BOJ returned only part of the answer (it sends at most 250 series and 60,000 data points per request). ` +
        `Call ${o.tool} again with the same arguments and start_position=${r.next_position} for the rest.`,
    );
  }
  if (r.meta.message_id === "M181030I" || (r.series.length === 0 && r.meta.status === 200)) {
    notices.push(
      "BOJ found no data for this request: the dates may lie outside the series' range, or every value is missing. " +
        "Check the range with boj_get_metadata (start/end of the time series) and adjust start_date/end_date.",
    );
  }
  if (pointsCut) {
    const k = Math.max(0, ...shown.map((s) => s.points.length));
    notices.push(
      `To stay within the ${o.limit.toLocaleString("en-US")}-character limit only the most recent ${k} ` +
        `observations of each series are shown (points_total has the full count; latest is exact). ` +
        `Narrow start_date/end_date${
          o.tool === "boj_get_data_code" ? " or ask for fewer codes" : ""
        } to see the others.`,
    );
  }
  if (n < r.series.length) {
    const left = r.series.slice(n).map((s) => s.series_code);
    const listed = left.slice(0, 20).map(quote).join(", ") + (left.length > 20 ? ", …" : "");
    notices.push(
      truncationNotice(n, r.series.length, { limit: o.limit }).replace("items", "series") + " " +
        (o.tool === "boj_get_data_code"
          ? `Call again with codes ${listed} (and a narrower date range).`
          : `The series left out are ${listed}: fetch them with boj_get_data_code, or narrow the layers or dates.`),
    );
  }
  if (rawCut) {
    notices.push(
      "raw was cut to fit the size limit; the structured fields hold the decoded data. Call without include_raw, or narrow the request, to see more.",
    );
  }
  return notices;
}

function nameOf(
  f: { name_of_time_series?: string | undefined; name_of_time_series_j?: string | undefined },
  lang?: string,
): string {
  return (lang === "EN"
    ? f.name_of_time_series ?? f.name_of_time_series_j
    : f.name_of_time_series_j ?? f.name_of_time_series) ?? "";
}

function pick(en: string | undefined, ja: string | undefined, lang?: string): string | undefined {
  return lang === "EN" ? en ?? ja : ja ?? en;
}

function dataMarkdown(o: DataRenderOptions, d: DataOutput): string {
  const endpoint = o.tool === "boj_get_data_code" ? "getDataCode" : "getDataLayer";
  const db = d.parameter["db"] || "";
  const params = Object.entries(d.parameter).filter(([, v]) => v !== "").map(([k, v]) => `${k}=${v}`);
  const lines = [
    `# BOJ ${endpoint}${db ? ` ${db}` : ""}: ${d.series_count} of ${d.series_total} series`,
    "",
    `Status ${d.meta.status} ${d.meta.message_id} "${d.meta.message}"${
      d.meta.date ? ` · data as of ${d.meta.date}` : ""
    }`,
  ];
  if (params.length) lines.push(`Parameters: ${params.join(", ")}`);
  lines.push(
    d.next_position === null
      ? "Next position: none (complete)"
      : `Next position: ${d.next_position} (call again with start_position=${d.next_position})`,
  );
  for (const s of d.series) {
    const name = nameOf(s, o.lang);
    lines.push("", `## ${s.series_code}${name ? `: ${name}` : ""}`, "");
    const facts = [
      ["Unit", pick(s.unit, s.unit_j, o.lang)],
      ["Frequency", s.frequency],
      ["Category", pick(s.category, s.category_j, o.lang)],
      ["Last update", s.last_update],
    ].filter(([, v]) => v).map(([k, v]) => `${k}: ${v}`);
    if (facts.length) lines.push(`- ${facts.join(" · ")}`);
    const missing = s.points.filter((p) => p.value === null).length;
    lines.push(
      `- Latest: ${
        s.latest ? `${s.latest.survey_date} = ${s.latest.value}` : "no value"
      } · ${s.points_total} observations` +
        (s.points_truncated ? ` (most recent ${s.points.length} shown)` : "") +
        (missing ? ` · ${missing} missing shown as —` : ""),
    );
    if (s.points.length) {
      lines.push("", markdownTable(["Period", "Value"], s.points.map((p) => [p.survey_date, show(p.value)])));
    }
  }
  if (d.notices.length) lines.push("", ...d.notices.map((n) => `> ${n}`));
  if (d.raw !== undefined) {
    lines.push("", `## Raw body${d.raw_truncated ? " (cut)" : ""}`, "", "```", d.raw, "```");
  }
  lines.push("", ...sourceLines(d.source));
  return lines.join("\n");
}

/** The `layer` argument a metadata row corresponds to ("1,2"; trailing zero levels dropped). */
export function layerPath(
  e: Pick<MetadataEntry, "layer1" | "layer2" | "layer3" | "layer4" | "layer5">,
): string {
  const levels = [e.layer1, e.layer2, e.layer3, e.layer4, e.layer5];
  while (levels.length > 1 && levels[levels.length - 1] === 0) levels.pop();
  return levels.join(",");
}

function fold(s: string): string {
  return s.normalize("NFKC").toLowerCase();
}

/** Whether every word of `query` occurs in the row's code, names, unit, category or notes. */
export function matchesQuery(e: MetadataEntry, query: string): boolean {
  const terms = fold(query).split(/\s+/).filter(Boolean);
  if (terms.length === 0) return true;
  const hay = fold(
    [
      e.series_code,
      e.name_of_time_series,
      e.name_of_time_series_j,
      e.unit,
      e.unit_j,
      e.category,
      e.category_j,
      e.frequency,
      e.notes,
      e.notes_j,
    ].filter(Boolean).join("\n"),
  );
  return terms.every((t) => hay.includes(t));
}

/** Options for {@linkcode renderMetadata}. */
export interface MetadataRenderOptions {
  response: MetadataResponse;
  url: string;
  raw?: string;
  query?: string;
  offset: number;
  limit: number;
  responseFormat: ResponseFormat;
  characterLimit: number;
  lang?: "JP" | "EN";
}

/** Builds boj_get_metadata's result: filter, page, then fit within the character limit. */
export function renderMetadata(o: MetadataRenderOptions): Rendered<MetadataOutput> {
  const matching = o.query ? o.response.entries.filter((e) => matchesQuery(e, o.query!)) : o.response.entries;
  const slice = matching.slice(o.offset, o.offset + o.limit).map((e): EntryOut => ({
    ...e,
    layer: layerPath(e),
  }));
  const source = sourceInfo(o.url);

  const build = (entries: EntryOut[], cut: boolean, raw?: { text: string; cut: boolean }) => {
    const env = page(matching.length, o.offset, entries.length);
    const notices: string[] = [];
    if (cut) {
      notices.push(
        truncationNotice(entries.length, slice.length, {
          limit: o.characterLimit,
          nextOffset: env.next_offset,
        })
          .replace("items", "rows"),
      );
    } else if (env.has_more) {
      notices.push(
        `${
          matching.length - o.offset - entries.length
        } more rows match: call again with offset=${env.next_offset}.`,
      );
    }
    if (matching.length === 0) {
      notices.push(
        o.query
          ? `No row of ${
            o.response.db || "this database"
          } matches "${o.query}": try fewer or other words (English or Japanese), or no query to browse.`
          : "BOJ returned no rows for this database.",
      );
    } else if (o.offset >= matching.length) {
      notices.push(`offset ${o.offset} is past the last of ${matching.length} rows: use a smaller offset.`);
    }
    if (raw?.cut) {
      notices.push("raw was cut to fit the size limit; call without include_raw to see more rows.");
    }
    const structured: MetadataOutput = {
      meta: o.response.meta,
      db: o.response.db,
      entries_in_db: o.response.entries.length,
      query: o.query ?? null,
      ...env,
      entries_count: entries.length,
      entries,
      truncated: cut || (raw?.cut ?? false),
      notices,
      ...(raw ? { raw: raw.text, raw_truncated: raw.cut } : {}),
      source,
    };
    const text = o.responseFormat === "json"
      ? JSON.stringify(structured)
      : metadataMarkdown(structured, o.lang);
    return { text, structured };
  };

  const empty = o.raw === undefined ? undefined : { text: "", cut: o.raw.length > 0 };
  const fitted = fitToLimit(slice, o.characterLimit, (f) => build(f.items, f.truncated, empty));
  if (o.raw === undefined) return { text: fitted.text, structured: fitted.structured };
  const fits = (r: Rendered<MetadataOutput>) =>
    r.text.length <= o.characterLimit && JSON.stringify(r.structured).length <= o.characterLimit;
  const raw = o.raw;
  const whole = build(fitted.items, fitted.truncated, { text: raw, cut: false });
  if (fits(whole)) return whole;
  const len = largest(
    0,
    raw.length,
    (x) => fits(build(fitted.items, fitted.truncated, { text: raw.slice(0, x), cut: true })),
  );
  return build(fitted.items, fitted.truncated, { text: raw.slice(0, Math.max(0, len)), cut: true });
}

function metadataMarkdown(m: MetadataOutput, lang?: string): string {
  const lines = [
    `# BOJ metadata ${m.db}: rows ${
      m.count ? `${m.offset + 1}–${m.offset + m.count}` : "none"
    } of ${m.total}` +
    (m.query ? ` matching "${m.query}"` : "") + ` (${m.entries_in_db} in the database)`,
    "",
    `Status ${m.meta.status} ${m.meta.message_id} "${m.meta.message}"${
      m.meta.date ? ` · as of ${m.meta.date}` : ""
    }`,
    "Rows without a code are headings. Fetch series with boj_get_data_code (db + codes of one frequency) " +
    "or boj_get_data_layer (db + frequency + the Layer column split at commas).",
  ];
  if (m.entries.length) {
    lines.push(
      "",
      markdownTable(
        ["Code", "Name", "Unit", "Frequency", "Layer", "From", "To", "Updated"],
        m.entries.map((e) => [
          e.series_code || "(heading)",
          nameOf(e, lang),
          pick(e.unit, e.unit_j, lang) ?? "",
          e.frequency ?? "",
          e.layer,
          e.start_of_the_time_series ?? "",
          e.end_of_the_time_series ?? "",
          e.last_update ?? "",
        ]),
      ),
    );
  }
  if (m.notices.length) lines.push("", ...m.notices.map((n) => `> ${n}`));
  if (m.raw !== undefined) {
    lines.push("", `## Raw body${m.raw_truncated ? " (cut)" : ""}`, "", "```", m.raw, "```");
  }
  lines.push("", ...sourceLines(m.source));
  return lines.join("\n");
}
