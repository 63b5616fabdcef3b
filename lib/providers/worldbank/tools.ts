import { documentsView } from "./view.ts";
import { cite } from "../../output/provenance.ts";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import { fitToLimit, formatText, page } from "../../mcp/output.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { buildQuery, DETAIL_FIELDS, SUMMARY_FIELDS } from "./client.ts";
import type { SearchFilters, WdsClient } from "./client.ts";
import type { WorldbankSettings } from "./settings.ts";
import { partialFileOut } from "../../output/result_files.ts";
import { FILE_PAGE_SIZE, fileName, writeDocumentsFile, writeFacetsFile } from "./files.ts";
import type { DocumentsFile } from "./files.ts";
import {
  details,
  detailsMarkdown,
  facetsFileMarkdown,
  facetsMarkdown,
  fileNotice,
  pageNotice,
  projectMarkdown,
  searchMarkdown,
  sourceOf,
  summarize,
} from "./format.ts";
import { createInputs } from "./inputs.ts";
import type { WdsDocument } from "./parse.ts";
import {
  detailsOutputSchema,
  FACET_ARGUMENT,
  FACETS,
  facetsOutputSchema,
  projectOutputSchema,
  searchOutputSchema,
  upstreamFacet,
} from "./schemas.ts";
import type { DetailsOutput, FacetsOutput, ProjectOutput, SearchOutput } from "./schemas.ts";

// Seed 000's annotations: every tool only reads a public, changing, external collection. (A file
// written by output: "file" is a new file of the caller's own, never a change to anything there.)
const ANNOTATIONS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;

/** The toolset all four tools belong to. */
export const TOOLSET = "worldbank";

/** What the tools share: the upstream client, the settings and the clock (for "today"). */
export interface ToolDeps {
  client: WdsClient;
  settings: WorldbankSettings;
  clock: Clock;
}

function today(clock: Clock): string {
  return new Date(clock.now()).toISOString().slice(0, 10);
}

function callContext(ctx: ToolCallContext): { signal: AbortSignal; logger: ToolCallContext["logger"] } {
  return { signal: ctx.signal, logger: ctx.logger };
}

/** Creates the provider's four tools over one client. */
export function createTools(deps: ToolDeps): ToolDefinition[] {
  const { client, settings } = deps;
  const inputs = createInputs(settings.file_max_documents);
  const { search: searchInput, details: detailsInput, facets: facetsInput, project: projectInput } = inputs;

  /** Writes every document of a search from `offset` (up to the cap) to a CSV file. */
  async function documentsFile(
    filters: SearchFilters,
    offset: number,
    ctx: ToolCallContext,
    naming: { name: string; what: string },
  ): Promise<{ written: DocumentsFile; url: string }> {
    const call = callContext(ctx);
    const cap = settings.file_max_documents;
    const request = (at: number, rows: number) =>
      buildQuery(filters, { rows, offset: at, fields: SUMMARY_FIELDS }, { today: today(deps.clock) });
    const first = await client.query(request(offset, Math.min(FILE_PAGE_SIZE, cap)), call);
    const written = await writeDocumentsFile({
      files: ctx.files,
      name: naming.name,
      what: `${naming.what}${offset ? ` from offset ${offset}` : ""}`,
      first: first.page,
      offset,
      cap,
      fetchPage: async (at, rows) => (await client.query(request(at, rows), call)).page,
      clock: deps.clock,
      signal: ctx.signal,
    });
    return { written, url: first.url };
  }

  /** The envelope, file block and notice of a documents file. */
  function filePart(w: DocumentsFile, offset: number) {
    const envelope = page(w.total, offset, w.written);
    const partial = envelope.has_more;
    return {
      envelope,
      file: partialFileOut(w.file, partial),
      truncated: partial,
      notice: fileNotice({ file: w.file, written: w.written, offset, total: w.total, stopped: w.stopped }),
    };
  }

  /** The page of summaries, its envelope and notice, cut to the character limit. */
  function pageOf<S>(
    docs: WdsDocument[],
    total: number,
    offset: number,
    limit: number,
    ctx: ToolCallContext,
    filtersAdvice: string | null,
    build: (parts: ReturnType<typeof pagePart>) => { structured: S; text: string },
  ): { text: string; structured: S } {
    // Abstracts are shortened in proportion to the limit too, so at least one document fits.
    const abstractChars = Math.max(
      100,
      Math.min(settings.abstract_chars, Math.floor(ctx.limits.characterLimit / 4)),
    );
    const summaries = docs.slice(0, limit).map((d) => summarize(d, abstractChars));
    // A total below what was received would make the envelope claim there is nothing here.
    const known = Math.max(total, summaries.length ? offset + summaries.length : 0);
    const fitted = fitToLimit(summaries, ctx.limits.characterLimit, ({ items, truncated }) => {
      const envelope = page(known, offset, items.length);
      const notice = truncated
        ? pageNotice({
          received: summaries.length,
          shown: items.length,
          nextOffset: envelope.next_offset,
          limit: ctx.limits.characterLimit,
          filters: filtersAdvice,
        })
        : null;
      return build(pagePart(envelope, items, truncated, notice));
    });
    return { text: fitted.text, structured: fitted.structured };
  }

  const searchTool: ToolDefinition<typeof searchInput, typeof searchOutputSchema> = {
    name: "worldbank_search_documents",
    title: "Search World Bank Documents",
    description: "Searches World Bank Documents & Reports; returns a page of documents with short " +
      "abstracts and links.",
    toolset: TOOLSET,
    input: searchInput,
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
        const { written, url } = await documentsFile({ ...args }, args.offset, ctx, {
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

  const detailsTool: ToolDefinition<typeof detailsInput, typeof detailsOutputSchema> = {
    name: "worldbank_get_document_details",
    title: "World Bank Document Details",
    description: "A World Bank document's full record and whole abstract (in parts when long: " +
      "offset=next_offset).",
    toolset: TOOLSET,
    input: detailsInput,
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
        const end = cutPoint(abstract, start, max);
        const out = render(end, lists);
        const over = size(out) - limit;
        if (over <= 0) return out;
        max = end - start - over - 32;
        if (max < 1) break;
      }
      return render(start, lists);
    },
  };

  const facetsTool: ToolDefinition<typeof facetsInput, typeof facetsOutputSchema> = {
    name: "worldbank_explore_facets",
    title: "World Bank Document Facets",
    description: "World Bank document counts per facet value (country, language, type, ...): the " +
      "exact search filter values.",
    toolset: TOOLSET,
    input: facetsInput,
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

  const projectTool: ToolDefinition<typeof projectInput, typeof projectOutputSchema> = {
    name: "worldbank_search_by_project",
    title: "World Bank Project Documents",
    description: "Lists a World Bank project's documents, newest first, paged like the search.",
    toolset: TOOLSET,
    input: projectInput,
    output: projectOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const projectId = args.project_id.toUpperCase();
      const filters: SearchFilters = { project_id: projectId, sort_by: "docdt", sort_order: "desc" };
      if (args.output === "file") {
        const { written, url } = await documentsFile(filters, args.offset, ctx, {
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
      return pageOf(wds.documents, wds.total, args.offset, args.limit, ctx, null, (p) => {
        const structured: ProjectOutput = { ...p.envelope, project_id: projectId, ...p.rest, source };
        return {
          structured,
          text: formatText(args.response_format, structured, () => projectMarkdown(structured)),
        };
      });
    },
  };

  return [searchTool, detailsTool, facetsTool, projectTool] as ToolDefinition[];
}

function pagePart(
  envelope: ReturnType<typeof page>,
  documents: ReturnType<typeof summarize>[],
  truncated: boolean,
  notice: string | null,
) {
  return { envelope, rest: { documents, truncated, notice } };
}

function safeIndex(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return Math.max(0, Math.min(i, text.length));
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

/** Where a part of at most `max` characters from `start` ends: a paragraph, sentence or word boundary. */
function cutPoint(text: string, start: number, max: number): number {
  if (text.length - start <= max) return text.length;
  const limit = start + Math.max(1, max);
  const floor = start + Math.floor(max / 2);
  for (const sep of ["\n\n", "\n", ". ", " "]) {
    const at = text.lastIndexOf(sep, limit - sep.length);
    if (at >= floor) return at + sep.length;
  }
  return safeIndex(text, limit);
}
