// boj_get_message_catalog: the API's messages (appendix B), from the bundled catalog.
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { formatText } from "../../../mcp/shaping.ts";
import { messageCatalogMarkdown, messageCatalogPayload } from "../catalog_view.ts";
import { messageCatalogOutput } from "../schemas.ts";
import { type BojInputs, CATALOG_ANNOTATIONS, DISCOVERY_TOOLSET, EXECUTION } from "../_common.ts";

/** `boj_get_message_catalog`. */
export function messageCatalogTool(
  inputs: BojInputs,
): ToolDefinition<BojInputs["messages"], typeof messageCatalogOutput> {
  return {
    name: "boj_get_message_catalog",
    title: "BOJ Message Catalog",
    description: "Explains BOJ STATUS and MESSAGEID codes and what to do about each. No upstream call.",
    toolset: DISCOVERY_TOOLSET,
    input: inputs.messages,
    output: messageCatalogOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = messageCatalogPayload(args.status, args.message_id);
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => messageCatalogMarkdown(structured)),
        structured,
      });
    },
  };
}
