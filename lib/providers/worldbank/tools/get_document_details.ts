// worldbank_get_document_details: one document's full record, its abstract read a part at a time.
import { cite } from "../../../output/provenance.ts";
import { ToolError } from "../../../errors.ts";
import { formatText, partEnd, safeIndex } from "../../../mcp/shaping.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { buildQuery, DETAIL_FIELDS } from "../client.ts";
import { details, detailsMarkdown, sourceOf } from "../format.ts";
import { detailsOutputSchema } from "../schemas.ts";
import type { DetailsOutput } from "../schemas.ts";
import { ANNOTATIONS, callContext, type ToolDeps, TOOLSET, type WorldbankInputs } from "../_common.ts";

/** `worldbank_get_document_details`. */
export function documentDetailsTool(
  deps: ToolDeps,
  inputs: WorldbankInputs,
): ToolDefinition<WorldbankInputs["details"], typeof detailsOutputSchema> {
  const { client, settings } = deps;
  return {
    name: "worldbank_get_document_details",
    title: "World Bank Document Details",
    description: "A World Bank document's full record and whole abstract (in parts when long: " +
      "offset=next_offset).",
    toolset: TOOLSET,
    input: inputs.details,
    output: detailsOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const id = args.document_id.replace(/^D/i, "");
      const call = callContext(ctx);
      const fields = DETAIL_FIELDS;
      let result = await client.query({ ...buildQuery({}, { rows: 1, fields }, { today: "" }), id }, call);
      let doc = result.page.documents.find((d) => d.id === id);
      // A guid (the long number in a documents.worldbank.org address) is not an id: try it as one.
      if (!doc && id.length >= 12) {
        result = await client.query(
          { ...buildQuery({}, { rows: 1, fields }, { today: "" }), guid: id },
          call,
        );
        doc = result.page.documents.find((d) => d.guid === id);
      }
      if (!doc) {
        throw new ToolError(
          "NOT_FOUND",
          `Document with ID "${args.document_id}" not found: the ID may be incorrect, or the document may have been removed`,
          {
            retryable: false,
            field: "document_id",
            hint: 'Use worldbank_search_documents to find the correct ID (the "id" of a result)',
          },
        );
      }
      const source = sourceOf(result.url, settings.terms_url);
      const full = details(doc);
      // The document's own page is the permalink people cite.
      if (full.url) cite({ permalink: full.url });
      const abstract = full.abstract ?? "";
      if (args.offset > 0 && args.offset >= abstract.length) {
        throw new ToolError(
          "VALIDATION_ERROR",
          `Offset ${args.offset} is past the end of the abstract (${abstract.length} characters)`,
          { field: "offset", hint: "Use next_offset from the previous result, or leave offset out" },
        );
      }
      const start = safeIndex(abstract, args.offset);
      const limit = ctx.limits.characterLimit;
      const render = (end: number, lists: { authors: number; keywords: number }) => {
        const cut = start > 0 || end < abstract.length;
        const hasMore = end < abstract.length;
        const notes: string[] = [];
        if (cut) {
          notes.push(
            `Abstract characters ${start}–${end} of ${abstract.length} shown to stay within the ${
              limit.toLocaleString("en-US")
            }-character limit${
              hasMore ? `: call again with offset=${end} for the rest` : ""
            }; it is whole on the document page${full.url ? ` (${full.url})` : ""}.`,
          );
        }
        const listCut = [
          lists.authors < doc.authors_total ? `${lists.authors} of ${doc.authors_total} authors` : null,
          lists.keywords < doc.keywords_total ? `${lists.keywords} of ${doc.keywords_total} keywords` : null,
        ].filter(Boolean);
        if (listCut.length) notes.push(`Showing ${listCut.join(" and ")}; the document page lists them all.`);
        const document = {
          ...full,
          abstract: full.abstract === null ? null : abstract.slice(start, end),
          authors: full.authors.slice(0, lists.authors),
          keywords: full.keywords.slice(0, lists.keywords),
        };
        const structured: DetailsOutput = {
          document,
          authors_total: doc.authors_total,
          keywords_total: doc.keywords_total,
          abstract_total: abstract.length,
          offset: start,
          has_more: hasMore,
          next_offset: hasMore ? end : null,
          truncated: notes.length > 0,
          notice: notes.length ? notes.join(" ") : null,
          source,
        };
        return {
          structured,
          text: formatText(args.response_format, structured, () => detailsMarkdown(structured)),
        };
      };
      const size = (r: { text: string; structured: unknown }) =>
        Math.max(r.text.length, JSON.stringify(r.structured).length);
      // Lists first leave the abstract at least a third of the limit (keywords go before authors).
      let lists = { authors: full.authors.length, keywords: full.keywords.length };
      const room = Math.floor(limit * 2 / 3);
      for (const key of ["keywords", "authors"] as const) {
        if (size(render(start, lists)) <= room) break;
        let lo = 0;
        let hi = lists[key];
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (size(render(start, { ...lists, [key]: mid })) <= room) lo = mid;
          else hi = mid - 1;
        }
        lists = { ...lists, [key]: lo };
      }
      let max = abstract.length - start;
      for (let i = 0; i < 16; i++) {
        const end = partEnd(abstract, start, abstract.length, max);
        const out = render(end, lists);
        const over = size(out) - limit;
        if (over <= 0) return out;
        max = end - start - over - 32;
        if (max < 1) break;
      }
      return render(start, lists);
    },
  };
}
