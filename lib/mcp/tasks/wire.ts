// The Tasks extension on an MCP server instance: the capability, `tasks/get`, `tasks/update`
// and `tasks/cancel`, and the rule that decides whether a `tools/call` becomes a task. Only
// requests whose client capabilities declare the extension (in the request's `_meta` envelope on
// 2026-07-28, or at initialize) reach the task surface; the others get -32021 naming it.
import { z } from "zod";
import { ProtocolError, ProtocolErrorCode } from "../sdk.ts";
import type { McpServer } from "../sdk.ts";
import { requestCapabilities } from "../views/mod.ts";
import type { TaskEngine } from "./engine.ts";
import { TASKS_EXTENSION } from "./types.ts";

/** How a tool takes part in tasks (`execution.taskSupport` of its definition). */
export type TaskSupport = "forbidden" | "optional" | "required" | undefined;

/** Whether the request's client declared the Tasks extension. */
export function declaresTasks(server: McpServer, ctx: unknown): boolean {
  const caps = requestCapabilities(ctx, server.server.getClientCapabilities()) as
    | { extensions?: Record<string, unknown> }
    | undefined;
  const ext = caps?.extensions?.[TASKS_EXTENSION];
  return ext !== undefined && ext !== null;
}

/** The -32021 error of a request that needs the extension its client did not declare. */
export function missingTasksCapability(what: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${what} needs the "${TASKS_EXTENSION}" extension; declare it ` +
      `under capabilities.extensions (in the request's _meta clientCapabilities) and retry`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/**
 * Whether a `tools/call` of a tool with `support` runs as a task: yes when the tool supports
 * tasks and the client declared the extension; a tool that requires tasks refuses other clients
 * (-32021); everything else runs as a plain call.
 */
export function runsAsTask(server: McpServer, ctx: unknown, tool: string, support: TaskSupport): boolean {
  if (support !== "optional" && support !== "required") return false;
  if (declaresTasks(server, ctx)) return true;
  if (support === "required") throw missingTasksCapability(`the tool "${tool}" runs only as a task, so it`);
  return false;
}

const taskIdParam = z.string().min(1).max(200);

const getParams = z.looseObject({ taskId: taskIdParam });
// The SDK lifts `inputResponses` off the params of every request (multi round-trip), so it is
// read from the request context; a copy left in the params is taken too.
const updateParams = z.looseObject({
  taskId: taskIdParam,
  inputResponses: z.record(z.string(), z.unknown()).optional(),
});

function unknownTask(taskId: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown task: "${taskId}" is not a task of yours (it never existed, expired, or belongs to another ` +
      `user); start the call again with tools/call`,
  );
}

/**
 * Serves the extension on `server` for tasks of `owner`: declares it under
 * `capabilities.extensions` and answers `tasks/get`, `tasks/update` and `tasks/cancel`.
 */
export function registerTasks(server: McpServer, engine: TaskEngine, owner: string | undefined): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  const gate = (method: string, ctx: unknown): void => {
    if (!declaresTasks(server, ctx)) throw missingTasksCapability(method);
  };
  server.server.setRequestHandler("tasks/get", { params: getParams }, async (params, ctx) => {
    gate("tasks/get", ctx);
    const task = await engine.store.getTask(params.taskId, owner);
    if (!task) throw unknownTask(params.taskId);
    return { ...task };
  });
  server.server.setRequestHandler("tasks/update", { params: updateParams }, async (params, ctx) => {
    gate("tasks/update", ctx);
    const lifted = (ctx as { mcpReq?: { inputResponses?: Record<string, unknown> } }).mcpReq?.inputResponses;
    const responses = { ...lifted, ...params.inputResponses };
    if (!await engine.store.updateTask(params.taskId, responses, owner)) {
      throw unknownTask(params.taskId);
    }
    return {};
  });
  server.server.setRequestHandler("tasks/cancel", { params: getParams }, async (params, ctx) => {
    gate("tasks/cancel", ctx);
    if (!await engine.store.cancelTask(params.taskId, owner)) throw unknownTask(params.taskId);
    return {};
  });
}
