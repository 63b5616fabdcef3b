// What the documents view (MCP Apps) draws from worldbank_search_documents: each document with a
// citation, date, countries, type and links, and the call of the next page.
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { DocumentsModel } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";

type Json = Record<string, unknown>;

const text = (v: unknown): string | null => typeof v === "string" && v !== "" ? v : null;

/** "World Bank. 2021. Title. Report SYN-0001. documents.worldbank.org", from what the record has. */
function citation(d: Json): string {
  const year = text(d["document_date"])?.slice(0, 4);
  const parts = [
    "World Bank",
    year,
    text(d["title"]),
    text(d["report_number"]) ? `Report ${d["report_number"]}` : null,
  ];
  return `${parts.filter(Boolean).join(". ")}. documents.worldbank.org`;
}

/** The view of worldbank_search_documents. */
export const documentsView: ToolView<Json, Json> = {
  id: "documents",
  model(s, args) {
    if (!Array.isArray(s["documents"])) return undefined;
    const src = (s["source"] ?? {}) as Json;
    return {
      view: "documents",
      documents: (s["documents"] as Json[]).map((d) => ({
        title: text(d["title"]) ?? `Document ${d["id"] ?? ""}`,
        url: text(d["url"]) ?? text(d["pdf_url"]),
        citation: citation(d),
        date: text(d["document_date"]),
        country: Array.isArray(d["countries"])
          ? (d["countries"] as unknown[]).map(String).join(", ") || null
          : null,
        type: text(d["document_type"]) ?? text(d["major_document_type"]),
        snippet: text(d["abstract"]),
      })),
      query: text(s["query"]),
      total: numberOrNull(s["total"]),
      source: { name: "World Bank Documents & Reports", url: text(src["site"]) },
      licence:
        "Subject to the World Bank's terms and conditions; each document may carry its own rights statement",
      next: s["has_more"] === true && typeof s["next_offset"] === "number" && s["next_offset"] > 0
        ? callWith(args, { offset: s["next_offset"] })
        : null,
    } satisfies DocumentsModel;
  },
};
