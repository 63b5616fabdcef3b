// The glue between `tools/call` and the task engine: the call's context as a task round sees it
// (the task's signal, the answers gathered so far, no request stream to notify on), and the
// following of a provider's background job that a tool call started, so the task ends with the
// job and cancelling the task cancels the job.
import type { JobView } from "../../output/job_types.ts";
import type { JobFollower } from "./types.ts";
import { ToolError } from "../../errors.ts";
import { errorResult } from "../call_errors.ts";
import type { McpExtra, ToolDefinition } from "../provider.ts";
import type { CallToolResult, InputRequiredResult } from "../sdk.ts";
import type { CallToolOptions } from "../server_options.ts";
import type { TaskEngine, TaskRound } from "./engine.ts";
export type { JobFollower } from "./types.ts";

/** Marks the context of a call that runs as a task (see {@linkcode isTaskRound}). */
const TASK_ROUND = Symbol("task round");

/** How long one task's tool call may run (a plain call has the server's call deadline). */
export const TASK_CALL_TIMEOUT_MS = 15 * 60_000;

/** The context of one round of a call running as a task, derived from the request's. */
export function roundContext(extra: McpExtra, round: TaskRound): McpExtra {
  return {
    ...extra,
    mcpReq: {
      ...extra.mcpReq,
      signal: round.signal,
      inputResponses: round.inputResponses,
      // The request that created the task has been answered: there is no stream to notify on.
      notify: () => Promise.resolve(),
    },
    [TASK_ROUND]: true,
  } as McpExtra;
}

/** Whether `extra` is the context of a call running as a task. */
export function isTaskRound(extra: McpExtra): boolean {
  return (extra as unknown as Record<symbol, unknown>)[TASK_ROUND] === true;
}

const FINISHED = new Set(["completed", "incomplete", "failed", "cancelled"]);

/**
 * When `result` says a background job was started (`structuredContent.job_id` with status
 * `accepted`, as the FRED data tools answer), waits for the job to finish and resolves to a
 * result that carries its final view (an error result when it failed or was cancelled);
 * undefined otherwise. Cancelling the task (`signal`) cancels the job. The task and the job are
 * one piece of work seen two ways: the job tools of the 2025-era path show the same job.
 */
export async function followJob(
  result: CallToolResult,
  jobs: JobFollower,
  signal: AbortSignal,
  owner: string | undefined,
  report: (message: string) => void = () => {},
): Promise<CallToolResult | undefined> {
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  const id = structured?.["job_id"];
  if (typeof id !== "string" || structured?.["status"] !== "accepted") return undefined;
  const who = owner === undefined ? {} : { owner };
  // The job's id in the task's status message: the job tools show the same work.
  report(`Running as job "${id}"`);
  let view: JobView;
  do {
    if (signal.aborted) {
      await jobs.cancel(id, owner);
      throw signal.reason;
    }
    view = await jobs.wait(id, { timeoutMs: TASK_CALL_TIMEOUT_MS, signal, ...who });
  } while (!FINISHED.has(view.status));
  const failed = view.status === "failed" || view.status === "cancelled";
  return {
    content: [{
      type: "text",
      text: `Job "${id}" ${view.status}: ${view.message}\n\n${JSON.stringify(view)}`,
    }],
    // The call's own answer, completed by the job's result (a data tool's `status` turns from
    // `accepted` to `success`), with the job's final view under `job`.
    structuredContent: {
      ...structured,
      ...view.result,
      ...(failed ? {} : { status: "success" }),
      message: view.message,
      job: view,
    },
    ...(failed ? { isError: true } : {}),
  };
}

/** A `tools/call` to run as a task, and how to run it (the server's call and projection). */
export interface ToolTaskCall {
  engine: TaskEngine;
  /** The name called (opendata_call's target runs under its own name). */
  name: string;
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>;
  /** The call's arguments, as status answers show them (the data tools take no secrets). */
  args: unknown;
  ctx: McpExtra;
  owner: string | undefined;
  client: string | undefined;
  /** The provider's jobs, when it has some (a call that starts one is followed to its end). */
  jobs: JobFollower | undefined;
  /** Runs the call in `extra` with `options` over the server's, as `tools/call` answers it. */
  run(extra: McpExtra, options: Partial<CallToolOptions>): Promise<CallToolResult | InputRequiredResult>;
}

/**
 * A `tools/call` run as a task (docs/MCP.md, "Tasks"): answered at once with the task, its
 * rounds run in the background under the task's signal and a task's longer deadline. When no
 * task can start, a read-only server (MCP_WRITES=off: no jobs) runs a tool that may run either
 * way as a plain call, and a client at its running-jobs share is told so in a tool error.
 */
export async function startToolTask(call: ToolTaskCall): Promise<CallToolResult | InputRequiredResult> {
  const { owner, client, jobs, ctx } = call;
  const responses = ctx.mcpReq.inputResponses as Record<string, unknown> | undefined;
  try {
    const created = await call.engine.start({
      ...(owner === undefined ? {} : { owner }),
      ...(client === undefined ? {} : { client }),
      request: { tool: call.name, arguments: call.args },
      ...(responses ? { inputResponses: responses } : {}),
      call: (round) => call.run(roundContext(ctx, round), { callTimeoutMs: TASK_CALL_TIMEOUT_MS }),
      ...(jobs ? { follow: (result, signal, report) => followJob(result, jobs, signal, owner, report) } : {}),
    });
    return created as unknown as CallToolResult;
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    if (e.errorType === "CONFIGURATION_ERROR" && call.tool.execution?.taskSupport === "optional") {
      return await call.run(ctx, {});
    }
    return errorResult(e.toPayload());
  }
}
