import { z } from "zod";
import { systemClock } from "../clock.ts";
import type { Clock } from "../clock.ts";
import { ToolError } from "../errors.ts";
import type { ErrorPayload } from "../errors.ts";
import type { Logger } from "../log.ts";
import { SERVER_NAME, USER_AGENT, VERSION } from "../version.ts";
import { requestScope } from "../http/request_scope.ts";
import { metrics } from "../metrics/mod.ts";
import { tracing } from "../metrics/tracing.ts";
import type { ToolCallNote, TraceCarrier } from "../metrics/tracing.ts";
import { ResponseCache } from "../http/cache.ts";
import {
  buildProvenance,
  CITATION_TTL_MS,
  citationTemplate,
  newRecord,
  provenanceReserve,
  withProvenance,
} from "../output/provenance.ts";
import type { CitationStore } from "../output/provenance.ts";
import { boundStructured, clampText, requiredNames } from "./output.ts";
import { CALL_TOOL, callInput, callTarget } from "./core_tools.ts";
import { didYouMean, nextCallsText, READ_TOOL, routeCall, takesNextCalls } from "./next_calls.ts";
import type { ResultFiles } from "../output/exports.ts";
import type { ExportStore } from "../output/deferred_exports.ts";
import type { McpExtra, NextCall, Provider, ToolCallContext, ToolDefinition } from "./provider.ts";
import { listedTool, loadedTool } from "./lazy.ts";
import {
  completable,
  isInputRequiredResult,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
} from "./sdk.ts";
import type { CacheHint, CallToolResult, InputRequiredResult, Tool } from "./sdk.ts";
import {
  rendersViews,
  requestCapabilities,
  VIEW_META_KEY,
  VIEW_MIME,
  viewResources,
  viewUri,
  withViewMeta,
} from "./views/mod.ts";
import type { ViewId, ViewOptions } from "./views/mod.ts";
import { CHART_TOOL, chartCalls, chartInput, chartResult, chartTool } from "./views/chart.ts";
import type { ChartPart } from "./views/chart.ts";

/** Options for {@linkcode createServer}. */
export interface CreateServerOptions {
  logger: Logger;
  /** Most characters in a result's text block, and in its serialized `structuredContent`. */
  characterLimit: number;
  name?: string;
  version?: string;
  /** Text sent with `initialize` / `server/discover` to orient the model. */
  instructions?: string;
  /**
   * Every tool call answers within this many milliseconds (default 45,000, under the ~60 s
   * request timeout of common clients); upstream requests the call makes end by then too.
   */
  callTimeoutMs?: number;
  /** The clock upstream deadlines are measured on (the HTTP runtime's); default the system clock. */
  clock?: Clock;
  /**
   * Seals and opens the `requestState` of multi round-trip calls (2026-07-28), with a key every
   * replica shares, so any replica can continue a call another one started.
   */
  requestState?: RequestStateSeal;
  /**
   * Who is calling, for work that must stay theirs (jobs, projects): the HTTP session or auth
   * principal. Absent over stdio, where one user owns everything.
   */
  owner?: string;
  /** The client the calls count against for per-client limits (see `ToolCallContext.client`). */
  client?: string;
  /** Where `output: "file"` results go; its resource template is served too. Absent: refused. */
  exports?: ExportStore;
  /** The User-Agent upstream requests carry, named in citations so a replay sends the same. */
  userAgent?: string;
  /** Where answers' citations are kept (shared by replicas with Redis); default: in process. */
  citations?: CitationStore;
  /**
   * Tools callable beyond those listed (the other toolsets of the enabled providers), by name,
   * with their provider's id: `tools/call` and `opendata_call` reach them.
   */
  // deno-lint-ignore no-explicit-any
  callable?: ReadonlyMap<string, { tool: ToolDefinition<any, any>; provider: string }>;
  /**
   * How the interactive views (MCP Apps) are built; served to clients that advertise the
   * extension, for the tools that name a view. Absent: views without map tiles.
   */
  views?: ViewOptions;
}

/** What {@linkcode callTool} needs beyond the server's options: the call's file store. */
export interface CallToolOptions extends CreateServerOptions {
  /** The result files of the tool's provider, as this caller writes them. */
  files?: ResultFiles;
  /**
   * The tools listed on the caller's surface: an answer's next calls to other tools go through
   * opendata_call. Absent: every tool counts as listed.
   */
  served?: ReadonlySet<string>;
}

/** Result files where none are configured (the CLI's `call`): saving is refused with the fix. */
const NO_FILES: ResultFiles = {
  save: () =>
    Promise.reject(
      new ToolError("CONFIGURATION_ERROR", "This server keeps no result files here", {
        hint: 'Call the tool without output: "file", or through the server (stdio or HTTP)',
      }),
    ),
};

/** Integrity protection for `requestState`: `seal` when asking, `open` (throws when forged or expired) on return. */
export interface RequestStateSeal {
  seal(payload: unknown, ctx: McpExtra): Promise<string>;
  open(state: string, ctx: McpExtra): Promise<unknown>;
}

/** The default per-call deadline: under the ~60 s that common MCP clients wait for an answer. */
export const DEFAULT_CALL_TIMEOUT_MS = 45_000;

/**
 * How long clients may reuse a list result (2026-07-28 `ttlMs`). The lists only change when
 * the server restarts with another configuration; `private` because the tool list can depend on
 * the request (toolsets).
 */
const LIST_CACHE: CacheHint = { ttlMs: 5 * 60_000, cacheScope: "private" };

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
  "True: skip the server's cache, ask the source again",
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

/** The MCP `Tool` description of a definition (JSON Schemas derived from its zod schemas). */
// deno-lint-ignore no-explicit-any
export function describeTool(tool: ToolDefinition<any, any>): Tool {
  const cached = schemaCache.get(tool) ?? listedTool(tool);
  if (cached) return cached;
  const described: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema:
      (tool.inputJsonSchema ?? toJsonSchema(servedInput(tool).schema, "input")) as Tool["inputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
  if (tool.output) {
    described.outputSchema = withProvenanceProperty(
      (tool.outputJsonSchema ?? toJsonSchema(tool.output, "output")) as Tool["outputSchema"],
    );
  }
  if (tool.execution) described.execution = tool.execution;
  schemaCache.set(tool, described);
  return described;
}

/** Citations of servers made without a store (tests, the CLI's `call`): in process, 4 MiB. */
let localCitations: CitationStore | undefined;

function citationsOf(options: CreateServerOptions): CitationStore {
  if (options.citations) return options.citations;
  localCitations ??= {
    store: new ResponseCache(4 * 1024 * 1024),
    ttlMs: CITATION_TTL_MS,
    now: () => Date.now(),
  };
  return localCitations;
}

/**
 * The output schema with the optional `provenance` object every data answer may carry (the
 * core adds it, see lib/output/provenance.ts); a closed schema (`additionalProperties: false`)
 * is left alone and its answers carry none.
 */
function withProvenanceProperty(schema: Tool["outputSchema"]): Tool["outputSchema"] {
  if (!schema || (schema as Record<string, unknown>)["additionalProperties"] === false) return schema;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  if ("provenance" in properties) return schema;
  return { ...schema, properties: { ...properties, provenance: { type: "object" } } } as Tool["outputSchema"];
}

/** Whether answers of a tool with this served output schema may carry `provenance`. */
function takesProvenance(schema: Tool["outputSchema"]): boolean {
  return schema === undefined || "provenance" in ((schema.properties ?? {}) as Record<string, unknown>);
}

export function toJsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  // 2020-12 is MCP's default dialect: naming it on every tool would only cost the model tokens.
  delete json["$schema"];
  if (json["type"] !== "object") return { type: "object", ...json };
  return json;
}

/**
 * One MCP server instance (per connection, HTTP session or 2026-07-28 request) over
 * already-created providers. The core knows no provider: everything comes in through
 * `providers`. The same instance serves both protocol eras; the serving entry binds the era.
 */
export function createServer(providers: readonly Provider[], options: CreateServerOptions): McpServer {
  const tools = collectTools(providers);
  // Listed tools, and every other tool of the enabled providers: a client that listed another
  // toolset selection earlier (toolsets may differ per HTTP request) can still call what it saw.
  // deno-lint-ignore no-explicit-any
  const callable = new Map<string, { tool: ToolDefinition<any, any>; provider: string }>(
    options.callable ?? [],
  );
  for (const p of providers) for (const t of p.tools) callable.set(t.name, { tool: t, provider: p.id });
  const byName = new Map([...callable].map(([name, c]) => [name, c.tool]));
  const served = new Set(tools.map((t) => t.name));
  // Tools left out as configured (e.g. without an API key): calling one says how to enable it.
  const unavailable = providers.flatMap((p) => p.unavailable ?? []);
  const seal = options.requestState;
  const server = new McpServer(
    { name: options.name ?? SERVER_NAME, version: options.version ?? VERSION },
    {
      capabilities: { logging: {}, tools: { listChanged: false } },
      ...(options.instructions ? { instructions: options.instructions } : {}),
      cacheHints: {
        "tools/list": LIST_CACHE,
        "prompts/list": LIST_CACHE,
        "resources/list": { ttlMs: 0, cacheScope: "private" },
        "resources/templates/list": LIST_CACHE,
        "server/discover": LIST_CACHE,
      },
      ...(seal ? { requestState: { verify: (state: string, ctx: McpExtra) => seal.open(state, ctx) } } : {}),
    },
  );

  // Whether this request's client renders views (MCP Apps): only then do tools name their view
  // and results carry view models; every other client gets the same bytes as without views.
  const viewsFor = (ctx: unknown): boolean =>
    rendersViews(requestCapabilities(ctx, server.server.getClientCapabilities()));

  // Tools whose view is the series chart: opendata_chart puts several of their calls on one chart.
  const seriesTools = new Set(
    [...callable.values()].filter((c) => c.tool.view?.id === "series").map((c) => c.tool.name),
  );

  // Listed in registration order, the same on every call: clients may cache the list.
  server.server.setRequestHandler("tools/list", (_request, ctx) => {
    if (!viewsFor(ctx)) return { tools: tools.map(describeTool) };
    const listed = tools.map((t) => t.view ? withViewMeta(describeTool(t), t.view.id) : describeTool(t));
    if (seriesTools.size) listed.push(chartTool([...seriesTools], viewUri("series")));
    return { tools: listed };
  });
  server.server.setRequestHandler("tools/call", async (request, ctx) => {
    if (request.params.name === CHART_TOOL && seriesTools.size && viewsFor(ctx)) {
      return await chart(request.params.arguments ?? {}, ctx);
    }
    let tool = byName.get(request.params.name);
    if (!tool) {
      const left = unavailable.find((u) => u.tools.includes(request.params.name));
      if (left) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Tool "${request.params.name}" is not served: ${left.reason}`,
        );
      }
      const names = tools.map((t) => t.name);
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}". Call tools/list to see the ${names.length} tools served${
          names.length ? `, e.g. ${names.slice(0, 5).map((n) => `"${n}"`).join(", ")}` : ""
        }`,
      );
    }
    let args: unknown = request.params.arguments ?? {};
    if (tool.name === CALL_TOOL) {
      // opendata_call: the target runs exactly as if called directly (its own validation, files,
      // deadline and log line), and its result goes back unchanged.
      const parsed = servedInput(tool).schema.safeParse(args);
      if (!parsed.success) return errorResult(validationError(parsed.error, args).toPayload());
      try {
        const target = callTarget(parsed.data as z.output<typeof callInput>, byName, unavailable);
        tool = target.tool;
        args = target.arguments;
      } catch (e) {
        if (e instanceof ToolError) return errorResult(e.toPayload());
        throw e;
      }
    }
    const provider = callable.get(tool.name)!.provider;
    const files = options.exports?.forCaller(provider, options.owner, options.client) ?? NO_FILES;
    const result = await callTool(tool, args, ctx, { ...options, files, served });
    if (isInputRequiredResult(result)) return result;
    const projected = server.server.projectCallToolResult(result, describeTool(tool).outputSchema);
    if (tool.view && request.params.name !== CALL_TOOL && viewsFor(ctx)) {
      await addViewModel(projected, tool, args);
    }
    return projected;
  });

  /**
   * opendata_chart: each call run as tools/call runs it, all at once (so the chart answers within
   * one call's deadline), the series merged on one chart.
   */
  const chart = async (rawArgs: unknown, ctx: McpExtra): Promise<CallToolResult> => {
    const parsed = chartInput().safeParse(rawArgs);
    if (!parsed.success) return errorResult(validationError(parsed.error, rawArgs).toPayload());
    let targets;
    try {
      targets = chartCalls(parsed.data, seriesTools).map((c) =>
        callTarget({ tool: c.tool, arguments: c.arguments }, byName, unavailable)
      );
    } catch (e) {
      if (e instanceof ToolError) return errorResult(e.toPayload());
      throw e;
    }
    const parts = await Promise.all(targets.map(async (target): Promise<ChartPart> => {
      const provider = callable.get(target.tool.name)!.provider;
      const files = options.exports?.forCaller(provider, options.owner, options.client) ?? NO_FILES;
      const answer = await callTool(target.tool, target.arguments, ctx, { ...options, files });
      const result = isInputRequiredResult(answer)
        ? errorResult(
          new ToolError("VALIDATION_ERROR", `${target.tool.name} asks for input: call it alone`).toPayload(),
        )
        : server.server.projectCallToolResult(answer, describeTool(target.tool).outputSchema);
      await addViewModel(result, target.tool, target.arguments);
      return { tool: target.tool.name, arguments: target.arguments as Record<string, unknown>, result };
    }));
    return chartResult(parts, options.characterLimit);
  };

  // Resource and prompt handlers learn who calls the way tools do (jobs and files are theirs).
  const withOwner = (ctx: McpExtra): McpExtra =>
    options.owner === undefined ? ctx : { ...ctx, owner: options.owner };
  const core: Provider[] = [{
    id: "core",
    tools: [],
    resourceTemplates: [
      // A server without tools makes no answers to cite.
      ...(tools.length ? [citationTemplate(options.userAgent ?? USER_AGENT, citationsOf(options))] : []),
      ...(options.exports ? [options.exports.resourceTemplate()] : []),
    ],
  }];
  for (const provider of [...providers, ...core]) {
    for (const resource of provider.resources ?? []) {
      server.registerResource(
        resource.name,
        resource.uri,
        {
          ...(resource.title ? { title: resource.title } : {}),
          description: resource.description,
          mimeType: resource.mimeType,
        },
        (uri, ctx) => resource.read(uri, withOwner(ctx)),
      );
    }
    for (const template of provider.resourceTemplates ?? []) {
      const list = template.list;
      server.registerResource(
        template.name,
        new ResourceTemplate(template.uriTemplate, {
          list: list
            ? async (ctx) => ({
              resources: (await list(withOwner(ctx))).map((r) => ({ mimeType: template.mimeType, ...r })),
            })
            : undefined,
          ...(template.complete ? { complete: template.complete } : {}),
        }),
        {
          ...(template.title ? { title: template.title } : {}),
          description: template.description,
          mimeType: template.mimeType,
        },
        (uri, variables, ctx) => template.read(uri, variables, withOwner(ctx)),
      );
    }
    for (const prompt of provider.prompts ?? []) {
      const shape: Record<string, z.ZodType<string | undefined>> = {};
      for (const arg of prompt.arguments) {
        const complete = arg.complete;
        const field = z.string().describe(arg.description);
        const marked = complete
          ? completable(field, (value: unknown) => complete(typeof value === "string" ? value : ""))
          : field;
        shape[arg.name] = arg.required ? marked : marked.optional();
      }
      server.registerPrompt(
        prompt.name,
        {
          ...(prompt.title ? { title: prompt.title } : {}),
          description: prompt.description,
          argsSchema: z.object(shape),
        },
        (args: Record<string, string | undefined>, ctx: McpExtra) => {
          const clean: Record<string, string> = {};
          for (const [k, v] of Object.entries(args)) if (v !== undefined) clean[k] = v;
          return prompt.render(clean, withOwner(ctx));
        },
      );
    }
  }
  // The SDK checks SEP-2243 `Mcp-Param-*` headers against the `x-mcp-header` declarations of
  // tools registered with registerTool(); this server lists its own tools, so it hands the SDK
  // the schema it lists. An internal hook: tests/mcp/http/modern_protocol_test.ts pins it.
  (server as unknown as { toolInputSchemaJson: (name: string) => unknown }).toolInputSchemaJson = (name) => {
    const tool = byName.get(name);
    return tool ? describeTool(tool).inputSchema : undefined;
  };
  registerViews(server, [...callable.values()].map((c) => c.tool), options.views, viewsFor);
  registerSubscriptions(server, providers);
  // Prompts and resources are registered once, before the server connects, and never change, so
  // no list_changed notification ever comes: say so, as for tools (the SDK defaults to `true`).
  const capabilities = server.server.getCapabilities();
  if (capabilities.prompts) server.server.registerCapabilities({ prompts: { listChanged: false } });
  if (capabilities.resources) server.server.registerCapabilities({ resources: { listChanged: false } });
  answerMalformedParamsAsInvalidParams(server);
  return server;
}

type RequestHandler = (request: unknown, ctx: unknown) => Promise<unknown>;

/**
 * Serves the views the tools name as `ui://` resources, and keeps them out of `resources/list`
 * for clients that do not render views (the spec lets a server leave UI-only resources out of
 * the list), so that list stays as it was for them.
 */
function registerViews(
  server: McpServer,
  // deno-lint-ignore no-explicit-any
  tools: readonly ToolDefinition<any, any>[],
  options: ViewOptions | undefined,
  viewsFor: (ctx: unknown) => boolean,
): void {
  const ids = new Set<ViewId>(tools.flatMap((t) => t.view ? [t.view.id] : []));
  if (ids.size === 0) return;
  const views = viewResources(ids, options ?? { tilesUrl: null });
  for (const view of views) {
    server.registerResource(
      view.name,
      view.uri,
      { title: view.title, description: view.description, mimeType: VIEW_MIME, _meta: view.meta },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: VIEW_MIME, text: view.html(), _meta: view.meta }] }),
    );
  }
  const handlers = (server.server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  const list = handlers.get("resources/list") as RequestHandler | undefined;
  if (!list) return;
  const uris = new Set(views.map((v) => v.uri));
  handlers.set("resources/list", async (request: unknown, ctx: unknown) => {
    const result = await list(request, ctx) as { resources: { uri: string }[] };
    return viewsFor(ctx)
      ? result
      : { ...result, resources: result.resources.filter((r) => !uris.has(r.uri)) };
  });
}

/**
 * Adds the view model of a successful result to its `_meta`, with the tool to call back for
 * more (the view pages through the same tool, through the host).
 */
async function addViewModel(
  result: CallToolResult,
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  args: unknown,
): Promise<void> {
  if (result.isError || result.structuredContent === undefined) return;
  const tool = await loadedTool(listed).catch(() => undefined);
  const parsed = tool?.view?.model ? servedInput(tool).schema.safeParse(args ?? {}) : undefined;
  if (!tool?.view?.model || !parsed?.success) return;
  let model;
  try {
    model = tool.view.model(result.structuredContent, parsed.data);
  } catch {
    // A result the view cannot draw is still a whole result: the text and structuredContent stand.
    return;
  }
  if (model) result._meta = { ...result._meta, [VIEW_META_KEY]: { ...model, tool: tool.name } };
}

/**
 * Makes every method answer params that do not fit its schema with -32602 Invalid params naming
 * the field. The SDK checks a request's params inside its handler wrapper and throws a plain
 * Error whose message is the issue list, which it then answers as -32603 Internal error. The
 * handler map is not public API: the HTTP JSON-RPC error tests pin this behaviour.
 */
function answerMalformedParamsAsInvalidParams(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers as Map<string, RequestHandler>) {
    handlers.set(method, async (request: unknown, ctx: unknown) => {
      try {
        return await handler(request, ctx);
      } catch (e) {
        const issues = paramIssues(e);
        if (!issues) throw e;
        const detail = issues.map((i) => `"${i.path.map(String).join(".")}": ${i.message}`).join("; ");
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for "${method}": ${detail}`);
      }
    });
  }
}

/** The schema issues of an SDK request-validation failure, when every one concerns `params`. */
function paramIssues(e: unknown): { path: PropertyKey[]; message: string }[] | undefined {
  if (!(e instanceof Error) || "code" in e) return undefined;
  let issues: unknown;
  try {
    issues = JSON.parse(e.message);
  } catch {
    return undefined;
  }
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const ok = issues.every((i) =>
    typeof i === "object" && i !== null && Array.isArray(i.path) && i.path[0] === "params" &&
    typeof i.message === "string"
  );
  return ok ? issues as { path: PropertyKey[]; message: string }[] : undefined;
}

/**
 * Answers `resources/subscribe` and `resources/unsubscribe` (2025 era) for resources marked
 * `subscribable`, remembering this session's subscriptions. Without such resources the
 * capability stays off.
 */
function registerSubscriptions(server: McpServer, providers: readonly Provider[]): void {
  const subscribable = new Set(
    providers.flatMap((p) => (p.resources ?? []).filter((r) => r.subscribable).map((r) => r.uri)),
  );
  if (subscribable.size === 0) return;
  const subscribed = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler("resources/subscribe", (request) => {
    const { uri } = request.params;
    if (!subscribable.has(uri)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Resource "${uri}" does not take subscriptions; subscribable resources: ${
          [...subscribable].map((u) => `"${u}"`).join(", ")
        }`,
      );
    }
    subscribed.add(uri);
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
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

/** The tool that describes any tool's arguments (core_tools.ts), named after a validation error. */
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

/**
 * A VALIDATION_ERROR naming each argument at fault, with what the tool's schema says of it (so an
 * agent that reached the tool through opendata_call, without its inputSchema, can fix the call)
 * and "did you mean" for an unknown argument close to a known one.
 */
export function validationError(error: z.ZodError, input?: unknown, schema?: Tool["inputSchema"]): ToolError {
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const known = Object.keys(properties);
  const shown = new Set<string>();
  const issues = error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    let message = issue.message;
    if (issue.code === "unrecognized_keys") {
      const guesses = issue.keys.map((k) => didYouMean(k, known)).filter((g): g is string => !!g);
      for (const g of guesses) shown.add(g);
      return `Unknown argument ${issue.keys.map((k) => `"${k}"`).join(", ")}${path ? ` in "${path}"` : ""}${
        guesses.length ? `: did you mean ${guesses.map((g) => `"${g}"`).join(", ")}?` : ""
      }${known.length && !guesses.length ? ` (accepted: ${known.join(", ")})` : ""}`;
    }
    if (typeof issue.path[0] === "string") shown.add(issue.path[0]);
    if ((issue.code === "invalid_type" || issue.code === "invalid_value") && isMissing(input, issue.path)) {
      message = issue.code === "invalid_value" ? `required: ${issue.message}` : "required";
    }
    return path ? `"${path}": ${message}` : message;
  });
  const issue = error.issues[0];
  const first = issue?.code === "unrecognized_keys" && issue.path.length === 0
    ? issue.keys[0]
    : issue?.path[0];
  const parts = [...shown].filter((k) => properties[k]).slice(0, 4)
    .map((k) => `"${k}": ${JSON.stringify(schemaPart(properties[k]!))}`);
  return new ToolError("VALIDATION_ERROR", `Invalid arguments: ${issues.join("; ")}`, {
    ...(first === undefined ? {} : { field: String(first) }),
    hint: parts.length
      ? `Correct the call; the schema says ${parts.join(", ")}`
      : "Correct the named argument(s) and call the tool again",
  });
}

/** A property's schema without the noise an agent does not need to fix a call. */
function schemaPart(property: Record<string, unknown>): Record<string, unknown> {
  const { default: _d, ...rest } = property;
  return rest;
}

/**
 * Common other names for an argument: a call that uses one where the tool takes the other is
 * read as meant, with a notice (`lang` in BOJ, `language` in Wikipedia).
 */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  lang: ["language"],
  language: ["lang"],
  q: ["query", "search_text"],
  query: ["search_text"],
  search_text: ["query"],
  latitude: ["lat"],
  longitude: ["lon"],
  lng: ["lon"],
  radius: ["radius_m"],
  max_results: ["limit"],
};

/** `args` with aliased names renamed to the ones the tool takes, and a notice for each. */
export function applyAliases(
  args: unknown,
  schema: Tool["inputSchema"],
): { args: unknown; notices: string[] } {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { args, notices: [] };
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  const notices: string[] = [];
  for (const key of Object.keys(args)) {
    if (key in properties) continue;
    const target = ALIASES[key]?.find((t) => t in properties && !(t in args));
    if (!target) continue;
    out ??= { ...args as Record<string, unknown> };
    out[target] = out[key];
    delete out[key];
    notices.push(`"${key}" read as "${target}"`);
  }
  return { args: out ?? args, notices };
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
  if (payload.next_calls?.length) lines.push(nextCallsText(payload.next_calls));
  return {
    isError: true,
    content: [
      { type: "text", text: lines.join("\n") },
      { type: "text", text: JSON.stringify(payload) },
    ],
    _meta: { "opendata-mcp/error": payload },
  };
}
