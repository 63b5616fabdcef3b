import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { ArcgisClient } from "./client.ts";
import type { RiksantikvarenArcgisSettings } from "./settings.ts";
import { arcgisSearchSource } from "./search.ts";
import { arcgisTools, TOOLSET } from "./tools.ts";

/** Creates the riksantikvaren_arcgis provider: three read-only tools over kart.ra.no. */
export function createProvider(context: ProviderContext<RiksantikvarenArcgisSettings>): Provider {
  const client = new ArcgisClient(context.settings, context.http);
  return {
    id: "riksantikvaren_arcgis",
    tools: arcgisTools({ client, settings: context.settings, clock: context.http.clock }),
    toolsets: [{
      id: TOOLSET,
      description:
        "Riksantikvaren's ArcGIS map services (kart.ra.no): layers, attribute and spatial queries, identify",
    }],
    search: arcgisSearchSource(context.settings.default_service),
  };
}
