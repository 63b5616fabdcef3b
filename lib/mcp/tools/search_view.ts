// What the documents view (MCP Apps) draws from an opendata_search answer: every hit as a list
// item with its link and its source, and the sources' licences. The hits' next calls stay in the
// text and structured content, where the model reads them.
import { creditLine } from "../../output/credit.ts";
import type { ToolView } from "../provider.ts";
import type { DocumentsModel } from "../views/model.ts";
import { type CoreScope, sourceId } from "./_core.ts";

/** The parts of opendata_search's answer the view reads (search.ts declares the whole). */
interface SearchAnswer {
  sources: { id: string; hits: { title: string; url?: string | undefined }[] }[];
  total_hits: number;
}

/** The view of opendata_search for one server instance. */
export function searchView(
  scope: CoreScope,
): ToolView<SearchAnswer, { query: string }> {
  return {
    id: "documents",
    model(s, args): DocumentsModel {
      const sources = new Map(scope.searchable.map((p) => [sourceId(p), p.search!]));
      const answered = s.sources.filter((x) => x.hits.length > 0);
      const name = (id: string) => sources.get(id)?.name ?? id;
      const licences = [...new Set(answered.map((x) => sources.get(x.id)?.licence ?? "").filter(Boolean))];
      return {
        view: "documents",
        documents: answered.flatMap((x) =>
          x.hits.map((h) => ({ title: h.title, url: h.url ?? null, type: name(x.id) }))
        ),
        query: args.query,
        total: s.total_hits,
        source: { name: answered.map((x) => name(x.id)).join("; ") || "opendata_search" },
        licence: licences.map(creditLine).join(" · "),
      };
    },
  };
}
