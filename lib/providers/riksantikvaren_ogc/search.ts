// Riksantikvaren's part of `opendata_search`: heritage sites by name, one request to the main
// dataset (lokaliteter of LokaliteterEnkeltminnerOgSikringssoner, the official register's sites)
// with a CQL2 name filter, each hit with the riksantikvaren-feature call that reads it whole.
import { parseCoordinates } from "../../geo/query_coordinates.ts";
import type { SearchHit, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import { callOptions, KNOWN_DATASETS, likeEscape } from "./_common.ts";
import type { OgcToolDeps } from "./_common.ts";
import { defaultLicence, heritageFields } from "./heritage.ts";

/** The radius a coordinate query is searched within: a city block is too small, a district fits. */
const NEARBY_RADIUS_M = 1000;

/** The collection searched by name. */
const COLLECTION = "lokaliteter";

/** The `opendata_search` source over the register's sites. */
export function ogcSearchSource(deps: OgcToolDeps): SearchSource {
  const dataset = KNOWN_DATASETS[COLLECTION]!;
  const licence = defaultLicence(dataset, COLLECTION);
  return {
    name: "Riksantikvaren heritage sites (api.ra.no)",
    languages: ["no"],
    licence: `${licence.name}. ${licence.note}`,
    widen: (query) => [{
      tool: "riksantikvaren-features",
      arguments: { collection: COLLECTION, query: query.trim().split(/\s+/)[0] ?? query, limit: 10 },
      for: "sites whose name holds the first word",
    }],
    async search(query: string, options: { limit: number }, ctx: ToolCallContext): Promise<SearchHit[]> {
      // Coordinates are a place, not a name: the nearby search answers them.
      const point = parseCoordinates(query);
      if (point) {
        return [{
          title: `Heritage sites within ${NEARBY_RADIUS_M / 1000} km of ${point.lat}, ${point.lon}`,
          snippet: "Protected sites (lokaliteter), nearest first, with distances",
          next: {
            tool: "riksantikvaren-nearby",
            arguments: { lat: point.lat, lon: point.lon, radius_m: NEARBY_RADIUS_M, limit: 10 },
            for: "sites nearby",
          },
        }];
      }
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
