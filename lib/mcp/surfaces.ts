// The tools a server instance serves for one toolset selection (its surface): the core tools over
// the selected toolsets' providers. createApp (lib/app.ts) makes one surface per selection a
// client asks for, and every server instance lists one; opendata_read is on every surface, unlisted.
import type { Clock } from "../clock.ts";
import { CALL_TOOL, coreTools, DESCRIBE_TOOL, SEARCH_TOOL } from "./core_tools.ts";
import type { Provider, ResourceTemplateDefinition, ToolDefinition } from "./provider.ts";
import { describeTool } from "./tool_schemas.ts";
import { readTool } from "./tools/read.ts";
import { CORE_TOOLSET } from "./toolsets.ts";
import type { ToolCatalog } from "./toolsets.ts";

/** The result files the app writes (lib/output/deferred_exports.ts): read through their resource template. */
export interface FileExports {
  resourceTemplate(): ResourceTemplateDefinition;
}

/**
 * opendata_read: result files read by a tool call (clients without resources/read), not listed,
 * reached with opendata_call, named as the next call of every answer that writes a file. Each
 * page names its source: the template's provider (the exports: the one the file was written
 * for) with the name and licence that provider declares for opendata_search.
 */
export function fileReader(
  providers: readonly Provider[],
  exports: FileExports,
): ReturnType<typeof readTool> {
  const fileTemplates = [
    ...providers.flatMap((p) =>
      (p.resourceTemplates ?? []).map((template) => ({ template, provider: p.id }))
    ),
    { template: exports.resourceTemplate() },
  ];
  return readTool(() => fileTemplates, (id) => providers.find((p) => p.id === id)?.search);
}

/** What the core tools of every toolset selection are made of. */
export interface ToolsetParts {
  catalog: ToolCatalog;
  providers: readonly Provider[];
  /** opendata_read, callable on every surface but never listed. */
  // deno-lint-ignore no-explicit-any
  reader: ToolDefinition<any, any>;
  searchTimeoutMs: number;
  clock: Clock;
}

/**
 * What one toolset selection serves (a surface): the core tools and the selected toolsets'
 * providers, built once per distinct selection (tool schemas are cached per tool).
 */
export function toolsetSurfaces(parts: ToolsetParts): (selected: ReadonlySet<string>) => Provider[] {
  const { catalog, providers } = parts;
  const surfaces = new Map<string, Provider[]>();
  return (selected) => {
    const key = [...selected].sort().join(",");
    let view = surfaces.get(key);
    if (!view) {
      const served = catalog.serve(providers, selected);
      const listed = new Set([...served.flatMap((p) => p.tools.map((t) => t.name)), ...CORE_TOOL_NAMES]);
      const core: Provider = {
        id: "core",
        toolsets: [{ id: CORE_TOOLSET, description: "Search every source; describe and call any tool" }],
        tools: coreTools({
          catalog,
          providers,
          served: listed,
          searchTimeoutMs: parts.searchTimeoutMs,
          clock: parts.clock,
          inputSchemaOf: (tool) => describeTool(tool).inputSchema as Record<string, unknown>,
          unlisted: [parts.reader],
        }),
      };
      view = [core, ...served];
      // Bounded: selections are subsets of a few dozen toolsets, but a client could send many.
      if (surfaces.size >= 256) surfaces.delete(surfaces.keys().next().value!);
      surfaces.set(key, view);
    }
    return view;
  };
}

const CORE_TOOL_NAMES = [SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL];
