import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { SnlApi } from "./client.ts";
import type { SnlSettings } from "./settings.ts";
import { snlSearchSource } from "./search.ts";
import { snlTools, TOOLSET } from "./tools.ts";

/** Creates the SNL provider: snl-search and snl-article. */
export function createProvider(context: ProviderContext<SnlSettings>): Provider {
  const api = new SnlApi(context.settings, context.http, context.clock);
  return {
    id: "snl",
    tools: snlTools(api),
    toolsets: [{
      id: TOOLSET,
      description:
        "Store norske leksikon and its sister encyclopedias: search and whole articles with licence",
    }],
    search: snlSearchSource(api),
  };
}
