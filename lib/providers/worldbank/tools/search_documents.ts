// worldbank_search_documents: documents by words and filters (WDS search), a page at a time or
// all to a file.
import { documentsView } from "../view.ts";
import { formatText } from "../../../mcp/shaping.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { buildQuery, SUMMARY_FIELDS } from "../client.ts";
import { fileName } from "../files.ts";
import { searchMarkdown, sourceOf } from "../format.ts";
import { searchOutputSchema } from "../schemas.ts";
import type { SearchOutput } from "../schemas.ts";
import { ANNOTATIONS, callContext, today, type ToolDeps, TOOLSET, type WorldbankInputs } from "../_common.ts";
import { documentsFile, filePart, pageOf } from "../documents.ts";

/** `worldbank_search_documents`. */
export function searchDocumentsTool(
  deps: ToolDeps,
  inputs: WorldbankInputs,
): ToolDefinition<WorldbankInputs["search"], typeof searchOutputSchema> {
  const { client, settings } = deps;
  return {
    name: "worldbank_search_documents",
    title: "Search World Bank Documents",
    description: "Searches World Bank Documents & Reports; returns a page of documents with short " +
      "abstracts and links.",
    toolset: TOOLSET,
    input: inputs.search,
    output: searchOutputSchema,
    view: documentsView,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const todayIs = today(deps.clock);
      const query = buildQuery(
        { ...args },
        { rows: args.limit, offset: args.offset, fields: SUMMARY_FIELDS },
        { today: todayIs },
      );
      const filters = {
        countries: args.countries ?? [],
        document_types: args.document_types ?? [],
        languages: args.languages ?? [],
        date_from: args.date_from ?? null,
        date_to: typeof query["enddate"] === "string" ? query["enddate"] : null,
        sort_by: args.sort_by,
        sort_order: args.sort_order,
      };
      if (args.output === "file") {
        const { written, url } = await documentsFile(deps, { ...args }, args.offset, ctx, {
          name: fileName("documents", args.query),
          what: `World Bank documents matching "${args.query}"`,
        });
        const part = filePart(written, args.offset);
        const structured: SearchOutput = {
          ...part.envelope,
          query: args.query,
          filters,
          file: part.file,
          truncated: part.truncated,
          notice: part.notice,
          source: sourceOf(url, settings.terms_url),
        };
        return {
          structured,
          text: formatText(args.response_format, structured, () => searchMarkdown(structured)),
          content: [written.file.link],
        };
      }
      const { page: wds, url } = await client.query(query, callContext(ctx));
      const source = sourceOf(url, settings.terms_url);
      return pageOf(
        deps,
        wds.documents,
        wds.total,
        args.offset,
        args.limit,
        ctx,
        "countries, document_types, languages, date_from/date_to",
        (p) => {
          const structured: SearchOutput = { ...p.envelope, query: args.query, filters, ...p.rest, source };
          return {
            structured,
            text: formatText(args.response_format, structured, () => searchMarkdown(structured)),
          };
        },
      );
    },
  };
}
