import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { SnlApi } from "./client.ts";
import type { SnlSettings } from "./config.ts";
import { snlTools } from "./tools.ts";

/** Creates the SNL provider: snl-search and snl-article. */
export function createProvider(context: ProviderContext<SnlSettings>): Provider {
  const api = new SnlApi(context.settings, context.http, context.clock);
  return { id: "snl", tools: snlTools(api) };
}
