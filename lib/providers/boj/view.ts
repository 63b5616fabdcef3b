// What the series view (MCP Apps) draws from a boj_get_data_code or boj_get_data_layer result:
// every series of the answer as a line, and the call that continues it (continue_with).
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { SeriesModel, ViewSeries } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";
import type { DataOutput, SeriesOut } from "./schemas.ts";

/**
 * An ISO date for a BOJ survey date: YYYY, YYYYHH (half), YYYYQQ (quarter), YYYYMM or YYYYMMDD;
 * a period is dated by its first day.
 */
export function surveyDate(date: string, frequency: string | undefined): string | null {
  const f = (frequency ?? "").toUpperCase();
  if (/^\d{8}$/.test(date)) return `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6)}`;
  if (/^\d{4}$/.test(date)) return `${date}-01-01`;
  if (!/^\d{6}$/.test(date)) return null;
  const year = date.slice(0, 4);
  const n = Number(date.slice(4));
  if (f.includes("QUARTER")) {
    return n >= 1 && n <= 4 ? `${year}-${String(n * 3 - 2).padStart(2, "0")}-01` : null;
  }
  if (f.includes("SEMI") || f.includes("HALF")) {
    return n === 1 ? `${year}-01-01` : n === 2 ? `${year}-07-01` : null;
  }
  return n >= 1 && n <= 12 ? `${year}-${date.slice(4)}-01` : null;
}

function series(s: SeriesOut): ViewSeries {
  const points: [string, number | null][] = [];
  for (const p of s.points) {
    const date = surveyDate(p.survey_date, s.frequency);
    if (date) points.push([date, numberOrNull(typeof p.value === "string" ? Number(p.value) : p.value)]);
  }
  return {
    id: s.series_code,
    name: s.name_of_time_series ?? s.name_of_time_series_j ?? s.series_code,
    units: s.unit ?? s.unit_j ?? null,
    frequency: s.frequency ?? null,
    points,
  };
}

/** Periods per year of a BOJ date with a sub-period (YYYYMM, YYYYQQ, YYYYHH) for a series' frequency. */
function periodsPerYear(frequency: string | undefined): number {
  const f = (frequency ?? "").toUpperCase();
  return f.includes("QUARTER") ? 4 : f.includes("SEMI") || f.includes("HALF") ? 2 : 12;
}

/**
 * The arguments that fetch the window of the same length just before `start_date` (5 years when
 * the call names no end), in the date format the call used; null before 1850 (BOJ's first year)
 * or when the call named no start.
 */
export function earlierWindow(
  args: Record<string, unknown>,
  frequency: string | undefined,
): Record<string, unknown> | null {
  const start = typeof args["start_date"] === "string" ? args["start_date"].trim() : "";
  const end = typeof args["end_date"] === "string" ? args["end_date"].trim() : "";
  if (!/^\d{4}(\d{2})?$/.test(start)) return null;
  const per = start.length === 4 ? 1 : periodsPerYear(frequency);
  const index = (d: string) => Number(d.slice(0, 4)) * per + (d.length === 6 ? Number(d.slice(4)) - 1 : 0);
  const format = (i: number) =>
    per === 1 ? String(i) : `${Math.floor(i / per)}${String((i % per) + 1).padStart(2, "0")}`;
  const first = index(start);
  const length = end.length === start.length && /^\d+$/.test(end)
    ? Math.max(1, index(end) - first + 1)
    : 5 * per;
  const from = Math.max(first - length, 1850 * per);
  if (from >= first) return null;
  return callWith(args, {
    start_date: format(from),
    end_date: format(first - 1),
    start_position: undefined,
    series_offset: undefined,
  });
}

/** The view of the two data tools. */
export const bojSeriesView: ToolView<DataOutput, Record<string, unknown>> = {
  id: "series",
  model(s, args) {
    if (!s.series) return undefined;
    const next = s.continue_with;
    return {
      view: "series",
      series: s.series.map(series),
      source: { name: "Bank of Japan, Time-Series Data Search", url: "https://www.stat-search.boj.or.jp/" },
      licence: s.source.credit_en,
      earlier: earlierWindow(args, s.series[0]?.frequency),
      next: next
        ? callWith(args, {
          series_offset: next.series_offset,
          start_position: next.start_position ?? undefined,
        })
        : null,
    } satisfies SeriesModel;
  },
};
