// Runs a tool call as a task: the call's rounds (a tool may ask for input, answered through
// `tasks/update`), the work a tool hands to a background job of its provider (followed to its
// end, so the task's result is the job's), and what the task ends as: a tool's own error is a
// completed task with `isError`, a protocol failure a failed task with a JSON-RPC error.
import { isInputRequiredResult, ProtocolError } from "../sdk.ts";
import type { CallToolResult, InputRequiredResult } from "../sdk.ts";
import type { RunningTask, Task, TaskError, TaskOutcome, TaskStore } from "./types.ts";

/** Most input rounds one task may ask for before it fails (a tool that keeps asking is a bug). */
export const MAX_INPUT_ROUNDS = 8;

/** What one round of the call is given: the answers gathered so far and the task's signal. */
export interface TaskRound {
  inputResponses: Record<string, unknown>;
  signal: AbortSignal;
}

/** A tool call to run as a task. */
export interface ToolTask {
  /** Who owns the task (see `TaskStore`), and the client it counts against. */
  owner?: string;
  client?: string;
  /** The request as status answers show it. */
  request: Record<string, unknown>;
  /** Answers the client sent with the call that created the task (from a multi round-trip). */
  inputResponses?: Record<string, unknown>;
  /** Runs one round of the call. A thrown ProtocolError fails the task with its code. */
  call(round: TaskRound): Promise<CallToolResult | InputRequiredResult>;
  /**
   * When the result names background work that goes on (a provider's job), waits for it and
   * resolves to the result that replaces it; undefined when the result is final.
   */
  follow?(
    result: CallToolResult,
    signal: AbortSignal,
    report: (message: string) => void,
  ): Promise<CallToolResult | undefined>;
}

/** The flat `CreateTaskResult` of a `tools/call` that created a task. */
export type CreateTaskResult = Task & { resultType: "task" };

/** Starts tool calls as tasks on a {@linkcode TaskStore}. */
export class TaskEngine {
  readonly store: TaskStore;

  constructor(store: TaskStore) {
    this.store = store;
  }

  /** Creates the task (durably) and starts its work; resolves to the `CreateTaskResult`. */
  async start(tool: ToolTask): Promise<CreateTaskResult> {
    const task = await this.store.createTask({
      request: tool.request,
      ...(tool.owner === undefined ? {} : { owner: tool.owner }),
      ...(tool.client === undefined ? {} : { client: tool.client }),
      run: (running) => runRounds(tool, running),
    });
    return { ...task, resultType: "task" };
  }
}

async function runRounds(
  tool: ToolTask,
  running: RunningTask,
): Promise<TaskOutcome> {
  let responses: Record<string, unknown> = { ...tool.inputResponses };
  for (let round = 0; round <= MAX_INPUT_ROUNDS; round++) {
    let out: CallToolResult | InputRequiredResult;
    try {
      out = await tool.call({ inputResponses: responses, signal: running.signal });
    } catch (e) {
      if (running.signal.aborted) throw e;
      return { error: protocolError(e) };
    }
    // Cancelled while the round ran: the task ends cancelled, whatever the round answered.
    if (running.signal.aborted) throw running.signal.reason;
    if (!isInputRequiredResult(out)) {
      const followed = tool.follow ? await tool.follow(out, running.signal, running.report) : undefined;
      return { result: followed ?? out };
    }
    const asked = (out as { inputRequests?: Record<string, Record<string, unknown>> }).inputRequests ?? {};
    responses = { ...responses, ...await running.askInput(asked) };
  }
  return {
    error: { code: -32603, message: `The tool asked for input more than ${MAX_INPUT_ROUNDS} times` },
  };
}

/** A failure as a failed task reports it: a ProtocolError's code and message; others say little. */
function protocolError(e: unknown): TaskError {
  if (e instanceof ProtocolError) {
    return {
      code: e.code,
      message: e.message.replace(/^MCP error -?\d+: /, ""),
      ...(e.data && typeof e.data === "object" ? { data: e.data as Record<string, unknown> } : {}),
    };
  }
  return { code: -32603, message: "The task failed unexpectedly; the failure was logged" };
}
