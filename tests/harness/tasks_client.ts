// A small client of the MCP Tasks extension (io.modelcontextprotocol/tasks) on the 2026-07-28
// wire, written on the extension's format because no released client speaks it: each request
// a plain POST with the `_meta` envelope and the routing headers (Mcp-Method, Mcp-Name).
import { setTimeout as delay } from "node:timers/promises";

/** The extension's id. */
export const TASKS = "io.modelcontextprotocol/tasks";

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

/** Options of {@linkcode TasksClient}. */
export interface TasksClientOptions {
  /** Declare the extension in the request envelope (default true). */
  tasks?: boolean;
  /** Extra HTTP headers on every request (e.g. X-Forwarded-For, to be another client). */
  headers?: Record<string, string>;
}

type Json = Record<string, unknown>;

let nextId = 1;

/** Speaks tools/call and tasks/get, tasks/update, tasks/cancel to one server's /mcp. */
export class TasksClient {
  readonly #url: string;
  readonly #options: TasksClientOptions;

  constructor(origin: string, options: TasksClientOptions = {}) {
    this.#url = `${origin}/mcp`;
    this.#options = options;
  }

  /** One request; resolves to its result, rejects with {@linkcode RpcError} on an error answer. */
  async request(method: string, params: Json = {}): Promise<Json> {
    const id = nextId++;
    const capabilities = this.#options.tasks === false ? {} : { extensions: { [TASKS]: {} } };
    const body = {
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "tasks-test-client", version: "0" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    };
    const name = method === "tools/call" ? params["name"] : params["taskId"];
    const res = await fetch(this.#url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        ...(typeof name === "string" ? { "Mcp-Name": name } : {}),
        ...this.#options.headers,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const messages = (res.headers.get("content-type") ?? "").includes("text/event-stream")
      ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)))
      : [JSON.parse(text)];
    const answer = messages.find((m) => m.id === id) as { result?: Json; error?: Json } | undefined;
    if (!answer) throw new Error(`No answer to ${method} (HTTP ${res.status}): ${text.slice(0, 500)}`);
    if (answer.error) {
      throw new RpcError(Number(answer.error["code"]), String(answer.error["message"]), answer.error["data"]);
    }
    return answer.result!;
  }

  callTool(name: string, args: Json = {}): Promise<Json> {
    return this.request("tools/call", { name, arguments: args });
  }

  get(taskId: string): Promise<Json> {
    return this.request("tasks/get", { taskId });
  }

  update(taskId: string, inputResponses: Json): Promise<Json> {
    return this.request("tasks/update", { taskId, inputResponses });
  }

  cancel(taskId: string): Promise<Json> {
    return this.request("tasks/cancel", { taskId });
  }

  /**
   * Polls `tasks/get` (as a client of the extension does, at a short interval) until `done`
   * holds for the task, or fails after `ms`.
   */
  async until(taskId: string, done: (task: Json) => boolean, ms = 20_000): Promise<Json> {
    const end = Date.now() + ms;
    for (;;) {
      const task = await this.get(taskId);
      if (done(task)) return task;
      if (Date.now() > end) throw new Error(`Task ${taskId} still ${JSON.stringify(task).slice(0, 300)}`);
      await delay(50);
    }
  }
}

/** Whether a task is finished. */
export const terminal = (task: Json): boolean =>
  ["completed", "failed", "cancelled"].includes(String(task["status"]));

/** The error a promise rejects with, which must be an {@linkcode RpcError}. */
export async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RpcError) return e;
    throw e;
  }
  throw new Error("Expected a JSON-RPC error, got a result");
}
