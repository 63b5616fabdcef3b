// One MCP server instance over the enabled providers: tools (listed and callable), resources,
// templates, prompts, views and subscriptions, for both protocol eras. A tool call itself runs in
// tool_call.ts; how tools are listed is tool_schemas.ts; the error contract is call_errors.ts;
// resources, prompts and subscriptions are registered by primitives.ts.
import { z } from "zod";
import { type ErrorPayload, ToolError } from "../errors.ts";
import { SERVER_NAME, USER_AGENT, VERSION } from "../version.ts";
import { citationTemplate } from "../output/citations.ts";
import { CALL_TOOL, callTarget } from "./core_tools.ts";
import type { CallInput } from "./core_tools.ts";
import type { McpExtra, Provider, ToolDefinition } from "./provider.ts";
import { loadedTool } from "./lazy.ts";
import { isInputRequiredResult, McpServer, ProtocolError, ProtocolErrorCode } from "./sdk.ts";
import type { CacheHint, CallToolResult, InputRequiredResult, Tool } from "./sdk.ts";
import type { ResultFiles } from "../output/exports.ts";
import {
  rendersViews,
  requestCapabilities,
  ROUTER_VIEW,
  VIEW_META_KEY,
  VIEW_MIME,
  viewResources,
  viewUri,
  withViewMeta,
} from "./views/mod.ts";
import type { ViewId, ViewOptions } from "./views/mod.ts";
import { CHART_TOOL, chartCalls, chartInput, chartResult, chartTool } from "./tools/chart.ts";
import type { ChartPart } from "./tools/chart.ts";
import { registerPrimitives, registerSubscriptions } from "./primitives.ts";
import { citationsOf, NO_FILES } from "./server_options.ts";
import type { CallToolOptions, CreateServerOptions } from "./server_options.ts";
import { describeTool, servedInput } from "./tool_schemas.ts";
import { errorResult, validationError } from "./call_errors.ts";
import { closestNames, routeCall } from "./next_calls.ts";
import { registerTasks, runsAsTask } from "./tasks/wire.ts";
import { servedTools } from "./served_tools.ts";
import type { ServedTools } from "./served_tools.ts";
import { startToolTask } from "./tasks/tool_tasks.ts";
import type { JobFollower } from "./tasks/tool_tasks.ts";

export type { CallToolOptions, CreateServerOptions, RequestStateSeal } from "./server_options.ts";
export { DEFAULT_CALL_TIMEOUT_MS } from "./server_options.ts";
export { collectTools, describeTool, freshField, servedInput, toJsonSchema } from "./tool_schemas.ts";
export { applyAliases, errorResult, validationError } from "./call_errors.ts";

/**
 * Runs one tool call (tool_call.ts). Listing tools needs none of that code, so it is loaded on
 * the first call (docs/ARCHITECTURE.md, "Start-up") and kept: an import per call costs a lookup.
 */
export async function callTool(
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  rawArgs: unknown,
  extra: McpExtra,
  options: CallToolOptions,
): Promise<CallToolResult | InputRequiredResult> {
  return await (toolCalls ??= await import("./tool_call.ts")).callTool(listed, rawArgs, extra, options);
}
let toolCalls: typeof import("./tool_call.ts") | undefined;

/**
 * How long clients may reuse a list result (2026-07-28 `ttlMs`). The lists only change when
 * the server restarts with another configuration; `private` because the tool list can depend on
 * the request (toolsets).
 */
const LIST_CACHE: CacheHint = { ttlMs: 5 * 60_000, cacheScope: "private" };

/**
 * One MCP server instance (per connection, HTTP session or 2026-07-28 request) over
 * already-created providers. The core knows no provider: everything comes in through
 * `providers`. The same instance serves both protocol eras; the serving entry binds the era.
 */
export function createServer(providers: readonly Provider[], options: CreateServerOptions): McpServer {
  const tools = servedTools(providers, options);
  const server = newMcpServer(options);
  // Whether this request's client renders views (MCP Apps): only then do tools name their view
  // and results carry view models; every other client gets the same bytes as without views.
  const viewsFor = (ctx: unknown): boolean =>
    rendersViews(requestCapabilities(ctx, server.server.getClientCapabilities()));
  const scope: ServerScope = { server, tools, options, viewsFor, jobs: tools.jobs };
  server.server.setRequestHandler("tools/list", (_request, ctx) => listTools(scope, ctx));
  server.server.setRequestHandler("tools/call", (request, ctx) => answerToolCall(scope, request.params, ctx));
  if (!options.toolsOnly) {
    registerPrimitives(server, [...providers, coreProvider(tools, options)], {
      owner: options.owner,
      secrets: options.secrets,
    });
  }
  shareInputSchemas(server, tools.byName);
  if (!options.toolsOnly) {
    registerViews(server, tools.viewIds, options.views, viewsFor);
    registerSubscriptions(server, providers);
  }
  declareListsUnchanged(server);
  answerMalformedParamsAsInvalidParams(server);
  if (options.tasks) registerTasks(server, options.tasks, options.owner);
  return server;
}

/** The SDK's server with this server's identity, capabilities, list cache hints and state seal. */
function newMcpServer(options: CreateServerOptions): McpServer {
  const seal = options.requestState;
  return new McpServer(
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
}

/** What the tool handlers of one server instance share. */
interface ServerScope {
  server: McpServer;
  tools: ServedTools;
  options: CreateServerOptions;
  /** Whether this request's client renders views (MCP Apps). */
  viewsFor: (ctx: unknown) => boolean;
  /** The background jobs of the providers that have some, by provider id (tasks follow them). */
  jobs: ReadonlyMap<string, JobFollower>;
}

/**
 * With structured content off, a client that renders no views gets text only: no outputSchema
 * is declared, so none is owed (MCP: a tool with an outputSchema must return structuredContent).
 */
function textOnly(scope: ServerScope, ctx: unknown): boolean {
  return scope.options.structuredContent === false && !scope.viewsFor(ctx);
}

/** `tools/list`: the listed tools, with their views and opendata_chart for clients that render views. */
function listTools(scope: ServerScope, ctx: unknown): { tools: Tool[] } {
  const { listed, seriesTools } = scope.tools;
  if (textOnly(scope, ctx)) {
    return { tools: listed.map(describeTool).map(({ outputSchema: _, ...rest }) => rest) };
  }
  if (!scope.viewsFor(ctx)) return { tools: listed.map(describeTool) };
  // opendata_call reaches every tool, so it names the router view, which shows each result in
  // the view its model is for (the default surface lists little else).
  const routed = scope.tools.viewTools;
  const tools = listed.map((t) =>
    t.view
      ? withViewMeta(describeTool(t), t.view.id)
      : routed && t.name === CALL_TOOL
      ? withViewMeta(describeTool(t), ROUTER_VIEW)
      : describeTool(t)
  );
  if (seriesTools.size) tools.push(chartTool([...seriesTools], viewUri("series")));
  return { tools };
}

/** `tools/call`: the tool named (opendata_call's target in its place), run, its result projected. */
async function answerToolCall(
  scope: ServerScope,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  ctx: McpExtra,
): Promise<CallToolResult | InputRequiredResult> {
  if (params.name === CHART_TOOL && scope.tools.seriesTools.size && scope.viewsFor(ctx)) {
    return await chart(scope, params.arguments ?? {}, ctx);
  }
  const called = calledTool(scope.tools, params.name);
  const target = resolveCall(called, params.arguments ?? {}, scope.tools);
  if ("error" in target) return target.error;
  const { tool, args } = target;
  if (scope.options.tasks && runsAsTask(scope.server, ctx, tool.name, tool.execution?.taskSupport)) {
    const early = tool.inputBeforeTask && !ctx.mcpReq.inputResponses;
    if (!early) {
      return await startToolTask({
        engine: scope.options.tasks,
        name: params.name,
        tool,
        args,
        ctx,
        owner: scope.options.owner,
        client: scope.options.client,
        jobs: scope.jobs.get(scope.tools.callable.get(tool.name)?.provider ?? ""),
        run: (extra, options) => runAndProject(scope, params.name, tool, args, extra, options),
      });
    }
  }
  return await runAndProject(scope, params.name, tool, args, ctx);
}

/** Runs the tool and projects its result as `tools/call` answers it (views, text-only clients). */
async function runAndProject(
  scope: ServerScope,
  name: string,
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  args: unknown,
  ctx: McpExtra,
  extraOptions: Partial<CallToolOptions> = {},
): Promise<CallToolResult | InputRequiredResult> {
  const params = { name };
  const files = filesFor(scope, tool.name);
  const result = await callTool(tool, args, ctx, {
    ...scope.options,
    files,
    served: scope.tools.served,
    ...extraOptions,
  });
  if (isInputRequiredResult(result)) return result;
  const projected = scope.server.server.projectCallToolResult(result, describeTool(tool).outputSchema);
  if (tool.view && scope.viewsFor(ctx)) {
    // Through opendata_call, the view calls back through it too: the target may be unlisted.
    await addViewModel(projected, tool, args, params.name === CALL_TOOL ? CALL_TOOL : undefined);
  }
  if (textOnly(scope, ctx)) delete projected.structuredContent;
  return projected;
}

/** The tool `name` calls; an unknown or unserved name is a protocol error (-32602) that says why. */
// deno-lint-ignore no-explicit-any
function calledTool(tools: ServedTools, name: string): ToolDefinition<any, any> {
  const tool = tools.byName.get(name);
  if (tool) return tool;
  const left = tools.unavailable.find((u) => u.tools.includes(name));
  if (left) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool "${name}" is not served: ${left.reason}`);
  }
  const names = tools.listed.map((t) => t.name);
  const close = closestNames(name, [...tools.byName.keys()]);
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown tool "${name}"${
      close.length ? `; did you mean ${close.map((n) => `"${n}"`).join(" or ")}?` : ""
    }` +
      ` Call tools/list to see the ${names.length} tools served`,
  );
}

/**
 * The tool that runs and its arguments: opendata_call's target runs exactly as if called directly
 * (its own validation, files, deadline and log line), and its result goes back unchanged.
 */
function resolveCall(
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  args: unknown,
  tools: ServedTools,
  // deno-lint-ignore no-explicit-any
): { tool: ToolDefinition<any, any>; args: unknown } | { error: CallToolResult } {
  if (tool.name !== CALL_TOOL) return { tool, args };
  const parsed = servedInput(tool).schema.safeParse(args);
  if (!parsed.success) return { error: errorResult(validationError(parsed.error, args).toPayload()) };
  try {
    const target = callTarget(parsed.data as z.output<CallInput>, tools.byName, tools.unavailable);
    return { tool: target.tool, args: target.arguments };
  } catch (e) {
    if (e instanceof ToolError) return { error: errorResult(routedPayload(e, tools)) };
    throw e;
  }
}

/** The error's payload with its next calls routed for the surface (opendata_call for unlisted tools). */
function routedPayload(e: ToolError, tools: ServedTools): ErrorPayload {
  const payload = e.toPayload();
  if (!payload.next_calls?.length) return payload;
  const served = new Set(tools.listed.map((t) => t.name));
  return { ...payload, next_calls: payload.next_calls.map((c) => routeCall(c, served)) };
}

/** The result files of the tool's provider, as this server's caller writes them. */
function filesFor(scope: ServerScope, toolName: string): ResultFiles {
  const { options } = scope;
  const provider = scope.tools.callable.get(toolName)!.provider;
  return options.exports?.forCaller(provider, options.owner, options.client) ?? NO_FILES;
}

/**
 * opendata_chart: each call run as tools/call runs it, all at once (so the chart answers within
 * one call's deadline), the series merged on one chart.
 */
async function chart(scope: ServerScope, rawArgs: unknown, ctx: McpExtra): Promise<CallToolResult> {
  const parsed = chartInput().safeParse(rawArgs);
  if (!parsed.success) return errorResult(validationError(parsed.error, rawArgs).toPayload());
  let targets;
  try {
    targets = chartCalls(parsed.data, scope.tools.seriesTools).map((c) =>
      callTarget({ tool: c.tool, arguments: c.arguments }, scope.tools.byName, scope.tools.unavailable)
    );
  } catch (e) {
    if (e instanceof ToolError) return errorResult(e.toPayload());
    throw e;
  }
  const parts = await Promise.all(targets.map((target) => chartPart(scope, target, ctx)));
  return chartResult(parts, scope.options.characterLimit);
}

/** One call of a chart, run as tools/call runs it, with its view model. */
async function chartPart(
  scope: ServerScope,
  // deno-lint-ignore no-explicit-any
  target: { tool: ToolDefinition<any, any>; arguments: unknown },
  ctx: McpExtra,
): Promise<ChartPart> {
  const files = filesFor(scope, target.tool.name);
  const answer = await callTool(target.tool, target.arguments, ctx, { ...scope.options, files });
  const result = isInputRequiredResult(answer)
    ? errorResult(
      new ToolError("VALIDATION_ERROR", `${target.tool.name} asks for input: call it alone`).toPayload(),
    )
    : scope.server.server.projectCallToolResult(answer, describeTool(target.tool).outputSchema);
  await addViewModel(result, target.tool, target.arguments);
  return { tool: target.tool.name, arguments: target.arguments as Record<string, unknown>, result };
}

/** The core's resource templates: citations (a server without tools makes no answers to cite) and result files. */
function coreProvider(tools: ServedTools, options: CreateServerOptions): Provider {
  return {
    id: "core",
    tools: [],
    resourceTemplates: [
      ...(tools.listed.length
        ? [citationTemplate(options.userAgent ?? USER_AGENT, citationsOf(options))]
        : []),
      ...(options.exports ? [options.exports.resourceTemplate()] : []),
    ],
  };
}

/**
 * The SDK checks SEP-2243 `Mcp-Param-*` headers against the `x-mcp-header` declarations of
 * tools registered with registerTool(); this server lists its own tools, so it hands the SDK
 * the schema it lists. An internal hook: tests/mcp/http/modern_protocol_test.ts pins it.
 */
// deno-lint-ignore no-explicit-any
function shareInputSchemas(server: McpServer, byName: ReadonlyMap<string, ToolDefinition<any, any>>): void {
  (server as unknown as { toolInputSchemaJson: (name: string) => unknown }).toolInputSchemaJson = (name) => {
    const tool = byName.get(name);
    return tool ? describeTool(tool).inputSchema : undefined;
  };
}

/**
 * Prompts and resources are registered once, before the server connects, and never change, so
 * no list_changed notification ever comes: say so, as for tools (the SDK defaults to `true`).
 */
function declareListsUnchanged(server: McpServer): void {
  const capabilities = server.server.getCapabilities();
  if (capabilities.prompts) server.server.registerCapabilities({ prompts: { listChanged: false } });
  if (capabilities.resources) server.server.registerCapabilities({ resources: { listChanged: false } });
}

type RequestHandler = (request: unknown, ctx: unknown) => Promise<unknown>;

/**
 * Serves the views `ids` names as `ui://` resources, and keeps them out of `resources/list`
 * for clients that do not render views (the spec lets a server leave UI-only resources out of
 * the list), so that list stays as it was for them.
 */
function registerViews(
  server: McpServer,
  ids: ReadonlySet<ViewId>,
  options: ViewOptions | undefined,
  viewsFor: (ctx: unknown) => boolean,
): void {
  if (ids.size === 0) return;
  const views = viewResources(ids, options);
  for (const view of views) {
    server.registerResource(
      view.name,
      view.uri,
      { title: view.title, description: view.description, mimeType: VIEW_MIME, _meta: view.meta },
      async (uri) => ({
        contents: [{ uri: uri.href, mimeType: VIEW_MIME, text: await view.html(), _meta: view.meta }],
      }),
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
 * more (the view pages through the same tool, through the host) and, when the call came through
 * opendata_call, `via` so the view calls back the same way.
 */
async function addViewModel(
  result: CallToolResult,
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>,
  args: unknown,
  via?: string,
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
  if (model) {
    result._meta = {
      ...result._meta,
      [VIEW_META_KEY]: { ...model, tool: tool.name, ...(via ? { via } : {}) },
    };
  }
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
