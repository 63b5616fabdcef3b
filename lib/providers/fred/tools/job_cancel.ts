// fred_job_cancel: cancels a running background job and removes its partial file.
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { jsonText } from "../../../mcp/shaping.ts";
import { jobViewSchema } from "../../../output/jobs.ts";
import type { JobManager } from "../../../output/jobs.ts";
import { responseFormat } from "../params.ts";
import { describeJob, jobId, links } from "../job_text.ts";

const cancelInput = z.strictObject({ job_id: jobId, response_format: responseFormat });

/** `fred_job_cancel`. */
export function jobCancelTool(jobs: JobManager): ToolDefinition<typeof cancelInput, typeof jobViewSchema> {
  return {
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
}
