// worldbank_explore_facets: the values of a facet (country, type, language...) with their counts.
import { formatText } from "../../../mcp/shaping.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { buildQuery } from "../client.ts";
import { partialFileOut } from "../../../output/result_files.ts";
import { fileName, writeFacetsFile } from "../files.ts";
import { facetsFileMarkdown, facetsMarkdown, sourceOf } from "../format.ts";
import { FACET_ARGUMENT, FACETS, facetsOutputSchema, upstreamFacet } from "../schemas.ts";
import type { FacetsOutput } from "../schemas.ts";
import { ANNOTATIONS, callContext, type ToolDeps, TOOLSET, type WorldbankInputs } from "../_common.ts";

/** `worldbank_explore_facets`. */
export function exploreFacetsTool(
  deps: ToolDeps,
  inputs: WorldbankInputs,
): ToolDefinition<WorldbankInputs["facets"], typeof facetsOutputSchema> {
  const { client, settings } = deps;
  return {
    name: "worldbank_explore_facets",
    title: "World Bank Document Facets",
    description: "World Bank document counts per facet value (country, language, type, ...): the " +
      "exact search filter values.",
    toolset: TOOLSET,
    input: inputs.facets,
    output: facetsOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const fields = [...new Set(args.facets)];
      const query = buildQuery({ query: args.query }, { rows: 0, facets: fields.map(upstreamFacet) }, {
        today: "",
      });
      const { page: wds, url } = await client.query(query, callContext(ctx));
      const source = sourceOf(url, settings.terms_url);
      if (args.output === "file") {
        const all = fields.map((field) => ({
          field,
          name: FACETS[field],
          values: wds.facets[upstreamFacet(field)] ?? [],
        }));
        const file = await writeFacetsFile(ctx.files, all, {
          name: fileName("facets", `${fields.join(" ")} ${args.query ?? ""}`),
          what: `World Bank document counts per value of ${fields.join(", ")}${
            args.query ? ` for "${args.query}"` : ""
          }`,
        });
        const structured: FacetsOutput = {
          total: wds.total,
          query: args.query ?? null,
          facets: all.map((f) => ({
            field: f.field,
            name: f.name,
            filter_argument: FACET_ARGUMENT[f.field] ?? null,
            values: [],
            available: f.values.length,
            remaining: 0,
          })),
          offset: 0,
          has_more: false,
          next_offset: null,
          file: partialFileOut(file, false),
          truncated: false,
          notice: null,
          source,
        };
        return {
          structured,
          text: formatText(args.response_format, structured, () => facetsFileMarkdown(structured)),
          content: [file.link],
        };
      }
      const limit = ctx.limits.characterLimit;
      const offset = args.offset;
      const all = fields.map((field) => wds.facets[upstreamFacet(field)] ?? []);
      // Every facet shows the same number of values, so one next_offset continues them all.
      const render = (perFacet: number) => {
        const facets = fields.map((field, i) => {
          const values = all[i]!;
          const shown = values.slice(offset, offset + perFacet);
          return {
            field,
            name: FACETS[field],
            filter_argument: FACET_ARGUMENT[field] ?? null,
            values: shown,
            available: values.length,
            remaining: Math.max(0, values.length - offset - shown.length),
          };
        });
        const hasMore = perFacet > 0 && facets.some((f) => f.remaining > 0);
        const truncated = perFacet < args.limit && all.some((v) => v.length > offset + perFacet);
        const notice = !truncated
          ? null
          : perFacet === 0
          ? `Response truncated: not even one value per facet fits the ${
            limit.toLocaleString("en-US")
          }-character limit with ${fields.length} facets. Ask for fewer facets per call.`
          : `Response truncated: showing ${perFacet} values per facet (of the ${args.limit} asked for) to stay within the ${
            limit.toLocaleString("en-US")
          }-character limit. To see more: call again with offset=${
            offset + perFacet
          } for the next values, ask for fewer facets per call, or a smaller "limit".`;
        const structured: FacetsOutput = {
          total: wds.total,
          query: args.query ?? null,
          facets,
          offset,
          has_more: hasMore,
          next_offset: hasMore ? offset + perFacet : null,
          truncated,
          notice,
          source,
        };
        return {
          structured,
          text: formatText(args.response_format, structured, () => facetsMarkdown(structured)),
        };
      };
      const fits = (r: { text: string; structured: unknown }) =>
        r.text.length <= limit && JSON.stringify(r.structured).length <= limit;
      let lo = 0;
      let hi = args.limit;
      if (fits(render(hi))) return render(hi);
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (fits(render(mid))) lo = mid;
        else hi = mid - 1;
      }
      return render(lo);
    },
  };
}
