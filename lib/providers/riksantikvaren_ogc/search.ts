// Riksantikvaren's part of `opendata_search`: heritage sites by name, one request to the main
// dataset (lokaliteter of LokaliteterEnkeltminnerOgSikringssoner, the official register's sites)
// with a CQL2 name filter, each hit with the riksantikvaren-feature call that reads it whole.
import type { SearchHit, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import { callOptions, KNOWN_DATASETS, likeEscape } from "./_common.ts";
import type { OgcToolDeps } from "./_common.ts";
import { defaultLicence, heritageFields } from "./heritage.ts";

/** The collection searched by name. */
const COLLECTION = "lokaliteter";

/** The `opendata_search` source over the register's sites. */
export function ogcSearchSource(deps: OgcToolDeps): SearchSource {
  const dataset = KNOWN_DATASETS[COLLECTION]!;
  const licence = defaultLicence(dataset, COLLECTION);
  return {
    name: "Riksantikvaren heritage sites (api.ra.no)",
    licence: `${licence.name}. ${licence.note}`,
    async search(query: string, options: { limit: number }, ctx: ToolCallContext): Promise<SearchHit[]> {
      const { page } = await deps.client.items(
        { dataset, collection: COLLECTION },
        {
          filter: `CASEI(navn) LIKE CASEI('%${likeEscape(query)}%')`,
          "filter-lang": "cql2-text",
          limit: Math.max(1, Math.min(options.limit, 50)),
        },
        callOptions(ctx),
      );
      const hits: SearchHit[] = [];
      for (const f of page.features) {
        if (f.id === null || hits.length >= options.limit) continue;
        const h = heritageFields(f.properties);
        const hit: SearchHit = {
          title: h.name ?? `Site ${f.id}`,
          url: h.kulturminnesok_url ??
            deps.client.url(`${dataset}/collections/${COLLECTION}/items/${encodeURIComponent(f.id)}`),
          next: { tool: "riksantikvaren-feature", arguments: { collection: COLLECTION, id: f.id } },
        };
        const about = [h.category, h.protection, h.municipality, h.dating].filter(Boolean).join(" · ");
        if (about) hit.snippet = about;
        hits.push(hit);
      }
      return hits;
    },
  };
}
