// The six boj_* tools (docs/apis/boj.md), one file each in tools/. Data tools call the API once per
// page (paging is the caller's, through start_position/next_position), or follow every page into a
// file with output "file"; discovery tools answer from the bundled catalog.
import { createInputs } from "./inputs.ts";
import type { AnyTool, ToolDeps } from "./_common.ts";
import { getDataCodeTool } from "./tools/get_data_code.ts";
import { getDataLayerTool } from "./tools/get_data_layer.ts";
import { getMetadataTool } from "./tools/get_metadata.ts";
import { listDatabasesTool } from "./tools/list_databases.ts";
import { messageCatalogTool } from "./tools/message_catalog.ts";
import { parameterCatalogTool } from "./tools/parameter_catalog.ts";
export { DATA_TOOLSET, DISCOVERY_TOOLSET, normalizeFormat, normalizeLang, type ToolDeps } from "./_common.ts";

/** The six tools over one client. */
export function createTools(deps: ToolDeps): AnyTool[] {
  const inputs = createInputs(deps.settings.file_max_requests);
  return [
    getDataCodeTool(deps, inputs),
    getDataLayerTool(deps, inputs),
    getMetadataTool(deps, inputs),
    listDatabasesTool(inputs),
    parameterCatalogTool(inputs),
    messageCatalogTool(inputs),
  ];
}
