import { z } from "zod";
import { ToolError } from "../errors.ts";
import type { ErrorPayload } from "../errors.ts";
import type { Logger } from "../log.ts";
import { systemClock } from "../clock.ts";
import type { Clock } from "../clock.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { requestScope } from "../http/request_scope.ts";
import { clampText } from "./output.ts";
import type { McpExtra, Provider, ToolCallContext, ToolDefinition } from "./provider.ts";
import {
  CallToolRequestSchema,
  completable,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  McpServer,
  ResourceTemplate,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "./sdk.ts";
import type { CallToolResult, Tool } from "./sdk.ts";

/** Options for {@linkcode createServer}. */
export interface CreateServerOptions {
  logger: Logger;
  /** Most characters in a result's text block. */
  characterLimit: number;
  name?: string;
  version?: string;
  /** Text sent with `initialize` to orient the model. */
  instructions?: string;
  /**
   * Every tool call answers within this many milliseconds (default 45,000, under the ~60 s
   * request timeout of common clients); upstream requests the call makes end by then too.
   */
  callTimeoutMs?: number;
  /** The clock upstream deadlines are measured on (the HTTP runtime's); default the system clock. */
  clock?: Clock;
}

/** The default per-call deadline: under the ~60 s that common MCP clients wait for an answer. */
export const DEFAULT_CALL_TIMEOUT_MS = 45_000;

/** The tools of `providers`, in registration order, checked for duplicate names. */
// deno-lint-ignore no-explicit-any
export function collectTools(providers: readonly Provider[]): ToolDefinition<any, any>[] {
  // deno-lint-ignore no-explicit-any
  const tools = new Map<string, ToolDefinition<any, any>>();
  for (const provider of providers) {
    for (const tool of provider.tools) {
      if (tools.has(tool.name)) {
        throw new Error(`Tool "${tool.name}" is registered twice (second time by "${provider.id}")`);
      }
      tools.set(tool.name, tool);
    }
  }
  return [...tools.values()];
}

const schemaCache = new WeakMap<object, Tool>();
const inputCache = new WeakMap<object, { schema: z.ZodType; addsFresh: boolean }>();

/** The shared `fresh` argument every upstream-backed tool accepts. */
export const FRESH_FIELD = z.boolean().default(false).describe(
  "Set true to bypass the server's response cache and fetch from the upstream again (default false)",
);

/**
 * The input schema a tool is served with: its own, plus the shared `fresh` argument when it
 * reads an upstream (`openWorldHint`) and does not define `fresh` itself.
 */
// deno-lint-ignore no-explicit-any
export function servedInput(tool: ToolDefinition<any, any>): { schema: z.ZodType; addsFresh: boolean } {
  const cached = inputCache.get(tool);
  if (cached) return cached;
  const input = tool.input;
  const addsFresh = tool.annotations.openWorldHint === true && input instanceof z.ZodObject &&
    !("fresh" in input.shape);
  const served = {
    schema: addsFresh ? (input as z.ZodObject).safeExtend({ fresh: FRESH_FIELD }) : input,
    addsFresh,
  };
  inputCache.set(tool, served);
  return served;
}

// tools/call is registered under this loose envelope so that malformed params (no "name") reach
// the SDK's tools/call wrapper, which answers -32602 Invalid params; registered under the strict
// schema, the parse failure would surface as -32603 Internal error.
const ToolsCallEnvelope = z.object({ method: z.literal("tools/call"), params: z.unknown().optional() });

/** The MCP `Tool` description of a definition (JSON Schemas derived from its zod schemas). */
// deno-lint-ignore no-explicit-any
export function describeTool(tool: ToolDefinition<any, any>): Tool {
  const cached = schemaCache.get(tool);
  if (cached) return cached;
  const described: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(servedInput(tool).schema, "input") as Tool["inputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
  if (tool.output) described.outputSchema = toJsonSchema(tool.output, "output") as Tool["outputSchema"];
  if (tool.execution) described.execution = tool.execution;
  schemaCache.set(tool, described);
  return described;
}

function toJsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete json["$schema"];
  if (json["type"] !== "object") return { type: "object", ...json };
  return json;
}

/**
 * One MCP server instance (one per connection or HTTP session) over already-created providers.
 * The core knows no provider: everything comes in through `providers`.
 */
export function createServer(providers: readonly Provider[], options: CreateServerOptions): McpServer {
  const server = new McpServer(
    { name: options.name ?? SERVER_NAME, version: options.version ?? VERSION },
    {
      capabilities: { logging: {} },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const tools = collectTools(providers);
  const byName = new Map(tools.map((t) => [t.name, t]));

  server.server.registerCapabilities({ tools: { listChanged: false } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(describeTool),
  }));
  server.server.setRequestHandler(ToolsCallEnvelope, (envelope, extra) => {
    // The SDK's tools/call wrapper has checked the params against CallToolRequestSchema by now.
    const request = envelope as unknown as z.output<typeof CallToolRequestSchema>;
    const tool = byName.get(request.params.name);
    if (!tool) {
      const names = tools.map((t) => t.name);
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}". Call tools/list to see the ${names.length} tools served${
          names.length ? `, e.g. ${names.slice(0, 5).map((n) => `"${n}"`).join(", ")}` : ""
        }`,
      );
    }
    return callTool(tool, request.params.arguments ?? {}, extra as McpExtra, options);
  });

  for (const provider of providers) {
    for (const resource of provider.resources ?? []) {
      server.registerResource(
        resource.name,
        resource.uri,
        {
          ...(resource.title ? { title: resource.title } : {}),
          description: resource.description,
          mimeType: resource.mimeType,
        },
        (uri, extra) => resource.read(uri, extra),
      );
    }
    for (const template of provider.resourceTemplates ?? []) {
      const list = template.list;
      server.registerResource(
        template.name,
        new ResourceTemplate(template.uriTemplate, {
          list: list
            ? async (extra) => ({
              resources: (await list(extra)).map((r) => ({ mimeType: template.mimeType, ...r })),
            })
            : undefined,
          ...(template.complete ? { complete: template.complete } : {}),
        }),
        {
          ...(template.title ? { title: template.title } : {}),
          description: template.description,
          mimeType: template.mimeType,
        },
        (uri, variables, extra) => template.read(uri, variables, extra),
      );
    }
    for (const prompt of provider.prompts ?? []) {
      const shape: Record<string, z.ZodType<string | undefined>> = {};
      for (const arg of prompt.arguments) {
        const complete = arg.complete;
        // deno-lint-ignore no-explicit-any
        const mark = (schema: z.ZodType<any>): z.ZodType<string | undefined> =>
          complete
            ? completable(schema, (value: unknown) => complete(typeof value === "string" ? value : ""))
            : schema;
        // The SDK looks for the completion marker inside .optional() when it registers the
        // prompt but on the field itself when it answers completion/complete: mark both.
        const inner = mark(z.string().describe(arg.description));
        shape[arg.name] = arg.required ? inner : mark(inner.optional().describe(arg.description));
      }
      server.registerPrompt(
        prompt.name,
        {
          ...(prompt.title ? { title: prompt.title } : {}),
          description: prompt.description,
          argsSchema: shape,
        },
        (args: Record<string, string | undefined>, extra) => {
          const clean: Record<string, string> = {};
          for (const [k, v] of Object.entries(args)) if (v !== undefined) clean[k] = v;
          return prompt.render(clean, extra);
        },
      );
    }
  }
  registerSubscriptions(server, providers);
  answerMalformedParamsAsInvalidParams(server);
  return server;
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * Makes every method answer params that do not fit its schema with -32602 Invalid params naming
 * the field. The SDK parses a request inside its handler wrapper and lets the ZodError escape,
 * which it then answers as -32603 Internal error with the raw issue list (only tools/call gets
 * its own check). The handler map is not public API: the HTTP JSON-RPC error tests pin this.
 */
function answerMalformedParamsAsInvalidParams(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers as Map<string, RequestHandler>) {
    handlers.set(method, async (request: unknown, extra: unknown) => {
      try {
        return await handler(request, extra);
      } catch (e) {
        // The SDK throws zod's core error class ("$ZodError"), not the one `z` exports.
        const name = (e as { name?: unknown } | null)?.name;
        const issues = name === "$ZodError" || name === "ZodError" ? (e as z.ZodError).issues : undefined;
        // The SDK parses the whole request, so its issues sit under "params".
        if (!issues?.length || !issues.every((i) => i.path[0] === "params")) throw e;
        const detail = issues.map((i) => `"${i.path.map(String).join(".")}": ${i.message}`).join("; ");
        throw new McpError(ErrorCode.InvalidParams, `Invalid params for "${method}": ${detail}`);
      }
    });
  }
}

/**
 * Answers `resources/subscribe` and `resources/unsubscribe` for resources marked `subscribable`,
 * remembering this session's subscriptions. Without such resources the capability stays off.
 */
function registerSubscriptions(server: McpServer, providers: readonly Provider[]): void {
  const subscribable = new Set(
    providers.flatMap((p) => (p.resources ?? []).filter((r) => r.subscribable).map((r) => r.uri)),
  );
  if (subscribable.size === 0) return;
  const subscribed = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    if (!subscribable.has(uri)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Resource "${uri}" does not take subscriptions; subscribable resources: ${
          [...subscribable].map((u) => `"${u}"`).join(", ")
        }`,
      );
    }
    subscribed.add(uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
}

/** Runs one tool call: validation, the handler, the error contract, the limit and a log line. */
export async function callTool(
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  rawArgs: unknown,
  extra: McpExtra,
  options: CreateServerOptions,
): Promise<CallToolResult> {
  const started = performance.now();
  const headerId = extra.requestInfo?.headers?.["x-request-id"];
  const requestId = typeof headerId === "string" ? headerId : crypto.randomUUID();
  const logger = options.logger.child({ request_id: requestId, tool_name: tool.name });
  const done = (result: CallToolResult, payload?: ErrorPayload): CallToolResult => {
    const fields: Record<string, unknown> = {
      duration_ms: Math.round(performance.now() - started),
      status: result.isError ? "error" : "ok",
    };
    if (payload) fields["error_type"] = payload.error_type;
    if (payload?.status) fields["upstream_status"] = payload.status;
    logger.info("tool call", fields);
    return result;
  };

  const served = servedInput(tool);
  const parsed = served.schema.safeParse(rawArgs);
  if (!parsed.success) {
    const err = validationError(parsed.error, rawArgs);
    return done(errorResult(err.toPayload()), err.toPayload());
  }
  const progressToken = extra._meta?.progressToken;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + callTimeoutMs;
  const expired = new AbortController();
  const timer = setTimeout(
    () => expired.abort(new DOMException("The call reached its deadline", "TimeoutError")),
    callTimeoutMs,
  );
  const signal = AbortSignal.any([extra.signal, expired.signal]);
  const context: ToolCallContext = {
    signal,
    logger,
    requestId,
    limits: { characterLimit: options.characterLimit },
    async progress(progress, total, message) {
      if (progressToken === undefined) return;
      try {
        await extra.sendNotification({
          method: "notifications/progress",
          params: {
            progressToken,
            progress,
            ...(total === undefined ? {} : { total }),
            ...(message === undefined ? {} : { message }),
          },
        });
      } catch {
        // A client that went away cannot take progress; the call itself goes on.
      }
    },
    mcp: extra,
    // For now the session; the auth principal where no session exists is yet to be wired.
    ...(extra.sessionId === undefined ? {} : { owner: extra.sessionId }),
  };
  try {
    let args = parsed.data as Record<string, unknown>;
    let fresh = false;
    if (served.addsFresh) {
      const { fresh: wanted, ...rest } = args;
      fresh = wanted === true;
      args = rest;
    }
    const output = await requestScope.run(
      { fresh, deadline },
      () => raceDeadline(tool.handler(args, context), expired.signal),
    );
    const text = clampText(output.text, options.characterLimit);
    const content: CallToolResult["content"] = output.replaceContent
      ? [...(output.content ?? [])]
      : [{ type: "text", text }, ...(output.content ?? [])];
    const result: CallToolResult = { content };
    if (output.structured !== undefined) {
      result.structuredContent = output.structured as Record<string, unknown>;
    }
    return done(result);
  } catch (e) {
    const payload = expired.signal.aborted && !extra.signal.aborted
      ? deadlinePayload(callTimeoutMs)
      : toPayload(e, extra.signal);
    if (payload.error_type === "INTERNAL_ERROR") {
      logger.error("tool failed unexpectedly", { error: e instanceof Error ? e.message : String(e) });
    }
    return done(errorResult(payload), payload);
  } finally {
    clearTimeout(timer);
  }
}

/** Settles with `work`, or rejects as soon as `expired` aborts (the handler is told through its signal). */
function raceDeadline<T>(work: Promise<T>, expired: AbortSignal): Promise<T> {
  if (expired.aborted) return Promise.reject(expired.reason);
  return new Promise<T>((resolve, reject) => {
    const onExpired = (): void => reject(expired.reason);
    expired.addEventListener("abort", onExpired, { once: true });
    work.then(resolve, reject).finally(() => expired.removeEventListener("abort", onExpired));
  });
}

function deadlinePayload(callTimeoutMs: number): ErrorPayload {
  const s = Math.round(callTimeoutMs / 100) / 10;
  return {
    error_type: "TIMEOUT",
    message: `The call did not finish within the server's ${s} s per-call deadline`,
    retryable: true,
    hint:
      "Ask for less in one call (a smaller limit, a narrower area, filter or date range), continue from " +
      "the last cursor or offset, or use file output or a background job where the tool offers one",
  };
}

/** A VALIDATION_ERROR naming each argument at fault. */
export function validationError(error: z.ZodError, input?: unknown): ToolError {
  const issues = error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    let message = issue.message;
    if (issue.code === "unrecognized_keys") {
      return `Unknown argument ${issue.keys.map((k) => `"${k}"`).join(", ")}${
        path ? ` in "${path}"` : ""
      }: remove it (the tool's inputSchema lists the accepted arguments)`;
    }
    if ((issue.code === "invalid_type" || issue.code === "invalid_value") && isMissing(input, issue.path)) {
      message = issue.code === "invalid_value" ? `required: ${issue.message}` : "required";
    }
    return path ? `"${path}": ${message}` : message;
  });
  const issue = error.issues[0];
  const first = issue?.code === "unrecognized_keys" && issue.path.length === 0
    ? issue.keys[0]
    : issue?.path[0];
  return new ToolError("VALIDATION_ERROR", `Invalid arguments: ${issues.join("; ")}`, {
    ...(first === undefined ? {} : { field: String(first) }),
    hint: "Correct the named argument(s) and call the tool again",
  });
}

/** Whether `path` names nothing in `input` (zod does not report inputs by default). */
function isMissing(input: unknown, path: readonly PropertyKey[]): boolean {
  let node: unknown = input;
  for (const key of path) {
    if (typeof node !== "object" || node === null || !(key in node)) return true;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node === undefined;
}

function toPayload(e: unknown, signal: AbortSignal): ErrorPayload {
  if (e instanceof ToolError) return e.toPayload();
  if (e instanceof z.ZodError) return validationError(e).toPayload();
  if (signal.aborted) {
    return { error_type: "CANCELLED", message: "The call was cancelled by the client", retryable: false };
  }
  return {
    error_type: "INTERNAL_ERROR",
    message: "The server failed while handling this call; the failure was logged",
    retryable: true,
    hint: "Try again; if it keeps failing, report it with the time of the call",
  };
}

/**
 * The error contract as a tool result: a text block that says what went wrong and what to do,
 * then the payload as JSON. No `structuredContent`: it would have to match the success schema.
 */
export function errorResult(payload: ErrorPayload): CallToolResult {
  const lines = [`Error (${payload.error_type}): ${payload.message}`];
  if (payload.retry_after_s !== undefined) lines.push(`Retry after: ${payload.retry_after_s} s`);
  if (payload.hint) lines.push(`Next step: ${payload.hint}`);
  return {
    isError: true,
    content: [
      { type: "text", text: lines.join("\n") },
      { type: "text", text: JSON.stringify(payload) },
    ],
    _meta: { "opendata-mcp/error": payload },
  };
}
