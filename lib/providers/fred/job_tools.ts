// fred_job_status, fred_job_list and fred_job_cancel: following the background jobs that large
// requests start. Waiting on a job (wait_seconds) sends progress notifications to a client that
// asked for them with a progress token: the only way to stream progress for work that outlives
// the call which started it, since a token is only valid while its request is open.
import { z } from "zod";
import type { ContentBlock, ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { fitToLimit, jsonText, markdownTable } from "../../mcp/output.ts";
import { JOB_STATUSES, jobViewSchema } from "../../output/jobs.ts";
import type { JobManager, JobView } from "../../output/jobs.ts";
import { resourceLink } from "../../output/resources.ts";
import { pageEnd } from "./format.ts";
import { integer, responseFormat, text } from "./params.ts";

const jobId = text(100).describe("Job id a data tool returned");

function describeJob(view: JobView): string {
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

function links(view: JobView): ContentBlock[] {
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
function forwarder(ctx: ToolCallContext): (view: JobView) => Promise<void> {
  let last = -1;
  return async (view) => {
    const p = view.progress;
    if (!p || p.rows_fetched <= last) return;
    last = p.rows_fetched;
    await ctx.progress(p.rows_fetched, p.estimated_total ?? undefined, view.message);
  };
}

/** The three job tools over one job manager. */
// deno-lint-ignore no-explicit-any
export function jobTools(jobs: JobManager): ToolDefinition<any, any>[] {
  const statusInput = z.strictObject({
    job_id: jobId,
    wait_seconds: z.number().min(0).max(60).optional().describe("Default 0"),
    response_format: responseFormat,
  });
  const listInput = z.strictObject({
    status_filter: z.enum(JOB_STATUSES).optional().describe("Only this state"),
    limit: integer(1, 100).optional().describe("Default 10, at most 100"),
    offset: integer(0, 100_000).optional().describe("Default 0"),
    response_format: responseFormat,
  });
  const listOutput = z.looseObject({ jobs: z.array(jobViewSchema), total: z.number(), count: z.number() });
  const cancelInput = z.strictObject({ job_id: jobId, response_format: responseFormat });

  const status: ToolDefinition<typeof statusInput, typeof jobViewSchema> = {
    name: "fred_job_status",
    title: "FRED job status",
    toolset: "fred-jobs",
    description:
      "A background FRED job's status: progress, or its file (path, rows, resource link); result.missing gives an incomplete one's resume offset. Kept 24 h.",
    input: statusInput,
    output: jobViewSchema,
    annotations: { readOnlyHint: true, idempotentHint: false, destructiveHint: false, openWorldHint: false },
    async handler(args, ctx) {
      let view = await jobs.status(args.job_id, ctx.owner);
      const wait = args.wait_seconds ?? 0;
      if (wait > 0 && (view.status === "accepted" || view.status === "processing")) {
        const forward = forwarder(ctx);
        await forward(view);
        view = await jobs.wait(args.job_id, {
          timeoutMs: wait * 1000,
          signal: ctx.signal,
          onChange: forward,
          ...(ctx.owner === undefined ? {} : { owner: ctx.owner }),
        });
      }
      const text = args.response_format === "json" ? jsonText(view) : describeJob(view);
      return { text, structured: view, content: links(view) };
    },
  };

  const list: ToolDefinition<typeof listInput, typeof listOutput> = {
    name: "fred_job_list",
    title: "FRED jobs",
    toolset: "fred-jobs",
    description: "Your recent FRED background jobs, newest first.",
    input: listInput,
    output: listOutput,
    annotations: { readOnlyHint: true, idempotentHint: false, destructiveHint: false, openWorldHint: false },
    async handler(args, ctx) {
      const offset = args.offset ?? 0;
      // The store lists newest first from the start: ask for the page's end and skip to it.
      const { jobs: upTo, total } = await jobs.query({
        ...(args.status_filter ? { status: args.status_filter } : {}),
        ...(ctx.owner === undefined ? {} : { owner: ctx.owner }),
        limit: offset + (args.limit ?? 10),
      });
      const views = upTo.slice(offset);
      const fitted = fitToLimit(views, ctx.limits.characterLimit, ({ items, truncated }) => {
        const next = offset + items.length < total ? offset + items.length : null;
        const structured = { jobs: items, total, count: items.length, offset, next_offset: next };
        const text = args.response_format === "json" ? jsonText(structured) : [
          `## FRED jobs (${items.length ? `${offset + 1}-${offset + items.length}` : "none"} of ${total})`,
          items.length === 0 ? "_No jobs._" : markdownTable(
            ["job_id", "status", "kind", "rows", "%", "created_at"],
            items.map((j) => [
              j.job_id,
              j.status,
              j.kind,
              j.progress?.rows_fetched ?? 0,
              j.progress?.percent_complete ?? "",
              j.created_at,
            ]),
          ),
          ...pageEnd(items.length, views.length, next, truncated, ctx.limits.characterLimit),
        ].join("\n\n");
        return { text, structured };
      });
      return { text: fitted.text, structured: fitted.structured };
    },
  };

  const cancel: ToolDefinition<typeof cancelInput, typeof jobViewSchema> = {
    name: "fred_job_cancel",
    title: "Cancel a FRED job",
    toolset: "fred-jobs",
    description: "Cancels a running FRED job and removes its partial file.",
    input: cancelInput,
    output: jobViewSchema,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
    async handler(args, ctx) {
      const view = await jobs.cancel(args.job_id, ctx.owner);
      const note = view.status === "cancelled"
        ? ""
        : `The job had already ${
          view.status === "failed" ? "failed" : "finished"
        }; nothing was cancelled.\n\n`;
      const text = args.response_format === "json" ? jsonText(view) : `${note}${describeJob(view)}`;
      return { text, structured: view, content: links(view) };
    },
  };

  return [status, list, cancel];
}
