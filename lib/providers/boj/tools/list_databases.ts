// boj_list_databases: the databases of the API manual's appendix A, from the bundled catalog.
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { formatText } from "../../../mcp/shaping.ts";
import { databasesMarkdown, databasesPayload } from "../catalog_view.ts";
import { databasesOutput } from "../schemas.ts";
import { type BojInputs, CATALOG_ANNOTATIONS, DISCOVERY_TOOLSET, EXECUTION } from "../_common.ts";

/** `boj_list_databases`. */
export function listDatabasesTool(
  inputs: BojInputs,
): ToolDefinition<BojInputs["databases"], typeof databasesOutput> {
  return {
    name: "boj_list_databases",
    title: "BOJ DB Catalog",
    description: "Lists the 50 Bank of Japan database codes and names. No upstream call.",
    toolset: DISCOVERY_TOOLSET,
    input: inputs.databases,
    output: databasesOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = databasesPayload();
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => databasesMarkdown(structured)),
        structured,
      });
    },
  };
}
