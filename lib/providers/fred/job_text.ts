// How the job tools show a job: its markdown, the links to its file, and its progress forwarded
// as notifications while a caller waits.
import type { ContentBlock, ToolCallContext } from "../../mcp/provider.ts";
import type { JobView } from "../../output/jobs.ts";
import { resourceLink } from "../../output/resources.ts";
import { text } from "./params.ts";

/** The `job_id` input field. */
export const jobId = text(100).describe("Job id a data tool returned");

/** A job's markdown: state, progress, and its file or error. */
export function describeJob(view: JobView): string {
  const lines = [`## FRED job ${view.job_id}`, `Status: **${view.status}**: ${view.message}`];
  if (view.progress) {
    const p = view.progress;
    lines.push(
      `Progress: ${p.rows_fetched.toLocaleString("en-US")}${
        p.estimated_total === null ? "" : ` of ${p.estimated_total.toLocaleString("en-US")}`
      } rows${
        p.percent_complete === null ? "" : ` (${p.percent_complete} %)`
      }, ${p.elapsed_seconds} s elapsed`,
    );
  }
  if (view.result) {
    lines.push(
      `Result: ${view.result["rows_written"]} rows in \`${view.result["file_path"]}\` (${
        view.result["format"]
      }, ${view.result["file_size_mb"]} MB)\nResource: ${view.result["resource_uri"]}`,
    );
    const missing = view.result["missing"] as
      | { rows?: number; reason?: string; next_offset?: number }
      | undefined;
    if (missing) {
      lines.push(
        `**Incomplete:** ${missing.rows} rows missing (${missing.reason}); for the rest, call the data tool again with offset=${missing.next_offset}`,
      );
    }
  }
  const source = view.result?.["source"] as { url?: string; notice?: string } | undefined;
  if (source?.url) lines.push(`Source: ${source.url}\n${source.notice ?? ""}`.trimEnd());
  if (view.error) lines.push(`Error (${view.error.code}): ${view.error.message}`);
  if (view.next_retry_in_seconds !== undefined && view.next_retry_in_seconds !== null) {
    lines.push(`Retry ${view.retry_count} in ${view.next_retry_in_seconds} s`);
  }
  lines.push(`Request: ${JSON.stringify(view.request)}`);
  return lines.join("\n");
}

/** The resource link of a finished job's file, when it has one. */
export function links(view: JobView): ContentBlock[] {
  const r = view.result;
  const kept = view.status === "completed" || view.status === "incomplete";
  if (!kept || !r || typeof r["resource_uri"] !== "string") return [];
  return [resourceLink({
    uri: r["resource_uri"],
    name: String(r["relative_path"] ?? r["resource_uri"]).split("/").pop()!,
    format: String(r["format"] ?? "csv"),
    bytes: Number(r["file_size_bytes"] ?? Math.round(Number(r["file_size_mb"] ?? 0) * 1_048_576)),
    description: `Output of job ${view.job_id}: ${r["rows_written"]} rows`,
  })];
}

/** Sends a job's progress as a notification; MCP wants each one to move forward, so repeats are skipped. */
export function forwarder(ctx: ToolCallContext): (view: JobView) => Promise<void> {
  let last = -1;
  return async (view) => {
    const p = view.progress;
    if (!p || p.rows_fetched <= last) return;
    last = p.rows_fetched;
    await ctx.progress(p.rows_fetched, p.estimated_total ?? undefined, view.message);
  };
}
