// The World Bank's part of `opendata_search`: one WDS request for the query, a few documents,
// each with the exact call that returns its whole record.
import type { Logger } from "../../log.ts";
import { shorten } from "../../mcp/shaping.ts";
import type { NextCall, SearchHit, SearchHits, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import { buildQuery } from "./client.ts";
import type { WdsClient } from "./client.ts";
import type { WdsDocument } from "./parse.ts";

/** Most hits one search asks WDS for. */
const MAX_HITS = 10;

/** Fields a hit shows. */
const HIT_FIELDS = ["id", "display_title", "docna", "repnme", "docdt", "docty", "count", "abstracts", "url"];

/** The search source over the WDS client; `termsUrl` is the configured terms. */
export function createSearchSource(client: WdsClient, termsUrl: string): SearchSource {
  return {
    name: "World Bank Documents & Reports",
    languages: ["en"],
    licence:
      `World Bank terms and conditions (${termsUrl}); each document may carry its own rights statement`,
    async search(query: string, options: { limit: number }, context: ToolCallContext): Promise<SearchHits> {
      const rows = Math.max(1, Math.min(MAX_HITS, options.limit));
      const request = buildQuery({ query }, { rows, fields: HIT_FIELDS }, { today: "" });
      const call: { signal: AbortSignal; logger: Logger } = {
        signal: context.signal,
        logger: context.logger,
      };
      const { page } = await client.query(request, call);
      return Object.assign(page.documents.slice(0, rows).map((d) => hit(d, query)), {
        total: page.total,
        more: { tool: "worldbank_search_documents", arguments: { query, limit: 10 } },
      });
    },
    widen: (query) => {
      const words = query.trim().split(/\s+/);
      return [{
        tool: "worldbank_search_documents",
        arguments: { query: words.length > 1 ? words.slice(0, -1).join(" ") : query, sort_by: "relevance" },
        for: "document search, fewer words",
      }];
    },
  };
}

/** The document search narrowed to `doc`'s type and first country: more like it. */
function filtered(doc: WdsDocument, query: string): NextCall[] {
  const filters: Record<string, unknown> = {};
  if (doc.document_type) filters["document_types"] = [doc.document_type];
  if (doc.countries[0]) filters["countries"] = [doc.countries[0]];
  if (Object.keys(filters).length === 0) return [];
  return [{
    tool: "worldbank_search_documents",
    arguments: { query, ...filters, sort_by: "docdt", limit: 5 },
    for: `newest ${[doc.document_type, doc.countries[0]].filter(Boolean).join(", ")} documents`,
  }];
}

function hit(doc: WdsDocument, query: string): SearchHit {
  const about = [doc.document_type, doc.countries.slice(0, 3).join(", ")].filter(Boolean).join(" · ");
  const snippet = [about, doc.abstract ? shorten(doc.abstract, 200) : null].filter(Boolean).join(": ");
  // Year-1 placeholder dates tell hits apart by nothing.
  const date = doc.document_date && !doc.document_date.startsWith("0001") ? doc.document_date : null;
  return {
    title: doc.title,
    ...(snippet ? { snippet } : {}),
    ...(doc.url ? { url: doc.url } : {}),
    ...(date ? { date } : {}),
    next: { tool: "worldbank_get_document_details", arguments: { document_id: doc.id }, for: "details" },
    also: filtered(doc, query),
  };
}
