import { z } from "zod";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import { NOT_WELL_FORMED } from "../../html.ts";
import { fitToLimit, formatText, page, responseFormatField } from "../../mcp/output.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { buildQuery, DETAIL_FIELDS, SUMMARY_FIELDS } from "./client.ts";
import type { WdsClient } from "./client.ts";
import type { WorldbankSettings } from "./config.ts";
import {
  details,
  detailsMarkdown,
  facetsMarkdown,
  pageNotice,
  projectMarkdown,
  searchMarkdown,
  sourceOf,
  summarize,
} from "./format.ts";
import type { WdsDocument } from "./parse.ts";
import {
  detailsOutputSchema,
  FACET_ARGUMENT,
  FACETS,
  facetsOutputSchema,
  projectOutputSchema,
  searchOutputSchema,
  SORT_FIELDS,
} from "./schemas.ts";
import type { DetailsOutput, FacetField, FacetsOutput, ProjectOutput, SearchOutput } from "./schemas.ts";

// Seed 000's annotations: every tool only reads a public, changing, external collection.
const ANNOTATIONS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;

/** What the tools share: the upstream client, the settings and the clock (for "today"). */
export interface ToolDeps {
  client: WdsClient;
  settings: WorldbankSettings;
  clock: Clock;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

function isCalendarDate(value: string): boolean {
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

function dateField(which: string) {
  return z.string().trim()
    .regex(DATE_RE, 'expected a date as YYYY-MM-DD, e.g. "2020-01-31"')
    .refine(isCalendarDate, "is not a real calendar date")
    .optional()
    .describe(
      `${which} document date, YYYY-MM-DD (inclusive). ` +
        (which === "Earliest"
          ? "When only this is given, the search runs up to today."
          : "Use with date_from for a range."),
    );
}

function filterList(max: number, what: string, examples: string) {
  return z.array(
    z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters")
      .refine((v) => !v.includes("^"), 'must not contain "^": give each value as its own list item')
      .refine((v) => v.isWellFormed(), NOT_WELL_FORMED),
  )
    .max(max, `at most ${max} ${what} are accepted`)
    .optional()
    .describe(
      `${what[0]!.toUpperCase()}${
        what.slice(1)
      } to match exactly (case-sensitive, any of them; at most ${max}), ` +
        `e.g. ${examples}. Exact values come from worldbank_explore_facets.`,
    );
}

const limitField = z.number().int().min(1).max(100).default(20).describe(
  "Documents per page, 1-100 (default 20)",
);
const offsetField = z.number().int().min(0).default(0).describe(
  "How many matching documents to skip (default 0); use next_offset from a previous result",
);

const searchInput = z.strictObject({
  query: z.string().trim().min(1, "must not be empty").max(500, "must be at most 500 characters")
    .refine((v) => v.isWellFormed(), NOT_WELL_FORMED).describe(
      "Search terms, matched in titles, abstracts, report and project numbers and names, countries and " +
        'other core fields; all words must match, quote a phrase for phrase search. E.g. "climate adaptation"',
    ),
  countries: filterList(20, "countries", '["Kenya", "Tanzania"] (names, not codes; "World" for global work)'),
  document_types: filterList(
    10,
    "document types",
    '["Policy Research Working Paper", "Project Appraisal Document"]',
  ),
  languages: filterList(5, "languages", '["English", "French"]'),
  date_from: dateField("Earliest"),
  date_to: dateField("Latest"),
  sort_by: z.enum(SORT_FIELDS).default("relevance").describe(
    'Sort field: "relevance" (default, best match first), "docdt" (document date), "docty" (document ' +
      'type), "docna" (document name) or "repnb" (report number)',
  ),
  sort_order: z.enum(["asc", "desc"]).default("desc").describe(
    'Order for sort_by other than relevance: "desc" (default; newest first for docdt) or "asc" ' +
      "(oldest first; some records carry placeholder year-1 dates, which come first)",
  ),
  limit: limitField,
  offset: offsetField,
  response_format: responseFormatField,
}).superRefine((args, ctx) => {
  if (args.date_from && args.date_to && args.date_from > args.date_to) {
    ctx.addIssue({
      code: "custom",
      path: ["date_to"],
      message: `must not be before "date_from" ("${args.date_from}")`,
    });
  }
});

const detailsInput = z.strictObject({
  document_id: z.string().trim()
    .regex(
      /^D?\d{1,20}$/i,
      'expected a numeric WDS document id such as "18419181" (the "id" of a search result; a leading "D" is allowed)',
    )
    .describe(
      'Document id from a search result, e.g. "18419181". The long number in a documents.worldbank.org ' +
        'address (the "guid") is accepted too.',
    ),
  offset: z.number().int().min(0).default(0).describe(
    "Character offset into the abstract, to read a long one in parts: pass next_offset from the previous result (default 0)",
  ),
  response_format: responseFormatField,
});

const facetNames = Object.keys(FACETS) as [FacetField, ...FacetField[]];

const facetsInput = z.strictObject({
  facets: z.array(z.enum(facetNames))
    .min(1, "name at least one facet")
    .max(10, "at most 10 facets are accepted")
    .describe(
      "Facet fields to count, 1-10: " +
        facetNames.map((f) => `${f} (${FACETS[f]})`).join(", ") +
        ". count_exact, docty_exact and lang_exact values feed worldbank_search_documents' " +
        "countries, document_types and languages filters.",
    ),
  query: z.string().trim().min(1, "must not be empty").max(500, "must be at most 500 characters")
    .refine((v) => v.isWellFormed(), NOT_WELL_FORMED).optional()
    .describe("Search terms to scope the counts to (omit to count over all documents)"),
  limit: z.number().int().min(1).max(100).default(20).describe(
    "Most values listed per facet, 1-100 (default 20)",
  ),
  offset: z.number().int().min(0).max(10_000).default(0).describe(
    "Values to skip in each facet, to continue a list: pass next_offset from the previous result (default 0)",
  ),
  response_format: responseFormatField,
});

const projectInput = z.strictObject({
  project_id: z.string().trim()
    .regex(/^P\d{6}$/i, 'expected a World Bank project id: "P" followed by six digits, e.g. "P123365"')
    .describe('World Bank project id: "P" and six digits, e.g. "P123365" (as on projects.worldbank.org)'),
  limit: limitField,
  offset: offsetField,
  response_format: responseFormatField,
});

function today(clock: Clock): string {
  return new Date(clock.now()).toISOString().slice(0, 10);
}

function callContext(ctx: ToolCallContext): { signal: AbortSignal; logger: ToolCallContext["logger"] } {
  return { signal: ctx.signal, logger: ctx.logger };
}

/** Creates the provider's four tools over one client. */
export function createTools(deps: ToolDeps): ToolDefinition[] {
  const { client, settings } = deps;

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
    description: "Search the World Bank's Documents & Reports collection (reports, working papers, project " +
      "documents, procurement plans, ...) by topic, with optional filters for countries, document types, " +
      "languages and a date range, sorted by relevance or a field, one page at a time. Returns per " +
      "document: id, title, date, countries, type, languages, report and project numbers, a shortened " +
      "abstract and links to the document page and PDF, plus total/count/offset/has_more/next_offset. " +
      "Use worldbank_explore_facets first to learn exact filter values, and " +
      "worldbank_get_document_details for one document's full record.",
    input: searchInput,
    output: searchOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const query = buildQuery(
        { ...args },
        { rows: args.limit, offset: args.offset, fields: SUMMARY_FIELDS },
        { today: today(deps.clock) },
      );
      const { page: wds, url } = await client.query(query, callContext(ctx));
      const filters = {
        countries: args.countries ?? [],
        document_types: args.document_types ?? [],
        languages: args.languages ?? [],
        date_from: args.date_from ?? null,
        date_to: typeof query["enddate"] === "string" ? query["enddate"] : null,
        sort_by: args.sort_by,
        sort_order: args.sort_order,
      };
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
    title: "Get World Bank Document Details",
    description:
      "Get the full record of one World Bank document by its id (from worldbank_search_documents " +
      "or worldbank_search_by_project): title, date, type, countries, languages, authors, report number, " +
      "volume, collection, project, region, disclosure date, keywords, the whole abstract and links to " +
      "the document page, PDF and text version. An abstract too long for one result comes in parts: " +
      "continue with offset=next_offset.",
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
    title: "Explore World Bank Document Facets",
    description: "List the values of up to 10 facet fields (countries, languages, document types, regions, " +
      "themes, topics, sectors, ...) with how many documents carry each, over all documents or those " +
      "matching a query. Use it to learn the exact names the search filters expect, or to see what the " +
      "collection holds, before calling worldbank_search_documents. Long lists come in parts: continue " +
      "with offset=next_offset.",
    input: facetsInput,
    output: facetsOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const fields = [...new Set(args.facets)];
      const query = buildQuery({ query: args.query }, { rows: 0, facets: fields }, { today: "" });
      const { page: wds, url } = await client.query(query, callContext(ctx));
      const source = sourceOf(url, settings.terms_url);
      const limit = ctx.limits.characterLimit;
      const offset = args.offset;
      const all = fields.map((field) => wds.facets[field] ?? []);
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
    title: "Search World Bank Documents by Project",
    description: 'List the documents of one World Bank project by its id ("P" and six digits, e.g. ' +
      '"P123365"), newest first, one page at a time: appraisal documents, implementation reports, ' +
      "procurement plans, completion reports and more, with the same fields and paging as " +
      "worldbank_search_documents.",
    input: projectInput,
    output: projectOutputSchema,
    annotations: ANNOTATIONS,
    async handler(args, ctx) {
      const projectId = args.project_id.toUpperCase();
      const query = buildQuery(
        { project_id: projectId, sort_by: "docdt", sort_order: "desc" },
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
