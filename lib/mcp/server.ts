// One MCP server instance over the enabled providers: tools (listed and callable), resources,
// templates, prompts, views and subscriptions, for both protocol eras. A tool call itself runs in
// tool_call.ts; how tools are listed is tool_schemas.ts; the error contract is call_errors.ts.
import { z } from "zod";
import { ToolError } from "../errors.ts";
import { SERVER_NAME, USER_AGENT, VERSION } from "../version.ts";
import { citationTemplate } from "../output/provenance.ts";
import { CALL_TOOL, callInput, callTarget } from "./core_tools.ts";
import type { McpExtra, Provider, ToolDefinition } from "./provider.ts";
import { loadedTool } from "./lazy.ts";
import {
  completable,
  isInputRequiredResult,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
} from "./sdk.ts";
import type { CacheHint, CallToolResult } from "./sdk.ts";
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
import { CHART_TOOL, chartCalls, chartInput, chartResult, chartTool } from "./tools/chart.ts";
import type { ChartPart } from "./tools/chart.ts";
import { callTool, citationsOf, NO_FILES } from "./tool_call.ts";
import type { CreateServerOptions } from "./server_options.ts";
import { collectTools, describeTool, servedInput } from "./tool_schemas.ts";
import { errorResult, validationError } from "./call_errors.ts";

export type { CallToolOptions, CreateServerOptions, RequestStateSeal } from "./server_options.ts";
export { DEFAULT_CALL_TIMEOUT_MS } from "./server_options.ts";
export { collectTools, describeTool, FRESH_FIELD, servedInput, toJsonSchema } from "./tool_schemas.ts";
export { callTool } from "./tool_call.ts";
export { applyAliases, errorResult, validationError } from "./call_errors.ts";

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
  // With structured content off, a client that renders no views gets text only: no outputSchema
  // is declared, so none is owed (MCP: a tool with an outputSchema must return structuredContent).
  const textOnly = (ctx: unknown): boolean => options.structuredContent === false && !viewsFor(ctx);
  server.server.setRequestHandler("tools/list", (_request, ctx) => {
    if (textOnly(ctx)) return { tools: tools.map(describeTool).map(({ outputSchema: _, ...rest }) => rest) };
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
    if (textOnly(ctx)) delete projected.structuredContent;
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
