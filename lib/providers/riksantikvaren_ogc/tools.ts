// The riksantikvaren-* tools: datasets and collections, features (bbox, text filter, paging),
// one feature, and features near a point ranked by true distance. Each lives in tools/.
import type { ToolDefinition } from "../../mcp/provider.ts";
import type { OgcToolDeps } from "./_common.ts";
import { collectionsTool } from "./tools/collections.ts";
import { featureTool } from "./tools/feature.ts";
import { featuresTool } from "./tools/features.ts";
import { nearbyTool } from "./tools/nearby.ts";

export { KNOWN_DATASETS, likeEscape } from "./_common.ts";
export type { OgcToolDeps } from "./_common.ts";

/** The four riksantikvaren-* tools. */
// deno-lint-ignore no-explicit-any
export function ogcTools(deps: OgcToolDeps): ToolDefinition<any, any>[] {
  return [collectionsTool(deps), featuresTool(deps), featureTool(deps), nearbyTool(deps)];
}
