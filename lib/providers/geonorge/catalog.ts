// One search of GeoNorge's catalogue (kartkatalog.geonorge.no/api/search), shared by
// geonorge-datasets and the opendata_search source, with the organization fallback.
import { clientSettings } from "../../http/settings.ts";
import type { HttpClient, QueryValue } from "../../http/fetch_client.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import { originOf, ssrfGuard } from "../../http/ssrf.ts";
import type { Logger } from "../../log.ts";
import { holdsWord } from "../../html.ts";
import type { GeonorgeSettings } from "./settings.ts";
import { parseSearch } from "./parse.ts";
import type { CatalogEntry } from "./parse.ts";

/** Most entries read for the organization fallback (a text search filtered here). */
const FALLBACK_WINDOW = 200;

/** What to search for. */
export interface CatalogQuery {
  query?: string | undefined;
  /** null: every organization. */
  organization: string | null;
  /** "any" or one entry type. */
  type: string;
  /** Entries read from the start (the catalogue's offset base is not documented: it is never sent). */
  limit: number;
}

/** What a search found. */
export interface CatalogAnswer {
  entries: CatalogEntry[];
  /** Entries matching in all, when the catalogue said. */
  numFound: number | null;
  warnings: string[];
  url: string;
}

/** Whether a body reads as search results (one that does not is not kept in the cache). */
function searchDecodes(data: unknown): boolean {
  try {
    parseSearch(data);
    return true;
  } catch {
    return false;
  }
}

/** The catalogue's search API through the shared HTTP client. */
export class Catalog {
  #http: HttpClient;

  constructor(settings: GeonorgeSettings, runtime: HttpRuntime) {
    this.#http = runtime.client({
      provider: "geonorge",
      upstreamName: "GeoNorge's catalogue (kartkatalog.geonorge.no)",
      licence: "Catalogue metadata by Kartverket; each dataset states its own terms",
      ...clientSettings(settings),
      checkUrl: ssrfGuard({ trustedOrigins: [originOf(settings.base_url)] }),
    });
  }

  /**
   * The first `q.limit` entries. When the organization facet matches nothing, the organization's
   * name is searched as text and entries whose organization contains it are kept (the facet value
   * may be a longer name, "Riksantikvaren - Direktoratet for kulturminneforvaltning").
   */
  async search(q: CatalogQuery, call: { signal: AbortSignal; logger: Logger }): Promise<CatalogAnswer> {
    const query: Record<string, QueryValue> = { limit: q.limit };
    if (q.query) query["text"] = q.query;
    let facet = 0;
    if (q.organization) {
      query[`facets[${facet}].name`] = "organization";
      query[`facets[${facet++}].value`] = q.organization;
    }
    if (q.type !== "any") {
      query[`facets[${facet}].name`] = "type";
      query[`facets[${facet++}].value`] = q.type;
    }
    const r = await this.#http.json<unknown>("api/search", { query, ...call, cacheable: searchDecodes });
    const parsed = parseSearch(r.data);
    if (!q.organization || parsed.entries.length > 0) {
      return { entries: parsed.entries, numFound: parsed.numFound, warnings: [], url: r.url };
    }
    const fallback: Record<string, QueryValue> = {
      limit: Math.max(q.limit, FALLBACK_WINDOW),
      text: [q.query, q.organization].filter(Boolean).join(" "),
    };
    if (q.type !== "any") Object.assign(fallback, { "facets[0].name": "type", "facets[0].value": q.type });
    const f = await this.#http.json<unknown>("api/search", {
      query: fallback,
      ...call,
      cacheable: searchDecodes,
    });
    const org = q.organization.toLowerCase();
    // The fallback's text holds the organization's name too, which every entry of it matches: an
    // entry is kept only when it also mentions a word of the query (else a search for "USD/JPY"
    // would answer with the organization's whole catalogue).
    // The organization's own words, which its entries' texts are likely to hold, pick none of them.
    const named = new Set(queryWords(q.organization));
    const words = queryWords(q.query ?? "").filter((w) => !named.has(w));
    return {
      entries: parseSearch(f.data).entries.filter((e) =>
        (e.organization ?? "").toLowerCase().includes(org) && mentionsAny(e, words)
      ),
      numFound: null,
      warnings: [
        // The catalogue cannot tell a facet value it does not know from words it did not find.
        `Nothing matched with the organization filter "${q.organization}"${
          q.query ? ` and the words "${q.query}"` : ""
        } (an organization is matched by its exact catalogue name); searched its name as text and kept entries whose organization contains it${
          words.length ? " and that mention a word of the query" : ""
        }`,
      ],
      url: f.url,
    };
  }
}

/** The words of a query (folded, two letters or more) an entry found by the fallback must mention one of. */
export function queryWords(query: string): string[] {
  return [
    ...new Set(query.normalize("NFKC").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 2)),
  ];
}

/**
 * Whether an entry's title or abstract holds one of `words` (any entry when there are none): a
 * word of three letters or fewer only as a whole word ("og", "set" are in most texts' words).
 */
function mentionsAny(e: CatalogEntry, words: readonly string[]): boolean {
  if (words.length === 0) return true;
  const hay = `${e.title}\n${e.abstract ?? ""}`.normalize("NFKC").toLowerCase();
  return words.some((w) => holdsWord(hay, w, true));
}
