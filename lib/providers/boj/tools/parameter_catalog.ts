// boj_get_parameter_catalog: the API's parameters and limits, from the bundled catalog.
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { formatText } from "../../../mcp/shaping.ts";
import { parameterCatalogMarkdown, parameterCatalogPayload } from "../catalog_view.ts";
import { parameterCatalogOutput } from "../schemas.ts";
import { type BojInputs, CATALOG_ANNOTATIONS, DISCOVERY_TOOLSET, EXECUTION } from "../_common.ts";

/** `boj_get_parameter_catalog`. */
export function parameterCatalogTool(
  inputs: BojInputs,
): ToolDefinition<BojInputs["parameters"], typeof parameterCatalogOutput> {
  return {
    name: "boj_get_parameter_catalog",
    title: "BOJ Parameter Catalog",
    description: "BOJ API parameters per endpoint: allowed values, date formats, limits. No upstream call.",
    toolset: DISCOVERY_TOOLSET,
    input: inputs.parameters,
    output: parameterCatalogOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = parameterCatalogPayload(args.endpoint);
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => parameterCatalogMarkdown(structured)),
        structured,
      });
    },
  };
}
