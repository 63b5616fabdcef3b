// One tool call, from the raw arguments to the `CallToolResult`: validation, the handler under
// the call's deadline, the error contract and the log line; tool_result.ts shapes a handler's
// answer (next calls, provenance, the size limit). Both `tools/call` (createServer in server.ts)
// and the CLI's `call` run tools through callTool().
import type { z } from "zod";
import { ToolError } from "../errors.ts";
import type { ErrorPayload } from "../errors.ts";
import { exchangeOf, requestScope } from "../http/request_scope.ts";
import type { CallRecord, ExchangeScope } from "../http/request_scope.ts";
import type { Logger } from "../log.ts";
import { metrics } from "../metrics/mod.ts";
import { tracing } from "../metrics/tracing.ts";
import type { ToolCallNote, TraceCarrier } from "../metrics/tracing.ts";
import { newRecord, provenanceReserve } from "../output/provenance.ts";
import { didYouMean, routeCall } from "./next_calls.ts";
import type { McpExtra, NextCall, ToolCallContext, ToolDefinition, ToolOutput } from "./provider.ts";
import { loadedTool } from "./lazy.ts";
import { isInputRequiredResult, ProtocolError } from "./sdk.ts";
import { isTaskRound } from "./tasks/tool_tasks.ts";
import type { CallToolResult, InputRequiredResult, Tool } from "./sdk.ts";
import type { CallToolOptions } from "./server_options.ts";
import { NO_FILES } from "./server_options.ts";
import { deadlinePayload, raceDeadline, startDeadline } from "./call_deadline.ts";
import type { CallDeadline } from "./call_deadline.ts";
import { describeTool, servedInput, takesProvenance } from "./tool_schemas.ts";
import { toolResult } from "./tool_result.ts";
import { applyAliases, errorResult, toPayload, validationError } from "./call_errors.ts";

/**
 * Runs one tool call: validation, the handler under the call's deadline, the error contract,
 * the size limit and a log line. A handler that asks the client for input returns its
 * `inputRequired(...)` result unchanged.
 */
export function callTool(
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  rawArgs: unknown,
  extra: McpExtra,
  options: CallToolOptions,
): Promise<CallToolResult | InputRequiredResult> {
  if (!tracing) return runToolCall(listed, rawArgs, extra, options);
  const note: ToolCallNote = {};
  return tracing.toolCall(
    listed.name,
    traceCarrier(extra),
    note,
    () => runToolCall(listed, rawArgs, extra, options, note),
  );
}

/**
 * The trace context a tool call joins: `params._meta.traceparent` (SEP-414, every transport),
 * else the HTTP request's `traceparent` header.
 */
function traceCarrier(extra: McpExtra): TraceCarrier {
  const meta = extra.mcpReq._meta as Record<string, unknown> | undefined;
  if (typeof meta?.["traceparent"] === "string") {
    return {
      traceparent: meta["traceparent"],
      tracestate: typeof meta["tracestate"] === "string" ? meta["tracestate"] : undefined,
    };
  }
  const headers = extra.http?.req?.headers;
  return {
    traceparent: headers?.get("traceparent") ?? undefined,
    tracestate: headers?.get("tracestate") ?? undefined,
  };
}

/** callTool's steps, in order; `note` (when tracing) learns the request id, status and error type. */
async function runToolCall(
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  rawArgs: unknown,
  extra: McpExtra,
  options: CallToolOptions,
  note?: ToolCallNote,
): Promise<CallToolResult | InputRequiredResult> {
  const log = openCallLog(listed.name, extra, options, note);
  const loaded = await loadForCall(listed, extra, log.logger);
  if (!loaded.ok) return closeCallLog(log, maskedError(loaded.payload, options), loaded.payload);
  const input = parseInput(loaded.tool, listed, rawArgs, options);
  if (!input.ok) return closeCallLog(log, maskedError(input.payload, options), input.payload);
  const deadline = startDeadline(extra, options);
  // Tools whose answers may carry a provenance (not those with a closed or core-only schema).
  const cites = takesProvenance(describeTool(listed).outputSchema);
  const context = callContext(extra, options, { log, deadline, cites });
  try {
    const record = newRecord();
    const output = await runHandler(loaded.tool, input, context, { deadline, record, options });
    if (isInputRequiredResult(output)) return output;
    // Masked before toolResult cuts anything to the limit: a cut never leaves half a secret.
    const result = await toolResult(options.secrets?.maskDeep(output) ?? output, {
      listed,
      inputSchema: input.inputSchema,
      sent: input.sent,
      notices: input.notices,
      record,
      cites,
      options,
      logger: log.logger,
    });
    return closeCallLog(log, result);
  } catch (e) {
    // A protocol failure of a call running as a task fails the task (a JSON-RPC error), where a
    // plain call reports it in its result.
    if (e instanceof ProtocolError && isTaskRound(extra)) throw e;
    const payload = thrownPayload(e, deadline, extra, log.logger);
    const fixed = fixCall(e, listed.name, input.sent);
    const routed = withNextCalls(
      fixed.length ? { ...payload, next_calls: [...fixed, ...(payload.next_calls ?? [])] } : payload,
      retryCall(payload, listed.name, input.sent),
      options,
    );
    return closeCallLog(log, maskedError(routed, options), routed);
  } finally {
    deadline.cancel();
  }
}

/** The error result of `payload`, every configured secret in it masked (an upstream may echo one). */
function maskedError(payload: ErrorPayload, options: CallToolOptions): CallToolResult {
  return errorResult(options.secrets?.maskDeep(payload) ?? payload);
}

/** One call as its log line sees it: which tool, since when, under which request id. */
interface CallLog {
  toolName: string;
  started: number;
  requestId: string;
  logger: Logger;
  note: ToolCallNote | undefined;
  /** The HTTP request the call came in, whose access line is to carry the call's outcome. */
  exchange: ExchangeScope | undefined;
}

/**
 * Starts the call's clock and names it: the id of the HTTP request it came in, else a new one.
 */
function openCallLog(
  toolName: string,
  extra: McpExtra,
  options: CallToolOptions,
  note: ToolCallNote | undefined,
): CallLog {
  const started = performance.now();
  const exchange = exchangeOf(extra.http?.req);
  const requestId = exchange?.requestId ?? crypto.randomUUID();
  if (note) note.requestId = requestId;
  const logger = options.logger.child({ request_id: requestId, tool_name: toolName });
  return { toolName, started, requestId, logger, note, exchange };
}

/** Ends the call: its one log line, its metrics and its trace note; returns `result`. */
function closeCallLog(log: CallLog, result: CallToolResult, payload?: ErrorPayload): CallToolResult {
  const duration = performance.now() - log.started;
  const status = result.isError ? "error" : "ok";
  const fields: Record<string, unknown> = { duration_ms: Math.round(duration), status };
  if (payload) fields["error_type"] = payload.error_type;
  if (payload?.status) fields["upstream_status"] = payload.status;
  // Over HTTP the request's access line says it all, in one line (lib/mcp/http/_access_log.ts).
  const noted = log.exchange?.noteCall({
    tool_name: log.toolName,
    tool_status: status,
    tool_ms: fields["duration_ms"],
    ...(payload ? { error_type: payload.error_type } : {}),
    ...(payload?.status ? { upstream_status: payload.status } : {}),
  });
  if (!noted) log.logger.info("tool call", fields);
  if (metrics) {
    metrics.toolCalls.inc(1, log.toolName, status, payload?.error_type ?? "");
    metrics.toolDuration.observe(duration / 1000, log.toolName, status);
  }
  if (log.note) {
    log.note.status = status;
    if (payload) log.note.errorType = payload.error_type;
  }
  return result;
}

/** A step that either goes on with a value or ends the call with an error payload. */
type Step<T> = ({ ok: true } & T) | { ok: false; payload: ErrorPayload };

/**
 * The tool the call runs: a tool listed from the generated listings runs its provider's own
 * definition, loaded now if this is the provider's first use.
 */
async function loadForCall(
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  extra: McpExtra,
  logger: Logger,
  // deno-lint-ignore no-explicit-any
): Promise<Step<{ tool: ToolDefinition<any, any> }>> {
  try {
    return { ok: true, tool: await loadedTool(listed) };
  } catch (e) {
    const payload = toPayload(e, extra.mcpReq.signal);
    const cause = e instanceof Error && e.cause !== undefined ? e.cause : e;
    logger.error("provider not loaded", { error: cause instanceof Error ? cause.message : String(cause) });
    return { ok: false, payload };
  }
}

/** A call's arguments, validated. */
interface CallInput {
  /** The listed input schema. */
  inputSchema: Tool["inputSchema"];
  /** The arguments as sent, aliases applied: next calls and retries repeat them. */
  sent: Record<string, unknown>;
  /** Argument names corrected to the schema's. */
  notices: string[];
  /** What the handler gets: the validated arguments without the core's `fresh`. */
  args: Record<string, unknown>;
  /** Whether the caller asked to bypass the response cache. */
  fresh: boolean;
}

/**
 * Validates the arguments against the tool's schema, after correcting aliased names and dropping
 * the `null`s of strict clients; a failure names the field and the call that describes the tool.
 */
function parseInput(
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  rawArgs: unknown,
  options: CallToolOptions,
): Step<CallInput> {
  const served = servedInput(tool);
  const inputSchema = describeTool(listed).inputSchema;
  const aliased = applyAliases(rawArgs, inputSchema);
  const sent = typeof aliased.args === "object" && aliased.args !== null
    ? aliased.args as Record<string, unknown>
    : {};
  const parsed = served.schema.safeParse(withoutNullOptionals(aliased.args, inputSchema));
  if (!parsed.success) {
    const err = validationError(parsed.error, aliased.args, inputSchema).toPayload();
    const payload = withNextCalls(err, [...renamedCall(parsed.error, listed.name, sent, inputSchema), {
      tool: DESCRIBE_TOOL_NAME,
      arguments: { tool: listed.name },
      for: "its arguments",
    }], options);
    return { ok: false, payload };
  }
  let args = parsed.data as Record<string, unknown>;
  let fresh = false;
  if (served.addsFresh) {
    const { fresh: wanted, ...rest } = args;
    fresh = wanted === true;
    args = rest;
  }
  return { ok: true, inputSchema, sent, notices: aliased.notices, args, fresh };
}

/** What the handler gets: the signal, its logger, its share of the limit, progress, state and files. */
function callContext(
  extra: McpExtra,
  options: CallToolOptions,
  call: { log: CallLog; deadline: CallDeadline; cites: boolean },
): ToolCallContext {
  const progressToken = extra.mcpReq._meta?.progressToken;
  const seal = options.requestState;
  return {
    get signal(): AbortSignal {
      return call.deadline.signal;
    },
    logger: call.log.logger,
    requestId: call.log.requestId,
    // The answer's provenance (added by the core after the handler) takes the last part of the limit.
    limits: {
      characterLimit: options.characterLimit - (call.cites ? provenanceReserve(options.characterLimit) : 0),
    },
    async progress(progress, total, message) {
      if (progressToken === undefined) return;
      try {
        await extra.mcpReq.notify({
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
    sealState(payload) {
      if (!seal) return Promise.resolve(JSON.stringify(payload));
      return seal.seal(payload, extra);
    },
    mcp: extra,
    files: options.files ?? NO_FILES,
    ...(options.owner === undefined ? {} : { owner: options.owner }),
    ...(options.client === undefined ? {} : { client: options.client }),
  };
}

/**
 * Runs the handler in the call's request scope (the deadline, `fresh`, the client and the record
 * of upstream requests reach the HTTP client through it); rejects as soon as the deadline falls.
 */
function runHandler(
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  input: CallInput,
  context: ToolCallContext,
  scope: { deadline: CallDeadline; record: CallRecord; options: CallToolOptions },
): Promise<ToolOutput | InputRequiredResult> {
  const { deadline, record, options } = scope;
  return requestScope.run(
    {
      fresh: input.fresh,
      deadline: deadline.at,
      requestId: context.requestId,
      record,
      ...(options.client === undefined ? {} : { client: options.client }),
    },
    () => raceDeadline(tool.handler(input.args, context), deadline),
  );
}

/** The error a handler's failure answers with: the call's own deadline, else what it threw. */
function thrownPayload(e: unknown, deadline: CallDeadline, extra: McpExtra, logger: Logger): ErrorPayload {
  const payload = deadline.due() && !extra.mcpReq.signal.aborted
    ? deadlinePayload(deadline.timeoutMs)
    : toPayload(e, extra.mcpReq.signal);
  if (payload.error_type === "INTERNAL_ERROR") {
    logger.error("tool failed unexpectedly", { error: e instanceof Error ? e.message : String(e) });
  }
  return payload;
}

/**
 * The same call with each unknown argument renamed to the one it was most likely meant to be
 * ("countrys" to "countries"), when every unknown name has such a guess and nothing else is wrong.
 */
function renamedCall(
  error: z.ZodError,
  toolName: string,
  sent: Record<string, unknown>,
  schema: Tool["inputSchema"],
): NextCall[] {
  const known = Object.keys(schema.properties ?? {});
  const unknown = error.issues.flatMap((i) =>
    i.code === "unrecognized_keys" && i.path.length === 0 ? i.keys : []
  );
  if (unknown.length === 0 || error.issues.some((i) => i.code !== "unrecognized_keys")) return [];
  const args = { ...sent };
  for (const key of unknown) {
    const guess = didYouMean(key, known);
    if (!guess || guess in sent) return [];
    args[guess] = args[key];
    delete args[key];
  }
  return [{ tool: toolName, arguments: args, for: "the corrected call" }];
}

/** The same call with the arguments the error says correct it, first of the next calls. */
function fixCall(e: unknown, toolName: string, sent: Record<string, unknown>): NextCall[] {
  if (!(e instanceof ToolError) || !e.fix) return [];
  const args = { ...sent, ...e.fix };
  for (const [k, v] of Object.entries(e.fix)) if (v === undefined) delete args[k];
  return [{ tool: toolName, arguments: args, for: "the corrected call" }];
}

/** The same call again, where the failure says a retry may succeed. */
function retryCall(payload: ErrorPayload, toolName: string, sent: Record<string, unknown>): NextCall[] {
  if (!payload.retryable || payload.error_type === "CANCELLED") return [];
  return [{
    tool: toolName,
    arguments: sent,
    for: payload.retry_after_s ? `retry after ${payload.retry_after_s} s` : "retry",
  }];
}

/**
 * The arguments without `null` for optional properties that do not take `null`: strict clients
 * (OpenAI's strict function calling) must send every property and send `null` for those they
 * leave out. Left out, they get their defaults, as the schema says.
 */
function withoutNullOptionals(args: unknown, schema: Tool["inputSchema"]): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  const required = new Set(schema.required ?? []);
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(args)) {
    if (value !== null || required.has(key) || !(key in properties)) continue;
    const type = properties[key]?.type;
    if (type === "null" || (Array.isArray(type) && type.includes("null"))) continue;
    out ??= { ...args as Record<string, unknown> };
    delete out[key];
  }
  return out ?? args;
}

/** The tool that describes any tool's arguments (tools/describe.ts), named after a validation error. */
const DESCRIBE_TOOL_NAME = "opendata_describe";

/** `payload` with its own next calls and `extra` ones, routed for the caller's surface. */
function withNextCalls(payload: ErrorPayload, extra: NextCall[], options: CallToolOptions): ErrorPayload {
  const calls = [...(payload.next_calls ?? []), ...extra].slice(0, 3);
  if (calls.length === 0) return payload;
  const served = options.served ?? new Set(calls.map((c) => c.tool));
  return { ...payload, next_calls: calls.map((c) => routeCall(c, new Set([...served, DESCRIBE_TOOL_NAME]))) };
}
