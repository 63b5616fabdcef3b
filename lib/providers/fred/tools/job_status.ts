// fred_job_status: a background job's state, progress or file; waiting on it (wait_seconds) sends
// progress notifications to a caller that asked for them with a progress token, the only way to
// stream progress for work that outlives the call which started it.
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { jsonText } from "../../../mcp/shaping.ts";
import { jobViewSchema } from "../../../output/jobs.ts";
import type { JobManager } from "../../../output/jobs.ts";
import { responseFormat } from "../params.ts";
import { describeJob, forwarder, jobId, links } from "../job_text.ts";

const statusInput = z.strictObject({
  job_id: jobId,
  wait_seconds: z.number().min(0).max(60).optional().describe("Default 0"),
  response_format: responseFormat,
});

/** `fred_job_status`. */
export function jobStatusTool(jobs: JobManager): ToolDefinition<typeof statusInput, typeof jobViewSchema> {
  return {
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
}
