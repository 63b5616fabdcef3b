// What the core tools (search.ts, describe.ts, call.ts) share: their names, the options of the
// server instance they serve in, and the view of its catalog they all read.
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import { closestNames, routeCall, SEARCH_TOOL_NAME } from "../next_calls.ts";
import type { RoutedCall } from "../next_calls.ts";
import type { NextCall, Provider, ToolDefinition, UnavailableTools } from "../provider.ts";
import { CORE_TOOLSET } from "../toolsets.ts";
import type { ToolCatalog } from "../toolsets.ts";
import { z } from "zod";
import GENERATED from "../core_schemas.json" with { type: "json" };

/** Tool names of the core toolset. */
export const SEARCH_TOOL = SEARCH_TOOL_NAME;
export const DESCRIBE_TOOL = "opendata_describe";
export const CALL_TOOL = "opendata_call";

/** What the core tools need to know about the server instance they serve in. */
export interface CoreToolsOptions {
  catalog: ToolCatalog;
  /** Every enabled provider (searched, described and callable whatever is served directly). */
  providers: readonly Provider[];
  /** Names of the tools this instance lists directly (the rest is reached with opendata_call). */
  served: ReadonlySet<string>;
  /** How long opendata_search waits for its sources, in milliseconds. */
  searchTimeoutMs: number;
  clock: Clock;
  /** Describes a tool as tools/list would (the JSON Schemas of its input). */
  inputSchemaOf(tool: ToolDefinition): Record<string, unknown>;
  /** Core tools never listed but described and called (opendata_read). */
  // deno-lint-ignore no-explicit-any
  unlisted?: readonly ToolDefinition<any, any>[];
}

export const CORE_ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/**
 * A value built on its first use and kept: the core tools' zod schemas are only needed to
 * validate a call (tools/list serves the generated JSON Schemas), so a start builds none.
 */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

export const nextCallSchema = once(() =>
  z.object({
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    for: z.string().optional(),
  })
);

/**
 * The JSON Schemas a core tool is listed with, generated from its zod schemas by `deno task
 * schemas` (core_schemas.json; tests/providers/listings_test.ts fails when it is stale), so listing
 * the tools converts nothing.
 */
export function generatedSchemas(
  name: typeof SEARCH_TOOL | typeof DESCRIBE_TOOL,
): { inputJsonSchema: Record<string, unknown>; outputJsonSchema: Record<string, unknown> } {
  const entry = (GENERATED.tools as Record<
    string,
    { inputSchema: Record<string, unknown>; outputSchema: Record<string, unknown> }
  >)[name]!;
  return { inputJsonSchema: entry.inputSchema, outputJsonSchema: entry.outputSchema };
}

/** The source id of a provider's search source. */
export function sourceId(provider: Provider): string {
  return provider.id;
}

/** The instance's catalog as the core tools read it, computed once per instance. */
export interface CoreScope {
  options: CoreToolsOptions;
  catalog: ToolCatalog;
  /** Every tool by name, with its toolset (the unlisted core tools included). */
  // deno-lint-ignore no-explicit-any
  allTools: Map<string, { tool: ToolDefinition<any, any>; toolset: string }>;
  /** The providers with a search source, and their source ids. */
  searchable: Provider[];
  sourceIds: string[];
  /** How to reach a tool from this instance: directly when listed, else through opendata_call. */
  route(next: NextCall): RoutedCall;
}

/** The {@linkcode CoreScope} of one server instance. */
export function coreScope(options: CoreToolsOptions): CoreScope {
  const { catalog } = options;
  // deno-lint-ignore no-explicit-any
  const allTools = new Map<string, { tool: ToolDefinition<any, any>; toolset: string }>();
  for (const set of catalog.toolsets) {
    for (const tool of set.tools) allTools.set(tool.name, { tool, toolset: set.id });
  }
  for (const tool of options.unlisted ?? []) allTools.set(tool.name, { tool, toolset: CORE_TOOLSET });
  const searchable = options.providers.filter((p) => p.search);
  const sourceIds = searchable.map(sourceId);

  const route = (next: NextCall): RoutedCall => routeCall(next, options.served);
  return { options, catalog, allTools, searchable, sourceIds, route };
}

/** `args` as an object of arguments (opendata_call may pass them as a JSON string), or undefined. */
function argumentsObject(args: unknown): Record<string, unknown> | undefined {
  let value = args;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

/**
 * The error for a tool name this instance cannot run: a tool left out for want of a key says how
 * to enable it (the keyless default), any other name points at opendata_describe.
 */
export function unknownTool(
  name: string,
  known: readonly string[],
  unavailable: readonly UnavailableTools[] = [],
  args?: unknown,
): ToolError {
  const left = unavailable.find((u) => u.tools.includes(name));
  if (left) {
    return new ToolError("CONFIGURATION_ERROR", `The tool "${name}" is not served: ${left.reason}`, {
      field: "tool",
      hint: left.reason,
    });
  }
  const close = closestNames(name, known);
  const given = argumentsObject(args);
  return new ToolError("NOT_FOUND", `There is no tool "${name}"`, {
    field: "tool",
    hint: close.length
      ? `Did you mean ${close.map((n) => `"${n}"`).join(" or ")}? ${DESCRIBE_TOOL} lists every tool`
      : `${DESCRIBE_TOOL} lists the tools`,
    next: close.length
      ? [
        // The same call on the closest tool, when the arguments were given (through opendata_call).
        ...(given === undefined
          ? []
          : [{ tool: close[0]!, arguments: given, for: `the closest tool, "${close[0]}"` }]),
        { tool: DESCRIBE_TOOL, arguments: { tool: close[0] }, for: `the arguments of "${close[0]}"` },
      ]
      : [{ tool: DESCRIBE_TOOL, arguments: {}, for: "every tool" }],
  });
}
