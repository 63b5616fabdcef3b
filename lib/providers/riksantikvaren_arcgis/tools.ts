// The arcgis-* tools: services and layers, layer queries that page past the transfer limit,
// and identify at a point across layers. One file each in tools/.
import type { ToolDefinition } from "../../mcp/provider.ts";
import type { ArcgisToolDeps } from "./_common.ts";
import { identifyTool } from "./tools/identify.ts";
import { queryTool } from "./tools/query.ts";
import { servicesTool } from "./tools/services.ts";
export { TOOLSET } from "./_common.ts";

// The arcgis-* tools: services and layers, layer queries that page past the transfer limit,
// and identify at a point across layers.

/** The three arcgis-* tools. */
// deno-lint-ignore no-explicit-any
export function arcgisTools(deps: ArcgisToolDeps): ToolDefinition<any, any>[] {
  return [servicesTool(deps), queryTool(deps), identifyTool(deps)];
}
