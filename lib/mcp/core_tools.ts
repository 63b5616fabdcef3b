// The three tools of the default surface: one search across every source, a description of any
// tool (so an agent that sees only these three learns the others' arguments), and a call of any
// tool by name. Together they reach every tool of the enabled providers in both protocol eras
// and in stateless mode, without a restart and without list-changed support in the client.
// One tool per file in lib/mcp/tools/; this module assembles them for one server instance.
import type { ToolDefinition } from "./provider.ts";
import { coreScope } from "./tools/_core.ts";
import type { CoreToolsOptions } from "./tools/_core.ts";
import { callTool } from "./tools/call.ts";
import { describeTool } from "./tools/describe.ts";
import { searchTool } from "./tools/search.ts";

export { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from "./tools/_core.ts";
export type { CoreToolsOptions } from "./tools/_core.ts";
export { callInput, callTarget } from "./tools/call.ts";
export type { CallInput } from "./tools/call.ts";

/** The core toolset's tools for one server instance. opendata_call is dispatched by the core. */
// deno-lint-ignore no-explicit-any
export function coreTools(options: CoreToolsOptions): ToolDefinition<any, any>[] {
  const scope = coreScope(options);
  return [searchTool(scope), describeTool(scope), callTool()];
}
