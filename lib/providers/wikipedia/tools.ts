// The four wikipedia-* tools, one file each in tools/.
import type { ToolDefinition } from "../../mcp/provider.ts";
import type { WikipediaApi } from "./client.ts";
import { contentTool } from "./tools/content.ts";
import { geosearchTool } from "./tools/geosearch.ts";
import { searchTool } from "./tools/search.ts";
import { summaryTool } from "./tools/summary.ts";
export { TOOLSET } from "./schemas.ts";

/** The four Wikipedia tools. */
export function wikipediaTools(api: WikipediaApi): ToolDefinition[] {
  return [searchTool(api), summaryTool(api), geosearchTool(api), contentTool(api)];
}
