// The tools one server instance serves (listed, callable by name, their views and jobs), made
// once per provider list: every server instance over the same toolset selection (each 2026-07-28
// request builds one) serves the same tools, and nothing changes them once made.
import type { Provider, ToolDefinition, UnavailableTools } from "./provider.ts";
import type { CreateServerOptions } from "./server_options.ts";
import type { ViewId } from "./views/mod.ts";
import type { JobFollower } from "./tasks/tool_tasks.ts";
import { collectTools } from "./tool_schemas.ts";

/** The tools one server instance lists, and those it calls by name. */
export interface ServedTools {
  /** Listed in registration order, the same on every call: clients may cache the list. */
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>[];
  /**
   * Listed tools, and every other tool of the enabled providers: a client that listed another
   * toolset selection earlier (toolsets may differ per HTTP request) can still call what it saw.
   */
  // deno-lint-ignore no-explicit-any
  callable: Map<string, { tool: ToolDefinition<any, any>; provider: string }>;
  // deno-lint-ignore no-explicit-any
  byName: Map<string, ToolDefinition<any, any>>;
  /** The names of the listed tools. */
  served: Set<string>;
  /** Tools left out as configured (e.g. without an API key): calling one says how to enable it. */
  unavailable: UnavailableTools[];
  /** Tools whose view is the series chart: opendata_chart puts several of their calls on one chart. */
  seriesTools: Set<string>;
  /** Whether any tool has a view (then opendata_call names the router view). */
  viewTools: boolean;
  /** The views the callable tools name. */
  viewIds: ReadonlySet<ViewId>;
  /** The background jobs of the providers that have some, by provider id. */
  jobs: ReadonlyMap<string, JobFollower>;
}

/**
 * The served tools of `providers` with `options.callable`, made once per pair: every server
 * instance (each 2026-07-28 request) over the same selection serves the same tools, and nothing
 * changes them after they are made.
 */
export function servedTools(providers: readonly Provider[], options: CreateServerOptions): ServedTools {
  const known = servedToolsMade.get(providers);
  if (known && known.callable === options.callable) return known.tools;
  const tools = makeServedTools(providers, options);
  servedToolsMade.set(providers, { callable: options.callable, tools });
  return tools;
}

/** The served tools per provider list (surfaces.ts keeps one list per toolset selection). */
const servedToolsMade = new WeakMap<
  readonly Provider[],
  { callable: CreateServerOptions["callable"]; tools: ServedTools }
>();

function makeServedTools(providers: readonly Provider[], options: CreateServerOptions): ServedTools {
  const listed = collectTools(providers);
  // deno-lint-ignore no-explicit-any
  const callable = new Map<string, { tool: ToolDefinition<any, any>; provider: string }>(
    options.callable ?? [],
  );
  for (const p of providers) for (const t of p.tools) callable.set(t.name, { tool: t, provider: p.id });
  return {
    listed,
    callable,
    byName: new Map([...callable].map(([name, c]) => [name, c.tool])),
    served: new Set(listed.map((t) => t.name)),
    unavailable: providers.flatMap((p) => p.unavailable ?? []),
    seriesTools: new Set(
      [...callable.values()].filter((c) => c.tool.view?.id === "series").map((c) => c.tool.name),
    ),
    viewTools: [...callable.values()].some((c) => c.tool.view),
    viewIds: new Set([...callable.values()].flatMap((c) => c.tool.view ? [c.tool.view.id] : [])),
    jobs: new Map(providers.flatMap((p) => p.jobs ? [[p.id, p.jobs] as const] : [])),
  };
}
