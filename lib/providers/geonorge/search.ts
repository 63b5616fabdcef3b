// GeoNorge's part of `opendata_search`: one catalogue search within the configured organization,
// each hit with the geonorge-datasets call that finds it again with its distributions.
import { shorten } from "../../mcp/shaping.ts";
import type { SearchHit, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import type { Catalog } from "./catalog.ts";
import type { GeonorgeSettings } from "./settings.ts";

/** The `opendata_search` source over the catalogue. */
export function geonorgeSearchSource(settings: GeonorgeSettings, catalog: Catalog): SearchSource {
  return {
    name: `GeoNorge datasets (${settings.organization})`,
    languages: ["no"],
    licence: "Catalogue metadata from GeoNorge (Kartverket); each dataset states its own terms",
    widen: (query) => [{
      tool: "geonorge-datasets",
      arguments: { query, organization: "all", limit: 10 },
      for: "every organization",
    }],
    async search(query: string, options: { limit: number }, ctx: ToolCallContext): Promise<SearchHit[]> {
      const r = await catalog.search(
        {
          query,
          organization: settings.organization,
          type: "any",
          limit: Math.max(1, Math.min(options.limit, 50)),
        },
        { signal: ctx.signal, logger: ctx.logger },
      );
      return r.entries.slice(0, options.limit).map((e) => {
        const hit: SearchHit = {
          title: e.title,
          url: e.details_url,
          next: { tool: "geonorge-datasets", arguments: { query: e.title } },
        };
        const about = [e.type, e.distribution?.protocol, e.abstract && shorten(e.abstract, 200)].filter(
          Boolean,
        );
        if (about.length) hit.snippet = about.join(" · ");
        if (e.date) hit.date = e.date;
        return hit;
      });
    },
  };
}
