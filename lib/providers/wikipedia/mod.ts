import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { WikipediaApi } from "./client.ts";
import type { WikipediaSettings } from "./settings.ts";
import { wikipediaSearchSource } from "./search.ts";
import { TOOLSET, wikipediaTools } from "./tools.ts";

/** Creates the Wikipedia provider: search, summary, geosearch and content tools. */
export function createProvider(context: ProviderContext<WikipediaSettings>): Provider {
  const api = new WikipediaApi(context.settings, context.http, context.clock);
  return {
    id: "wikipedia",
    tools: wikipediaTools(api),
    toolsets: [{
      id: TOOLSET,
      description: "Wikipedia in any language: search, summaries, whole articles, articles near a point",
    }],
    search: wikipediaSearchSource(api),
  };
}
