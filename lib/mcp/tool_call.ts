// One tool call, from the raw arguments to the `CallToolResult`: validation, the handler under
// the call's deadline, the error contract, the size limit, next calls, provenance and the log line.
// Both `tools/call` (createServer in server.ts) and the CLI's `call` run tools through callTool().
import { systemClock } from "../clock.ts";
import { ToolError } from "../errors.ts";
import type { ErrorPayload } from "../errors.ts";
import { requestScope } from "../http/request_scope.ts";
import { metrics } from "../metrics/mod.ts";
import { tracing } from "../metrics/tracing.ts";
import type { ToolCallNote, TraceCarrier } from "../metrics/tracing.ts";
import { ResponseCache } from "../http/cache.ts";
import {
  buildProvenance,
  CITATION_TTL_MS,
  newRecord,
  provenanceReserve,
  withProvenance,
} from "../output/provenance.ts";
import type { CitationStore } from "../output/provenance.ts";
import { boundStructured, clampText, requiredNames } from "./shaping.ts";
import {
  nextCallsText,
  READ_TOOL,
  routeCall,
  SEARCH_TOOL_NAME,
  takesNextCalls,
  widening,
} from "./next_calls.ts";
import type { ResultFiles } from "../output/exports.ts";
import type { McpExtra, NextCall, ToolCallContext, ToolDefinition } from "./provider.ts";
import { loadedTool } from "./lazy.ts";
import { isInputRequiredResult } from "./sdk.ts";
import type { CallToolResult, InputRequiredResult, Tool } from "./sdk.ts";
import type { CallToolOptions, CreateServerOptions } from "./server_options.ts";
import { DEFAULT_CALL_TIMEOUT_MS } from "./server_options.ts";
import { describeTool, servedInput, takesProvenance } from "./tool_schemas.ts";
import { applyAliases, errorResult, toPayload, validationError } from "./call_errors.ts";

/** Result files where none are configured (the CLI's `call`): saving is refused with the fix. */
export const NO_FILES: ResultFiles = {
  save: () =>
    Promise.reject(
      new ToolError("CONFIGURATION_ERROR", "This server keeps no result files here", {
        hint: 'Call the tool without output: "file", or through the server (stdio or HTTP)',
      }),
    ),
};

/** Citations of servers made without a store (tests, the CLI's `call`): in process, 4 MiB. */
let localCitations: CitationStore | undefined;

export function citationsOf(options: CreateServerOptions): CitationStore {
  if (options.citations) return options.citations;
  localCitations ??= {
    store: new ResponseCache(4 * 1024 * 1024),
    ttlMs: CITATION_TTL_MS,
    now: () => Date.now(),
  };
  return localCitations;
}

/** Per tool, the property names its output schema requires: never dropped to fit the limit. */
const requiredCache = new WeakMap<object, ReadonlySet<string>>();

// deno-lint-ignore no-explicit-any
function requiredOf(tool: ToolDefinition<any, any>): ReadonlySet<string> {
  let names = requiredCache.get(tool);
  if (!names) {
    names = requiredNames(describeTool(tool).outputSchema);
    requiredCache.set(tool, names);
  }
  return names;
}

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

async function runToolCall(
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  rawArgs: unknown,
  extra: McpExtra,
  options: CallToolOptions,
  note?: ToolCallNote,
): Promise<CallToolResult | InputRequiredResult> {
  const started = performance.now();
  const headerId = extra.http?.req?.headers.get("x-request-id");
  const requestId = headerId ?? crypto.randomUUID();
  if (note) note.requestId = requestId;
  const logger = options.logger.child({ request_id: requestId, tool_name: listed.name });
  const done = (result: CallToolResult, payload?: ErrorPayload): CallToolResult => {
    const duration = performance.now() - started;
    const status = result.isError ? "error" : "ok";
    const fields: Record<string, unknown> = { duration_ms: Math.round(duration), status };
    if (payload) fields["error_type"] = payload.error_type;
    if (payload?.status) fields["upstream_status"] = payload.status;
    logger.info("tool call", fields);
    if (metrics) {
      metrics.toolCalls.inc(1, listed.name, status, payload?.error_type ?? "");
      metrics.toolDuration.observe(duration / 1000, listed.name, status);
    }
    if (note) {
      note.status = status;
      if (payload) note.errorType = payload.error_type;
    }
    return result;
  };

  // A tool listed from the generated listings runs its provider's own definition, loaded now
  // if this is the provider's first use.
  // deno-lint-ignore no-explicit-any
  let tool: ToolDefinition<any, any>;
  try {
    tool = await loadedTool(listed);
  } catch (e) {
    const payload = toPayload(e, extra.mcpReq.signal);
    const cause = e instanceof Error && e.cause !== undefined ? e.cause : e;
    logger.error("provider not loaded", { error: cause instanceof Error ? cause.message : String(cause) });
    return done(errorResult(payload), payload);
  }
  const served = servedInput(tool);
  const inputSchema = describeTool(listed).inputSchema;
  const aliased = applyAliases(rawArgs, inputSchema);
  const parsed = served.schema.safeParse(withoutNullOptionals(aliased.args, inputSchema));
  if (!parsed.success) {
    const err = validationError(parsed.error, aliased.args, inputSchema).toPayload();
    const payload = withNextCalls(err, [{
      tool: DESCRIBE_TOOL_NAME,
      arguments: { tool: listed.name },
      for: "its arguments",
    }], options);
    return done(errorResult(payload), payload);
  }
  const progressToken = extra.mcpReq._meta?.progressToken;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + callTimeoutMs;
  const expired = new AbortController();
  const timer = setTimeout(
    () => expired.abort(new DOMException("The call reached its deadline", "TimeoutError")),
    callTimeoutMs,
  );
  const signal = AbortSignal.any([extra.mcpReq.signal, expired.signal]);
  const seal = options.requestState;
  // Tools whose answers may carry a provenance (not those with a closed or core-only schema).
  const cites = takesProvenance(describeTool(listed).outputSchema);
  const context: ToolCallContext = {
    signal,
    logger,
    requestId,
    // The answer's provenance (added by the core below) takes the last part of the limit.
    limits: {
      characterLimit: options.characterLimit - (cites ? provenanceReserve(options.characterLimit) : 0),
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
  try {
    let args = parsed.data as Record<string, unknown>;
    let fresh = false;
    if (served.addsFresh) {
      const { fresh: wanted, ...rest } = args;
      fresh = wanted === true;
      args = rest;
    }
    const record = newRecord();
    const output = await requestScope.run(
      {
        fresh,
        deadline,
        requestId,
        record,
        ...(options.client === undefined ? {} : { client: options.client }),
      },
      () => raceDeadline(tool.handler(args, context), expired.signal),
    );
    if (isInputRequiredResult(output)) return output;
    const sent = typeof aliased.args === "object" && aliased.args !== null
      ? aliased.args as Record<string, unknown>
      : {};
    const wanted = [...(output.next ?? [])];
    // A file the answer wrote is read by a tool call too, for clients without resources/read.
    if (options.callable?.has(READ_TOOL)) {
      for (const block of output.content ?? []) {
        if (block.type === "resource_link" && !wanted.some((c) => c.tool === READ_TOOL)) {
          wanted.push({ tool: READ_TOOL, arguments: { uri: block.uri }, for: "read the file" });
        }
      }
    }
    // An empty answer of a search by words is never a dead end: where the provider named nothing,
    // the same search with fewer words, without its filters, and opendata_search over every source.
    if (wanted.length === 0) {
      const reach = options.served === undefined || options.served.has(SEARCH_TOOL_NAME);
      const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required as string[] : []);
      wanted.push(
        ...widening(listed.name, sent, output.structured, reach ? SEARCH_TOOL_NAME : undefined, required),
      );
    }
    // A paged answer's text already says how to go on ("call again with offset=..."): its
    // continuation goes to structured content only, so the text says it once.
    const more = wanted.some((c) => c.tool === listed.name)
      ? []
      : continuation(listed, sent, output.structured);
    const everything = options.served
      ? undefined
      : new Set([listed.name, ...wanted.map((c) => c.tool), ...more.map((c) => c.tool)]);
    const routeAll = (calls: NextCall[]) => calls.map((c) => routeCall(c, options.served ?? everything!));
    const shownNext = routeAll(wanted);
    const next = [...shownNext, ...routeAll(more)];
    // The provider fitted its text to the limit: the next calls and the alias notice are added
    // only where they fit, never by cutting it (structured content carries the next calls anyway,
    // and a cut answer's text already says how to continue).
    let body = clampText(output.text, options.characterLimit);
    // Where the data came from (issue 26): one line in the text, an object in structured content.
    const provenance = output.replaceContent || !cites
      ? undefined
      : await buildProvenance(record, citationsOf(options));
    // The provenance line closing `body` (none in a JSON text): kept whole below.
    let line = "";
    if (provenance) {
      const cited = withProvenance(
        output.text,
        output.structured as Record<string, unknown> | undefined,
        provenance,
        options.characterLimit,
        clampText,
      );
      body = cited.text;
      line = cited.line ?? "";
      if (cited.structured) output.structured = cited.structured;
    }
    // A JSON text block is the structured content itself (response_format "json"): nothing is
    // added to it, so it stays parseable and equal to structuredContent.
    const jsonText = body.trimStart().startsWith("{");
    const tail = shownNext.length && !jsonText ? `\n\n${nextCallsText(shownNext)}` : "";
    const head = aliased.notices.length && !jsonText ? `(${aliased.notices.join("; ")})\n` : "";
    const room = options.characterLimit - body.length;
    const shownHead = head.length + tail.length <= room ? head : "";
    const shownTail = head.length + tail.length <= room || tail.length <= room ? tail : "";
    const text = `${shownHead}${body}${shownTail}`;
    const content: CallToolResult["content"] = output.replaceContent
      ? [...(output.content ?? [])]
      : [{ type: "text", text }, ...(output.content ?? [])];
    const result: CallToolResult = { content };
    let structured = output.structured as Record<string, unknown> | undefined;
    if (
      structured !== undefined && next.length && !jsonText &&
      takesNextCalls(describeTool(listed).outputSchema)
    ) {
      // Only where it fits: the provider fitted its structured content to the limit, and a cut
      // to make room would shorten its data.
      const withNext = { ...structured, next_calls: next };
      if (JSON.stringify(withNext).length <= options.characterLimit) structured = withNext;
    } else if (
      structured !== undefined && next.length && jsonText && content[0]?.type === "text" &&
      takesNextCalls(describeTool(listed).outputSchema)
    ) {
      // A JSON text that is the structured content gets the next calls inside it, on one line
      // before its closing brace, and the structured content the same (where both fit): a JSON
      // answer names what to call next too (e.g. opendata_read for a file it wrote).
      const first = content[0];
      const json = sameJson(first.text, structured)
        ? `${first.text.trimEnd().slice(0, -1).trimEnd()},\n  "next_calls": ${JSON.stringify(next)}\n}`
        : undefined;
      const withNext = { ...structured, next_calls: next };
      if (
        json !== undefined && json.length <= options.characterLimit &&
        JSON.stringify(withNext).length <= options.characterLimit
      ) {
        first.text = json;
        structured = withNext;
      }
    }
    if (structured !== undefined) {
      let bounded = boundStructured(
        structured,
        options.characterLimit,
        requiredOf(listed),
      );
      const note = `\n\n[structuredContent was shortened to fit the ${options.characterLimit}-character ` +
        "limit: long texts end with …, long lists lost their last items and large maps their last entries. " +
        "Ask for less per call (a smaller limit, an offset, or file output where the tool offers it) to get " +
        "every field whole.]";
      const first = content[0];
      if (bounded.cut && jsonText && first?.type === "text") {
        // A JSON text stays the structured content itself, as shortened, with the note in a block
        // of its own: both within the limit (the structured content gives up the note's room).
        bounded = boundStructured(structured, options.characterLimit - note.length, requiredOf(listed));
        const pretty = JSON.stringify(bounded.value, null, 2);
        const room = options.characterLimit - note.length;
        first.text = pretty.length <= room ? pretty : JSON.stringify(bounded.value);
        content.splice(1, 0, { type: "text", text: note.trim() });
      }
      result.structuredContent = bounded.value;
      if (bounded.cut) {
        logger.warn("structured content cut to the character limit", { limit: options.characterLimit });
        if (first?.type === "text" && !jsonText) {
          // The text may already fill the limit: the text before the provenance line makes room
          // (the next calls go first where it cannot), so the note, the line and the next calls
          // are never cut mid-line.
          const ending = (withTail: boolean) => `${line}${withTail ? shownTail : ""}`;
          const keepTail = options.characterLimit - note.length - ending(true).length >= MIN_TEXT_ROOM;
          const end = ending(keepTail);
          const start = first.text.slice(0, first.text.length - ending(true).length);
          first.text = `${
            clampText(start, Math.max(0, options.characterLimit - note.length - end.length))
          }${note}${end}`;
        }
      }
    }
    return done(result);
  } catch (e) {
    const payload = expired.signal.aborted && !extra.mcpReq.signal.aborted
      ? deadlinePayload(callTimeoutMs)
      : toPayload(e, extra.mcpReq.signal);
    if (payload.error_type === "INTERNAL_ERROR") {
      logger.error("tool failed unexpectedly", { error: e instanceof Error ? e.message : String(e) });
    }
    const sent = typeof aliased.args === "object" && aliased.args !== null
      ? aliased.args as Record<string, unknown>
      : {};
    const retry = payload.retryable && payload.error_type !== "CANCELLED"
      ? [{
        tool: listed.name,
        arguments: sent,
        for: payload.retry_after_s ? `retry after ${payload.retry_after_s} s` : "retry",
      }]
      : [];
    const routed = withNextCalls(payload, retry, options);
    return done(errorResult(routed), routed);
  } finally {
    clearTimeout(timer);
  }
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

/** Whether `text` is `value` as JSON (an object with at least one entry, nothing else around it). */
function sameJson(text: string, value: Record<string, unknown>): boolean {
  try {
    const parsed = JSON.parse(text);
    return Object.keys(value).length > 0 && JSON.stringify(parsed) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** Fewest characters of an answer's own text kept when a note and its closing lines must fit too. */
const MIN_TEXT_ROOM = 200;

/** The tool that describes any tool's arguments (tools/describe.ts), named after a validation error. */
const DESCRIBE_TOOL_NAME = "opendata_describe";

/** `payload` with its own next calls and `extra` ones, routed for the caller's surface. */
function withNextCalls(payload: ErrorPayload, extra: NextCall[], options: CallToolOptions): ErrorPayload {
  const calls = [...(payload.next_calls ?? []), ...extra].slice(0, 3);
  if (calls.length === 0) return payload;
  const served = options.served ?? new Set(calls.map((c) => c.tool));
  return { ...payload, next_calls: calls.map((c) => routeCall(c, new Set([...served, DESCRIBE_TOOL_NAME]))) };
}

/**
 * The call that continues a paged answer, when the answer says there is more (`has_more` with
 * `next_offset`, or `next_cursor`) and the tool takes `offset` or `cursor`: the same call with
 * the next offset or cursor. Any tool that pages gets it, without saying it itself.
 */
function continuation(
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  args: Record<string, unknown>,
  structured: unknown,
): NextCall[] {
  if (typeof structured !== "object" || structured === null) return [];
  const s = structured as Record<string, unknown>;
  const takes = (describeTool(tool).inputSchema.properties ?? {}) as Record<string, unknown>;
  if (typeof s["next_cursor"] === "string" && s["next_cursor"] && "cursor" in takes) {
    return [{ tool: tool.name, arguments: { ...args, cursor: s["next_cursor"] }, for: "more (cursor)" }];
  }
  if (s["has_more"] === true && typeof s["next_offset"] === "number" && "offset" in takes) {
    return [{ tool: tool.name, arguments: { ...args, offset: s["next_offset"] }, for: "next page" }];
  }
  return [];
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
