// A data tool's answer: one page of observations cut to the limit, or with output "file" every
// page (following NEXTPOSITION) written to a file.
import { cite } from "../../output/provenance.ts";
import { ToolError } from "../../errors.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import type { Fetched } from "./client.ts";
import type { DataResponse } from "./decode.ts";
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
  return renderData({
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
}
