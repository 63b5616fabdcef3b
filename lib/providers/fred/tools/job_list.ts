// fred_job_list: the caller's background jobs, newest first.
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, markdownTable } from "../../../mcp/shaping.ts";
import { JOB_STATUSES, jobViewSchema } from "../../../output/jobs.ts";
import type { JobManager } from "../../../output/jobs.ts";
import { pageEnd } from "../format.ts";
import { integer, responseFormat } from "../params.ts";

const listInput = z.strictObject({
  status_filter: z.enum(JOB_STATUSES).optional().describe("Only this state"),
  limit: integer(1, 100).optional().describe("Default 10, at most 100"),
  offset: integer(0, 100_000).optional().describe("Default 0"),
  response_format: responseFormat,
});

const listOutput = z.looseObject({ jobs: z.array(jobViewSchema), total: z.number(), count: z.number() });

/** `fred_job_list`. */
export function jobListTool(jobs: JobManager): ToolDefinition<typeof listInput, typeof listOutput> {
  return {
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
}
