// The four worldbank_* tools (docs/apis/worldbank.md), one file each in tools/.
import type { ToolDefinition } from "../../mcp/provider.ts";
import { createInputs } from "./inputs.ts";
import type { ToolDeps } from "./_common.ts";
import { exploreFacetsTool } from "./tools/explore_facets.ts";
import { documentDetailsTool } from "./tools/get_document_details.ts";
import { searchByProjectTool } from "./tools/search_by_project.ts";
import { searchDocumentsTool } from "./tools/search_documents.ts";
export { type ToolDeps, TOOLSET } from "./_common.ts";

/** Creates the provider's four tools over one client. */
export function createTools(deps: ToolDeps): ToolDefinition[] {
  const inputs = createInputs(deps.settings.file_max_documents);
  return [
    searchDocumentsTool(deps, inputs),
    documentDetailsTool(deps, inputs),
    exploreFacetsTool(deps, inputs),
    searchByProjectTool(deps, inputs),
  ] as ToolDefinition[];
}
