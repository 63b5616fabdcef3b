import { clientSettings } from "../../http/settings.ts";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { WdsClient } from "./client.ts";
import type { WorldbankSettings } from "./config.ts";
import { createTools } from "./tools.ts";

/** Creates the World Bank documents provider: four read-only tools over the WDS search API. */
export function createProvider(context: ProviderContext<WorldbankSettings>): Provider {
  const s = context.settings;
  const http = context.http.client({
    provider: "worldbank",
    upstreamName: "World Bank Documents API",
    ...clientSettings(s),
  });
  return {
    id: "worldbank",
    tools: createTools({ client: new WdsClient(http, s.base_url), settings: s, clock: context.clock }),
  };
}
