import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import type { GeonorgeSettings } from "./config.ts";
import { datasetsTool } from "./tools.ts";

/** Creates the geonorge provider: one read-only catalogue search tool. */
export function createProvider(context: ProviderContext<GeonorgeSettings>): Provider {
  return { id: "geonorge", tools: [datasetsTool(context.settings, context.http)] };
}
