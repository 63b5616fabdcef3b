// The glue between `tools/call` and the task engine: the call's context as a task round sees it
// (the task's signal, the answers gathered so far, no request stream to notify on), and the
// following of a provider's background job that a tool call started, so the task ends with the
// job and cancelling the task cancels the job.
import type { JobView } from "../../output/job_types.ts";
import type { JobFollower } from "./types.ts";
import type { McpExtra } from "../provider.ts";
import type { CallToolResult } from "../sdk.ts";
import type { TaskRound } from "./engine.ts";
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
