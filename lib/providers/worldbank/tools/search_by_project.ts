// worldbank_search_by_project: the documents of one World Bank project.
import { formatText } from "../../../mcp/shaping.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { buildQuery, SUMMARY_FIELDS } from "../client.ts";
import type { SearchFilters } from "../client.ts";
import { fileName } from "../files.ts";
import { projectMarkdown, sourceOf } from "../format.ts";
import { projectOutputSchema } from "../schemas.ts";
import type { ProjectOutput } from "../schemas.ts";
import { ANNOTATIONS, callContext, today, type ToolDeps, TOOLSET, type WorldbankInputs } from "../_common.ts";
import { documentsFile, filePart, pageOf } from "../documents.ts";

/** `worldbank_search_by_project`. */
export function searchByProjectTool(
  deps: ToolDeps,
  inputs: WorldbankInputs,
): ToolDefinition<WorldbankInputs["project"], typeof projectOutputSchema> {
  const { client, settings } = deps;
  return {
    name: "worldbank_search_by_project",
    title: "World Bank Project Documents",
    description: "Lists a World Bank project's documents, newest first, paged like the search.",
    toolset: TOOLSET,
    input: inputs.project,
    output: projectOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const projectId = args.project_id.toUpperCase();
      const filters: SearchFilters = { project_id: projectId, sort_by: "docdt", sort_order: "desc" };
      if (args.output === "file") {
        const { written, url } = await documentsFile(deps, filters, args.offset, ctx, {
          name: fileName("project", projectId),
          what: `World Bank documents of project ${projectId}`,
        });
        const part = filePart(written, args.offset);
        const structured: ProjectOutput = {
          ...part.envelope,
          project_id: projectId,
          file: part.file,
          truncated: part.truncated,
          notice: part.notice,
          source: sourceOf(url, settings.terms_url),
        };
        return {
          structured,
          text: formatText(args.response_format, structured, () => projectMarkdown(structured)),
          content: [written.file.link],
        };
      }
      const query = buildQuery(
        filters,
        { rows: args.limit, offset: args.offset, fields: SUMMARY_FIELDS },
        { today: today(deps.clock) },
      );
      const { page: wds, url } = await client.query(query, callContext(ctx));
      const source = sourceOf(url, settings.terms_url);
      return pageOf(deps, wds.documents, wds.total, args.offset, args.limit, ctx, null, (p) => {
        const structured: ProjectOutput = { ...p.envelope, project_id: projectId, ...p.rest, source };
        return {
          structured,
          text: formatText(args.response_format, structured, () => projectMarkdown(structured)),
        };
      });
    },
  };
}
