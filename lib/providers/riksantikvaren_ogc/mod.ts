import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { KNOWN_DATASETS, TOOLSET } from "./_common.ts";
import { OgcClient } from "./client.ts";
import type { RiksantikvarenOgcSettings } from "./settings.ts";
import { ogcSearchSource } from "./search.ts";
import { ogcTools } from "./tools.ts";

/** Creates the riksantikvaren_ogc provider: four read-only tools over api.ra.no. */
export function createProvider(context: ProviderContext<RiksantikvarenOgcSettings>): Provider {
  const deps = {
    // Metrics name the known datasets; a caller-chosen dataset or collection counts as "other".
    client: new OgcClient(context.settings, context.http, {
      knownDatasets: [...new Set(Object.values(KNOWN_DATASETS))],
    }),
    settings: context.settings,
    clock: context.http.clock,
  };
  return {
    id: "riksantikvaren_ogc",
    tools: ogcTools(deps),
    toolsets: [{
      id: TOOLSET,
      description:
        "Riksantikvaren's cultural-heritage register (api.ra.no): sites and monuments by area, name or distance",
    }],
    search: ogcSearchSource(deps),
  };
}
