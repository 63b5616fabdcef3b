import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { Catalog } from "./catalog.ts";
import type { GeonorgeSettings } from "./settings.ts";
import { geonorgeSearchSource } from "./search.ts";
import { datasetsTool, TOOLSET } from "./tools.ts";

/** Creates the geonorge provider: one read-only catalogue search tool. */
export function createProvider(context: ProviderContext<GeonorgeSettings>): Provider {
  const catalog = new Catalog(context.settings, context.http);
  return {
    id: "geonorge",
    tools: [datasetsTool(context.settings, catalog)],
    toolsets: [{
      id: TOOLSET,
      description: "GeoNorge's map catalogue: datasets and map services with WMS, WFS and download links",
    }],
    search: geonorgeSearchSource(context.settings, catalog),
  };
}
