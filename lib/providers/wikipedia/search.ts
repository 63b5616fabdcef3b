// Wikipedia's part of `opendata_search`: one full-text search of the default language edition,
// each hit with the wikipedia-summary call that reads it.
import { parseCoordinates } from "../../geo/query_coordinates.ts";
import type { SearchHit, SearchHits, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import { clip } from "../../html.ts";
import type { WikipediaApi } from "./client.ts";
import { LICENSE, TITLE_MAX } from "./format.ts";
import { parseSearch } from "./parse.ts";
import { editionName } from "./language.ts";
import { queryLanguage } from "../../mcp/next_calls.ts";

/** Most characters of a hit's snippet. */
const SNIPPET_MAX = 240;

/** The `opendata_search` source over the default language edition. */
export function wikipediaSearchSource(api: WikipediaApi): SearchSource {
  return {
    name: editionName(api.defaultLanguage),
    licence: `${LICENSE}: credit Wikipedia and its contributors`,
    widen: (query) => {
      // Another edition only for words that may be English (words of the default edition's
      // language stay there), fewer words only when that changes the query: never the same search.
      const words = query.trim().split(/\s+/);
      const english = api.defaultLanguage !== "en" && queryLanguage(query) !== api.defaultLanguage
        ? "en"
        : undefined;
      const fewer = words.length > 2 ? words.slice(0, 2).join(" ") : undefined;
      if (!english && !fewer) return [];
      return [{
        tool: "wikipedia-search",
        arguments: { query: fewer ?? query.trim(), language: english ?? api.defaultLanguage, limit: 5 },
        for: [english ? "English edition" : "", fewer ? "fewer words" : ""].filter(Boolean).join(", "),
      }];
    },
    async search(query: string, options: { limit: number }, ctx: ToolCallContext): Promise<SearchHits> {
      const language = api.defaultLanguage;
      const point = parseCoordinates(query);
      if (point) {
        return [{
          title: `Wikipedia articles near ${point.lat}, ${point.lon}`,
          next: {
            tool: "wikipedia-geosearch",
            arguments: { lat: point.lat, lon: point.lon, radius_m: 1000, limit: 10, language },
            for: "articles nearby",
          },
        }];
      }
      const answer = await api.call(
        language,
        {
          action: "query",
          list: "search",
          srsearch: query,
          srlimit: Math.max(1, Math.min(options.limit, 50)),
          srnamespace: 0,
          srprop: "timestamp|snippet",
          srinfo: "totalhits",
        },
        ctx,
        api.deadline(),
      );
      const parsed = parseSearch(answer.data);
      const hits = parsed.hits.slice(0, options.limit).map((h) => {
        const title = clip(h.title, TITLE_MAX);
        const hit: SearchHit = {
          title,
          url: api.pageUrl(language, title),
          next: { tool: "wikipedia-summary", arguments: { title, language } },
        };
        if (h.snippet) hit.snippet = clip(h.snippet, SNIPPET_MAX);
        if (h.timestamp) hit.date = h.timestamp;
        return hit;
      });
      return Object.assign(hits, {
        ...(typeof parsed.totalhits === "number" ? { total: parsed.totalhits } : {}),
        more: { tool: "wikipedia-search", arguments: { query, language, limit: 10 } },
      });
    },
  };
}
