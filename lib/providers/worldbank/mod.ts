import { clientSettings } from "../../http/settings.ts";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { WdsClient } from "./client.ts";
import type { WorldbankSettings } from "./settings.ts";
import { createSearchSource } from "./search.ts";
import { createTools, TOOLSET } from "./tools.ts";

/** Creates the World Bank documents provider: four read-only tools over the WDS search API. */
export function createProvider(context: ProviderContext<WorldbankSettings>): Provider {
  const s = context.settings;
  const http = context.http.client({
    provider: "worldbank",
    upstreamName: "World Bank Documents API",
    licence: `World Bank terms (${s.terms_url}); documents may carry their own rights`,
    ...clientSettings(s),
  });
  const client = new WdsClient(http, s.base_url);
  return {
    id: "worldbank",
    tools: createTools({ client, settings: s, clock: context.clock }),
    toolsets: [{
      id: TOOLSET,
      description:
        "World Bank Documents & Reports: search, document details, facet counts, project documents",
    }],
    search: createSearchSource(client, s.terms_url),
  };
}
