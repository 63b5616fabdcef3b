// FRED's part of opendata_search: one series search (fred/series/search), a few hits, each with
// the fred_series call that fetches the series' observations.
import { shorten } from "../../mcp/shaping.ts";
import type { SearchHit, SearchSource } from "../../mcp/provider.ts";
import type { FredClient } from "./client.ts";
import { NOTICE, TERMS_URL } from "./format.ts";
import { isReadable, parseResponse } from "./parse.ts";

/** FRED's `last_updated` ("2013-07-31 09:26:16-05") as ISO 8601, or undefined when it is not that. */
export function isoTime(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})([+-]\d{2})(?::?(\d{2}))?$/.exec(text.trim());
  if (m) return `${m[1]}T${m[2]}${m[3]}:${m[4] ?? "00"}`;
  return /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? text.trim() : undefined;
}

function hit(item: Record<string, unknown>): SearchHit | undefined {
  const id = item["id"];
  if (typeof id !== "string" || id === "") return undefined;
  const facts = [item["frequency"], item["units"], item["seasonal_adjustment_short"]]
    .filter((v) => typeof v === "string" && v !== "");
  const range = item["observation_start"] && item["observation_end"]
    ? `${item["observation_start"]} to ${item["observation_end"]}`
    : undefined;
  const snippet = [facts.join(", "), range].filter(Boolean).join("; ");
  const date = isoTime(item["last_updated"]);
  return {
    title: `${typeof item["title"] === "string" ? item["title"] : id} (${id})`,
    ...(snippet ? { snippet: shorten(snippet, 200) } : {}),
    url: `https://fred.stlouisfed.org/series/${encodeURIComponent(id)}`,
    ...(date ? { date } : {}),
    // The latest values first (what is asked most); the whole history is one call further.
    next: {
      tool: "fred_series",
      arguments: { operation: "get_observations", series_id: id, sort_order: "desc", limit: 5 },
      for: "latest values",
    },
    also: [{
      tool: "fred_series",
      arguments: { operation: "get_observations", series_id: id, output: "file" },
      for: "whole history to a file",
    }],
  };
}

/** The FRED series search as an `opendata_search` source (only served with an API key). */
export function seriesSearch(client: FredClient): SearchSource {
  return {
    name: "FRED (Federal Reserve Economic Data)",
    languages: ["en"],
    // Only where it changes the words: the same words again would search the same way.
    widen: (query) => {
      const words = query.trim().split(/\s+/);
      if (words.length <= 2) return [];
      return [{
        tool: "fred_series",
        arguments: { operation: "search", search_text: words.slice(0, 2).join(" "), limit: 10 },
        for: "series search, fewer words",
      }];
    },
    licence: `${NOTICE} Terms: ${TERMS_URL}`,
    async search(query, { limit }, context) {
      const count = Math.max(1, Math.min(limit, 100));
      const response = await client.get("fred/series/search", { search_text: query, limit: count }, {
        signal: context.signal,
        logger: context.logger,
        cacheable: (data) => isReadable("series", data),
      });
      const parsed = parseResponse("series", response.data);
      const hits = parsed.items.slice(0, count).map(hit).filter((h): h is SearchHit => h !== undefined);
      return Object.assign(hits, {
        ...(parsed.total === undefined || parsed.total === null ? {} : { total: parsed.total }),
        more: { tool: "fred_series", arguments: { operation: "search", search_text: query, limit: 20 } },
      });
    },
  };
}
