// wikipedia-search: full-text search in one language edition, a page at a time or every result
// to a file.
import { searchView } from "../view.ts";
import { z } from "zod";
import { fitToLimit, formatText } from "../../../mcp/shaping.ts";
import type { ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import type { WikipediaApi } from "../client.ts";
import { clip, NOT_WELL_FORMED } from "../../../html.ts";
import { creditLine, n, pageShape, SHORT_TEXT_MAX, source, sourceSchema, TITLE_MAX } from "../format.ts";
import type { Source } from "../format.ts";
import {
  endsFile,
  fileName,
  fileSchema,
  formatField,
  orDefault,
  outputField,
  withFile,
  written,
} from "../../../output/result_files.ts";
import type { FileOut, Written } from "../../../output/result_files.ts";
import { parseSearch } from "../parse.ts";
import type { SearchHit } from "../parse.ts";
import {
  ANNOTATIONS,
  languageField,
  SEARCH_MAX_LIMIT,
  SEARCH_OFFSET_MAX,
  SEARCH_PAGE_MAX,
  TOOLSET,
} from "../schemas.ts";

const searchOutput = z.looseObject({
  results: z.array(z.looseObject({ title: z.string() })),
  ...pageShape,
  source: sourceSchema,
  file: fileSchema.optional(),
});

/** Everything a search answer carries (the output schema declares the main fields only). */
type SearchOut = {
  query: string;
  language: string;
  results: {
    title: string;
    pageid: number | null;
    url: string;
    snippet: string;
    wordcount: number | null;
    size: number | null;
    timestamp: string | null;
  }[];
  suggestion: string | null;
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  source: Source;
  file?: FileOut;
};

function searchParams(query: string, offset: number, limit: number) {
  return {
    action: "query",
    list: "search",
    srsearch: query,
    srlimit: limit,
    sroffset: offset,
    srnamespace: 0,
    srprop: "size|wordcount|timestamp|snippet",
    srinfo: "totalhits|suggestion",
  };
}

/** `wikipedia-search`. */
export function searchTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    query: z.string().trim()
      .refine((q) => q.length >= 1 && q.length <= 300, { message: "give 1 to 300 characters" })
      .refine((q) => q.isWellFormed(), { message: NOT_WELL_FORMED })
      .describe("Search terms"),
    language: languageField(api.defaultLanguage),
    limit: orDefault(z.int().min(1).max(SEARCH_MAX_LIMIT), 10).describe("Results (default 10)"),
    offset: orDefault(z.int().min(0).max(SEARCH_OFFSET_MAX - 1), 0).describe("Results to skip (next_offset)"),
    response_format: formatField,
    output: outputField("all results"),
  });
  return {
    name: "wikipedia-search",
    title: "Search Wikipedia",
    toolset: TOOLSET,
    description:
      "Full-text Wikipedia search: titles, URLs, snippets. Read hits with wikipedia-summary or wikipedia-content.",
    input,
    output: searchOutput,
    view: searchView,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const toFile = args.output === "file";
      const firstLimit = toFile ? Math.min(SEARCH_PAGE_MAX, api.fileMaxResults) : args.limit;
      const answer = await api.call(
        language,
        searchParams(args.query, args.offset, firstLimit),
        ctx,
        api.deadline(),
      );
      const parsed = parseSearch(answer.data);
      const src = source(api.host(language), answer.url);
      const shownHits = parsed.hits.slice(0, args.limit);
      // The next offset after the hits shown: within the first page, or the API's continuation.
      const upstreamNext = parsed.hits.length > args.limit ? args.offset + args.limit : parsed.nextOffset;
      const file = toFile ? await searchFile(api, args, language, parsed, src, ctx) : null;
      // Snippets are clipped in proportion to the limit, so at least one hit fits any limit.
      const snippetMax = Math.max(80, Math.min(SHORT_TEXT_MAX, Math.floor(ctx.limits.characterLimit / 12)));
      const results = shownHits.map((h) => ({
        title: clip(h.title, TITLE_MAX),
        pageid: h.pageid,
        url: api.pageUrl(language, clip(h.title, TITLE_MAX)),
        snippet: clip(h.snippet, snippetMax),
        wordcount: h.wordcount,
        size: h.size,
        timestamp: h.timestamp,
      }));
      const room = ctx.limits.characterLimit - (file ? 2 * file.line.length : 0);
      const rendered = fitToLimit(results, room, ({ items, truncated }) => {
        const count = items.length;
        const hasMore = truncated || upstreamNext !== null;
        const nextOffset = truncated ? args.offset + count : upstreamNext;
        const structured: SearchOut = {
          query: args.query,
          language,
          results: items,
          suggestion: parsed.suggestion,
          total: Math.max(parsed.totalhits ?? 0, args.offset + count),
          count,
          offset: args.offset,
          has_more: hasMore,
          next_offset: hasMore ? nextOffset ?? args.offset + count : null,
          source: src,
          ...(file ? { file: file.out } : {}),
        };
        const text = formatText(args.response_format, structured, () => {
          const lines = [`## Wikipedia search (${language}): "${args.query}"`, ""];
          lines.push(
            count === 0
              ? `No articles matched${args.offset ? ` after offset ${args.offset}` : ""}.`
              : `${n(structured.total)} matches; showing ${args.offset + 1}–${args.offset + count}.`,
          );
          if (parsed.suggestion) lines.push(`Did you mean "${parsed.suggestion}"?`);
          lines.push("");
          items.forEach((r, i) => {
            const facts = [
              r.wordcount === null ? null : `${n(r.wordcount)} words`,
              r.timestamp ? `edited ${r.timestamp.slice(0, 10)}` : null,
            ].filter(Boolean).join(", ");
            lines.push(`${args.offset + i + 1}. **${r.title}** (${r.url})`);
            if (r.snippet) lines.push(`   ${r.snippet}${facts ? ` (${facts})` : ""}`);
          });
          // The next page is named below as a ready call (the core adds it from next_offset).
          if (truncated) {
            lines.push(
              "",
              `Showing ${count} of ${results.length} results to stay within the response limit.`,
            );
          }
          lines.push("", creditLine(src));
          return lines.join("\n");
        });
        return { text, structured };
      });
      // From the list to the record: the summaries of the first hits, as ready calls.
      const next = rendered.structured.results.slice(0, RECORD_CALLS).map((r) => ({
        tool: "wikipedia-summary",
        arguments: { title: r.title, language },
        for: `summary of "${r.title}"`,
      }));
      return { ...withFile(rendered, file), ...(next.length ? { next } : {}) };
    },
  };
}

/** How many of a list's first hits name the call for their record. */
const RECORD_CALLS = 3;

/**
 * Writes every result from `args.offset` on to a file: the first page already read, then page
 * after page while the API continues, up to `file_max_results` and while the call has time.
 */
async function searchFile(
  api: WikipediaApi,
  args: { query: string; offset: number; response_format: "markdown" | "json" },
  language: string,
  first: ReturnType<typeof parseSearch>,
  src: Source,
  ctx: ToolCallContext,
): Promise<Written> {
  const cap = api.fileMaxResults;
  const hits: SearchHit[] = first.hits.slice(0, cap);
  let next = first.hits.length > cap ? args.offset + cap : first.nextOffset;
  let stop: string | null = null;
  while (next !== null && hits.length < cap) {
    if (next >= SEARCH_OFFSET_MAX) {
      stop = `Wikipedia's search serves no results past offset ${n(SEARCH_OFFSET_MAX)}; narrow the query`;
      break;
    }
    const deadline = api.pageDeadline();
    if (deadline === null) {
      stop = `the call ran short of time; call again with offset=${next} and output "file" for the rest`;
      break;
    }
    const want = Math.min(SEARCH_PAGE_MAX, cap - hits.length, SEARCH_OFFSET_MAX - next);
    let page;
    try {
      page = parseSearch(
        (await api.call(language, searchParams(args.query, next, want), ctx, deadline)).data,
      );
    } catch (e) {
      if (!endsFile(e, ctx.signal)) throw e;
      stop = `a page failed (${e.message}); call again with offset=${next} and output "file" for the rest`;
      break;
    }
    if (page.hits.length === 0) {
      next = null;
      break;
    }
    hits.push(...page.hits.slice(0, cap - hits.length));
    next = page.hits.length > want ? next + want : page.nextOffset;
  }
  if (stop === null && next !== null) {
    stop = `the file holds the most results one call writes (${
      n(cap)
    }, file_max_results); call again with offset=${next} and output "file" for the rest`;
  }
  const rows = hits.map((h, i) => ({
    rank: args.offset + i + 1,
    title: h.title,
    pageid: h.pageid,
    url: api.pageUrl(language, h.title),
    snippet: h.snippet,
    wordcount: h.wordcount,
    size: h.size,
    timestamp: h.timestamp,
  }));
  const format = args.response_format === "json" ? "json" : "csv";
  const saved = await ctx.files.save({
    name: fileName("search", args.query),
    format,
    rows: [rows],
    head: { query: args.query, language, offset: args.offset, complete: stop === null, source: src },
    itemsKey: "results",
    description: `Wikipedia (${language}) search "${
      clip(args.query, 80)
    }": ${rows.length} results; ${src.license}`,
  });
  return written(saved, `${n(rows.length)} results`, ctx, stop ?? undefined);
}
