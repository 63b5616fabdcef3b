import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { WikipediaApi } from "./client.ts";
import type { WikipediaSettings } from "./config.ts";
import { wikipediaTools } from "./tools.ts";

/** Creates the Wikipedia provider: search, summary, geosearch and content tools. */
export function createProvider(context: ProviderContext<WikipediaSettings>): Provider {
  const api = new WikipediaApi(context.settings, context.http, context.clock);
  return { id: "wikipedia", tools: wikipediaTools(api) };
}
