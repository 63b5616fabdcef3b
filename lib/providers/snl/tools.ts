// The snl-* tools, one file each in tools/.
import type { ToolDefinition } from "../../mcp/provider.ts";
import type { SnlApi } from "./client.ts";
import { articleTool } from "./tools/article.ts";
import { searchTool } from "./tools/search.ts";
export { TOOLSET } from "./format.ts";

/** The two SNL tools. */
export function snlTools(api: SnlApi): ToolDefinition[] {
  return [searchTool(api), articleTool(api)];
}
