import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { OgcClient } from "./client.ts";
import type { RiksantikvarenOgcSettings } from "./config.ts";
import { ogcTools } from "./tools.ts";

/** Creates the riksantikvaren_ogc provider: four read-only tools over api.ra.no. */
export function createProvider(context: ProviderContext<RiksantikvarenOgcSettings>): Provider {
  const client = new OgcClient(context.settings, context.http);
  return {
    id: "riksantikvaren_ogc",
    tools: ogcTools({ client, settings: context.settings, clock: context.http.clock }),
  };
}
