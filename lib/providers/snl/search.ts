// SNL's part of `opendata_search`: one search of Store norske leksikon, each hit with the
// snl-article call that reads it.
import { clip, inlineText } from "../../html.ts";
import type { SearchHit, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import type { SnlApi } from "./client.ts";
import { errorMessageOf, parseSearch } from "./parse.ts";
import { SITES } from "./sites.ts";
import { ToolError } from "../../errors.ts";

/** Most characters of a hit's snippet. */
const SNIPPET_MAX = 240;

/** The `opendata_search` source over snl.no. */
export function snlSearchSource(api: SnlApi): SearchSource {
  return {
    name: SITES.snl.name,
    languages: ["no"],
    licence:
      'Per article: "fri" = CC BY-SA 3.0 (credit the authors and SNL), "begrenset" = no reuse without permission',
    widen: (query) => [{
      tool: "snl-search",
      arguments: { query: query.trim().split(/\s+/)[0] ?? query, site: "nbl", limit: 5 },
      for: "biographies (nbl), first word",
    }],
    async search(query: string, options: { limit: number }, ctx: ToolCallContext): Promise<SearchHit[]> {
      const answer = await api.search(
        "snl",
        { query, limit: Math.max(1, Math.min(options.limit, 10)), offset: 0 },
        ctx,
        api.deadline(),
      );
      const hits = parseSearch(answer.data);
      if (hits === null) {
        const refusal = errorMessageOf(answer.data);
        throw new ToolError(
          refusal === null ? "DECODE_ERROR" : "API_ERROR",
          refusal === null
            ? `${SITES.snl.name} sent a search answer of an unexpected shape`
            : `${SITES.snl.name} answered with an error: "${refusal}"`,
        );
      }
      return hits.filter((h) => h.slug !== null || h.url !== null).slice(0, options.limit).map((h) => {
        const hit: SearchHit = {
          title: clip(inlineText(h.title), 300),
          next: {
            tool: "snl-article",
            arguments: h.slug !== null ? { slug: h.slug } : { url: h.url },
          },
        };
        const about = h.firstSentences ?? h.snippet;
        if (about) hit.snippet = clip(inlineText(about), SNIPPET_MAX);
        const url = h.url ?? `${api.origin("snl")}/${encodeURIComponent(h.slug!.toWellFormed())}`;
        hit.url = url;
        return hit;
      });
    },
  };
}
