// What the documents view (MCP Apps) draws from snl-search: each article with a citation, its
// subject, the first sentences and a link, and the call of the next page.
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { DocumentsModel } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";

type Json = Record<string, unknown>;

const text = (v: unknown): string | null => typeof v === "string" && v !== "" ? v : null;

/** The view of snl-search. */
export const snlSearchView: ToolView<Json, Json> = {
  id: "documents",
  model(s, args) {
    if (!Array.isArray(s["results"])) return undefined;
    const encyclopedia = text(s["encyclopedia"]) ?? "Store norske leksikon";
    const src = (s["source"] ?? {}) as Json;
    return {
      view: "documents",
      documents: (s["results"] as Json[]).map((r) => {
        const taxonomy = r["taxonomy"] as Json | null | undefined;
        const licence = text(r["license_name"]);
        return {
          title: text(r["title"]) ?? text(r["headword"]) ?? "(untitled)",
          url: text(r["url"]),
          citation: `"${text(r["headword"]) ?? text(r["title"]) ?? ""}" in ${encyclopedia}${
            licence ? ` (licence: ${licence})` : ""
          }`,
          type: text(taxonomy?.["title"]) ?? "Encyclopedia article",
          snippet: text(r["first_sentences"]) ?? text(r["snippet"]),
        };
      }),
      query: text(s["query"]),
      total: numberOrNull(s["total"]),
      source: { name: encyclopedia, url: null },
      licence: text(src["license"]) ?? "Per article (license_name)",
      next: s["has_more"] === true && typeof s["next_offset"] === "number"
        ? callWith(args, { offset: s["next_offset"] })
        : null,
    } satisfies DocumentsModel;
  },
};
