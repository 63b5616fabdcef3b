// A data tool's answer: one page of observations cut to the limit, or with output "file" every
// page (following NEXTPOSITION) written to a file.
import { cite } from "../../output/provenance.ts";
import { ToolError } from "../../errors.ts";
import type { NextCall, ToolCallContext } from "../../mcp/provider.ts";
import type { Fetched } from "./client.ts";
import type { DataResponse } from "./decode.ts";
import type { DataOutput } from "./schemas.ts";
import { renderDataFile, writeDataFile } from "./files.ts";
import { renderData } from "./format.ts";
import type { ToolDeps } from "./_common.ts";

/** A series_offset at or past the end of BOJ's answer names nothing: say so, naming the field. */
function checkSeriesOffset(offset: number, total: number): void {
  if (offset > 0 && offset >= total) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `series_offset ${offset} is past the last of the ${total} series in BOJ's answer`,
      {
        field: "series_offset",
        hint:
          "Use next_series_offset (or continue_with) from the previous result with the same other arguments",
      },
    );
  }
}

/**
 * The as-of of a data answer for its provenance: the latest LAST_UPDATE of its series (BOJ's own
 * update date, YYYYMMDD), and the answer's DATE.
 */
function citeData(data: DataResponse): void {
  const updates = data.series.map((s) => s.last_update ?? "").filter((d) => /^\d{8}$/.test(d)).sort();
  const last = updates.at(-1);
  const parts = [
    last ? `series last updated ${last.slice(0, 4)}-${last.slice(4, 6)}-${last.slice(6)}` : "",
    data.meta.date ? `answer dated ${data.meta.date}` : "",
  ].filter(Boolean);
  if (parts.length) cite({ as_of: parts.join("; ") });
}

/**
 * A data tool's answer: one page cut to the size limit, or with output "file" every page
 * (following NEXTPOSITION) written to a CSV resource.
 */
export async function deliverData(
  deps: ToolDeps,
  tool: "boj_get_data_code" | "boj_get_data_layer",
  args: {
    start_position?: number | undefined;
    series_offset: number;
    include_raw: boolean;
    response_format: "markdown" | "json";
    output: "screen" | "file";
  },
  fetch: (startPosition: number | undefined) => Promise<Fetched<DataResponse>>,
  naming: { name: string; what: string },
  lang: "JP" | "EN" | undefined,
  ctx: ToolCallContext,
) {
  const fetched = await fetch(args.start_position);
  citeData(fetched.data);
  if (args.output === "file") {
    const written = await writeDataFile({
      files: ctx.files,
      name: naming.name,
      what: naming.what,
      first: fetched,
      startPosition: args.start_position ?? 1,
      maxRequests: deps.settings.file_max_requests,
      fetchFrom: fetch,
      ...(lang ? { lang } : {}),
      clock: deps.clock,
      signal: ctx.signal,
    });
    const rendered = renderDataFile({
      tool,
      written,
      first: fetched,
      responseFormat: args.response_format,
    });
    return { ...rendered, content: [written.file.link] };
  }
  checkSeriesOffset(args.series_offset, fetched.data.series.length);
  const rendered = renderData({
    tool,
    response: fetched.data,
    url: fetched.url,
    seriesOffset: args.series_offset,
    ...(args.start_position === undefined ? {} : { startPosition: args.start_position }),
    ...(args.include_raw ? { raw: fetched.raw } : {}),
    responseFormat: args.response_format,
    limit: ctx.limits.characterLimit,
    ...(lang ? { lang } : {}),
  });
  const next = dataNextCalls(tool, args, rendered.structured);
  return next.length ? { ...rendered, next } : rendered;
}

/** Values the data tools' schemas fill in when an argument is left out. */
const DEFAULTS: Readonly<Record<string, unknown>> = {
  include_raw: false,
  response_format: "markdown",
  output: "screen",
};

/** Arguments of a call without the named ones (so a continuation never carries a stale position). */
function without(args: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== undefined && !names.includes(k)));
}

/**
 * The calls a data answer names: the next page (continue_with) as a ready call, and, when a
 * series had no value in the dates asked for, the same call over the series' whole history (its
 * latest values come last, so a cut answer still shows them).
 */
export function dataNextCalls(
  tool: string,
  args: Record<string, unknown>,
  d: DataOutput,
): NextCall[] {
  const calls: NextCall[] = [];
  // Arguments left at their defaults are left out: the call reads the same and costs fewer tokens.
  const base = Object.fromEntries(
    Object.entries(without(args, "start_position", "series_offset")).filter(([k, v]) => DEFAULTS[k] !== v),
  );
  if (d.continue_with) {
    calls.push({
      tool,
      arguments: {
        ...base,
        ...(d.continue_with.start_position === null
          ? {}
          : { start_position: d.continue_with.start_position }),
        ...(d.continue_with.series_offset ? { series_offset: d.continue_with.series_offset } : {}),
      },
      for: "the next page",
    });
  }
  const dated = args["start_date"] !== undefined || args["end_date"] !== undefined;
  if (dated && (d.series ?? []).some((s) => s.points_total === 0)) {
    calls.push({
      tool,
      arguments: without(base, "start_date", "end_date"),
      for: "every date: the dates asked for hold no value",
    });
  }
  return calls;
}
