import { geosearchView, searchView } from "./view.ts";
import { cite } from "../../output/provenance.ts";
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { fitToLimit, formatText, largestWhere } from "../../mcp/output.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { articleText, cutPoint, safeIndex, sectionAt } from "./article_text.ts";
import type { Section } from "./article_text.ts";
import type { WikipediaApi } from "./client.ts";
import { boundedUrl, clip, NOT_WELL_FORMED } from "../../html.ts";
import { creditLine, n, pageShape, SHORT_TEXT_MAX, source, sourceSchema, TITLE_MAX } from "./format.ts";
import type { Source } from "./format.ts";
import {
  endsFile,
  fileName,
  fileSchema,
  formatField,
  orDefault,
  outputField,
  withFile,
  written,
} from "../../output/result_files.ts";
import type { FileOut, Written } from "../../output/result_files.ts";
import { LANGUAGE_MAX_LENGTH, LANGUAGE_PATTERN, languageProblem } from "./language.ts";
import { hasContinue, interwikiOf, parseGeosearch, parsePages, parseSearch, resolveTitle } from "./parse.ts";
import type { QueryPage, SearchHit } from "./parse.ts";

const ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/** The toolset of every Wikipedia tool. */
export const TOOLSET = "wikipedia";

/** Most results one search call returns (the API allows 500, but ~50 fill the response limit). */
export const SEARCH_MAX_LIMIT = 50;
/** The API's own limits: `exsentences` 1–10, `exchars` 1–1200, `gsradius` 10–10,000 m, `gslimit` 500. */
export const MAX_SENTENCES = 10;
export const MAX_CHARS = 1200;
export const MIN_RADIUS_M = 10;
export const MAX_RADIUS_M = 10_000;
export const GEO_MAX_LIMIT = 500;
/** Most results one `list=search` request may ask for (`srlimit` for clients without apihighlimits). */
const SEARCH_PAGE_MAX = 500;
/** CirrusSearch serves no result past this offset. */
const SEARCH_OFFSET_MAX = 10_000;
/** Most options listed for a disambiguation page. */
const MAX_OPTIONS = 100;
/** Article characters shown in the answer when the whole article goes to a file. */
const FILE_PREVIEW_CHARS = 2000;

function languageField(defaultLanguage: string) {
  // Checked with refinements, not schema keywords: the served schema stays short, and a bad
  // code still gets a message that names it.
  return z.string()
    .refine((code) => code.length <= LANGUAGE_MAX_LENGTH && LANGUAGE_PATTERN.test(code), {
      message: 'must be a Wikipedia language code such as "no", "nn", "en" or "zh-min-nan"',
    })
    .superRefine((code, ctx) => {
      // The pattern has spoken for malformed codes; this adds the hosts that are not editions.
      const problem = LANGUAGE_PATTERN.test(code) ? languageProblem(code) : null;
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional()
    .describe(`Edition, e.g. "en" (default "${defaultLanguage}")`);
}

// "|" would ask for several pages at once; the others can never appear in a MediaWiki title.
const titleField = z.string().trim()
  .refine((t) => t.length >= 1 && t.length <= 255, { message: "a title has 1 to 255 characters" })
  // deno-lint-ignore no-control-regex
  .refine((t) => !/[|#<>[\]{}\u0000-\u001f\u007f]/.test(t), {
    message: "a title cannot contain | # < > [ ] { } or control characters",
  })
  .refine((t) => t.isWellFormed(), { message: NOT_WELL_FORMED })
  .describe("Article title (redirects are followed)");

// ---------------------------------------------------------------------------------------------
// wikipedia-search

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

function searchTool(api: WikipediaApi): ToolDefinition {
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
          if (truncated) {
            lines.push(
              "",
              `Showing ${count} of ${results.length} results to stay within the response limit: call again with offset=${structured.next_offset}.`,
            );
          } else if (structured.has_more) {
            lines.push("", `More results: call again with offset=${structured.next_offset}.`);
          }
          lines.push("", creditLine(src));
          return lines.join("\n");
        });
        return { text, structured };
      });
      return withFile(rendered, file);
    },
  };
}

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

// ---------------------------------------------------------------------------------------------
// wikipedia-summary

const summaryOutput = z.looseObject({
  title: z.string(),
  url: z.string(),
  extract: z.string(),
  source: sourceSchema,
});

/** Everything a summary carries (the output schema declares the main fields only). */
interface SummaryOut {
  title: string;
  pageid: number | null;
  language: string;
  url: string;
  history_url: string;
  description: string | null;
  extract: string;
  extract_truncated: boolean;
  is_disambiguation: boolean;
  disambiguation_options: { title: string; url: string }[];
  disambiguation_options_more: boolean;
  disambiguation_options_error: string | null;
  redirected_from: string | null;
  normalized_from: string | null;
  redirect_section: string | null;
  coordinates: { lat: number; lon: number } | null;
  wikidata_id: string | null;
  revision_id: number | null;
  last_modified: string | null;
  source: Source;
}

interface Located {
  page: QueryPage;
  redirectedFrom: string | null;
  normalizedFrom: string | null;
  fragment: string | null;
}

function locate(body: unknown, asked: string, language: string, api: WikipediaApi): Located {
  const resolution = resolveTitle(body, asked);
  const page = parsePages(body)[0];
  if (!page) {
    const prefix = interwikiOf(body);
    if (prefix !== null) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"${asked}" is a link to another wiki ("${prefix}:"), not an article title on ${api.host(language)}`,
        {
          field: "title",
          hint: `Leave out the "${prefix}:" prefix; for another language edition pass it as language`,
        },
      );
    }
    throw new ToolError("API_ERROR", `Wikipedia (${language}) sent no page for "${asked}"`, {
      retryable: true,
      hint: "Try again; if it persists, search for the title with wikipedia-search",
    });
  }
  if (page.invalid) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `"${asked}" is not a valid Wikipedia title${
        page.invalidReason ? `: ${clip(page.invalidReason, SHORT_TEXT_MAX)}` : ""
      }`,
      { field: "title", hint: "Use a title as wikipedia-search returns it" },
    );
  }
  if (page.missing) {
    throw new ToolError(
      "NOT_FOUND",
      `There is no article titled "${clip(page.title, TITLE_MAX)}" on ${api.host(language)}${
        resolution.redirectedFrom ? ` (redirected from "${clip(resolution.redirectedFrom, TITLE_MAX)}")` : ""
      }`,
      {
        messageId: "missingtitle",
        hint: `Find the exact title with wikipedia-search (language "${language}"), then call again`,
      },
    );
  }
  // Fields that are short in any real answer are clipped, so a broken upstream cannot blow up
  // a result; the article text itself is cut losslessly (wikipedia-content reads on).
  return {
    page: { ...page, title: clip(page.title, TITLE_MAX) },
    redirectedFrom: resolution.redirectedFrom === null ? null : clip(resolution.redirectedFrom, TITLE_MAX),
    normalizedFrom: resolution.normalizedFrom === null ? null : clip(resolution.normalizedFrom, TITLE_MAX),
    fragment: resolution.fragment === null ? null : clip(resolution.fragment, TITLE_MAX),
  };
}

function isDisambiguation(page: QueryPage): boolean {
  return "disambiguation" in page.pageprops;
}

/** What a disambiguation page's list of articles came to. */
interface Options {
  list: { title: string; url: string }[];
  /** The page lists more than `list` (the API's continue, or more than this server asks for). */
  more: boolean;
  /** Why the list could not be fetched, or null. */
  error: string | null;
}

/**
 * The articles a disambiguation page links to. A failure here does not fail the summary: the
 * page is still a disambiguation page, and the result says the list could not be fetched.
 */
async function disambiguationOptions(
  api: WikipediaApi,
  language: string,
  title: string,
  ctx: ToolCallContext,
  deadline: number,
): Promise<Options> {
  try {
    const links = await api.call(
      language,
      { action: "query", prop: "links", titles: title, plnamespace: 0, pllimit: MAX_OPTIONS },
      ctx,
      deadline,
    );
    const titles = parsePages(links.data)[0]?.links ?? [];
    return {
      list: titles.slice(0, MAX_OPTIONS).map((t) => {
        const shown = clip(t, TITLE_MAX);
        return { title: shown, url: api.pageUrl(language, shown) };
      }),
      more: hasContinue(links.data) || titles.length > MAX_OPTIONS,
      error: null,
    };
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    const reason = e instanceof ToolError ? `${e.errorType}: ${e.message}` : "the request failed";
    ctx.logger.warn("wikipedia disambiguation links not fetched", { reason });
    return { list: [], more: false, error: clip(reason, SHORT_TEXT_MAX) };
  }
}

function summaryTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    title: titleField,
    language: languageField(api.defaultLanguage),
    sentences: z.int().min(1).max(MAX_SENTENCES).optional().describe("First N sentences"),
    chars: z.int().min(1).max(MAX_CHARS).optional().describe("About N characters"),
    response_format: formatField,
  }).refine((a) => a.sentences === undefined || a.chars === undefined, {
    message: 'give either "sentences" or "chars", not both (the Wikipedia API accepts only one)',
    path: ["chars"],
  });
  return {
    name: "wikipedia-summary",
    title: "Wikipedia summary",
    toolset: TOOLSET,
    description:
      "A Wikipedia article's introduction, coordinates and Wikidata id; disambiguation pages list their articles.",
    input,
    output: summaryOutput,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const deadline = api.deadline();
      const answer = await api.call(
        language,
        {
          action: "query",
          prop: "extracts|info|pageprops|coordinates",
          titles: args.title,
          redirects: 1,
          exintro: 1,
          explaintext: 1,
          exsectionformat: "plain",
          exsentences: args.sentences,
          exchars: args.chars,
          inprop: "url",
          ppprop: "disambiguation|wikibase_item|wikibase-shortdesc",
        },
        ctx,
        deadline,
      );
      const found = locate(answer.data, args.title, language, api);
      const { page } = found;
      const disambiguation = isDisambiguation(page);
      const options: Options = disambiguation
        ? await disambiguationOptions(api, language, page.title, ctx, deadline)
        : { list: [], more: false, error: null };
      const url = boundedUrl(page.fullUrl) ?? api.pageUrl(language, page.title);
      const historyUrl = api.historyUrl(language, page.title);
      const src = source(api.host(language), url, historyUrl);
      const extract = (page.extract ?? "").trim();
      const description = page.pageprops["wikibase-shortdesc"];
      const build = (
        text: string,
        truncated: boolean,
        shown: Options["list"],
      ): { text: string; structured: SummaryOut } => {
        const structured: SummaryOut = {
          title: page.title,
          pageid: page.pageid,
          language,
          url,
          history_url: historyUrl,
          description: description === undefined ? null : clip(description, SHORT_TEXT_MAX),
          extract: text,
          extract_truncated: truncated,
          is_disambiguation: disambiguation,
          disambiguation_options: shown,
          disambiguation_options_more: options.more || shown.length < options.list.length,
          disambiguation_options_error: options.error,
          redirected_from: found.redirectedFrom,
          normalized_from: found.normalizedFrom,
          redirect_section: found.fragment,
          coordinates: page.coordinates,
          wikidata_id: page.pageprops["wikibase_item"] === undefined
            ? null
            : clip(page.pageprops["wikibase_item"], TITLE_MAX),
          revision_id: page.lastRevId,
          last_modified: page.touched === null ? null : clip(page.touched, TITLE_MAX),
          source: src,
        };
        citeRevision(url, page.lastRevId, page.touched);
        return {
          text: formatText(args.response_format, structured, () => summaryMarkdown(structured)),
          structured,
        };
      };
      const limit = ctx.limits.characterLimit;
      // A long list of options leaves the introduction at least a fifth of the limit.
      let shown = options.list;
      if (size(build("", extract.length > 0, shown)) > limit * 0.8) {
        const fit = largestWhere(
          0,
          shown.length,
          (k) => size(build("", extract.length > 0, shown.slice(0, k))) <= limit * 0.8,
        );
        shown = shown.slice(0, Math.max(0, fit));
      }
      return fitPlainText(extract, limit, (text, truncated) => build(text, truncated, shown));
    },
  };
}

function summaryMarkdown(s: SummaryOut): string {
  const lines = [`# ${s.title}`];
  if (s.description) lines.push(`*${s.description}*`);
  const notes = [];
  if (s.redirected_from) notes.push(`redirected from "${s.redirected_from}"`);
  if (s.redirect_section) notes.push(`the redirect points at section "${s.redirect_section}"`);
  if (notes.length) lines.push(`(${notes.join("; ")})`);
  lines.push("");
  if (s.is_disambiguation) {
    lines.push(
      `"${s.title}" is a disambiguation page: it lists articles with similar names. Pick one and call wikipedia-summary again with its title.`,
      "",
    );
  }
  lines.push(s.extract || "(This page has no introduction text.)");
  if (s.extract_truncated) {
    lines.push(
      "",
      `[The introduction was cut to fit the response limit: read it in parts with wikipedia-content (title "${s.title}", section 0).]`,
    );
  }
  if (s.disambiguation_options_error) {
    lines.push(
      "",
      `The list of articles this page points to could not be fetched (${s.disambiguation_options_error}). Read them with wikipedia-content (title "${s.title}"), or call wikipedia-summary again.`,
    );
  } else if (s.disambiguation_options.length) {
    lines.push(
      "",
      `Articles listed (${s.disambiguation_options.length}${
        s.disambiguation_options_more ? `, more on the page: read them all with wikipedia-content` : ""
      }):`,
    );
    for (const o of s.disambiguation_options) lines.push(`- ${o.title}`);
  }
  const facts = [
    s.coordinates ? `Coordinates: ${s.coordinates.lat}, ${s.coordinates.lon}` : null,
    s.wikidata_id ? `Wikidata: ${s.wikidata_id}` : null,
    s.revision_id === null ? null : `Revision: ${s.revision_id}`,
    s.last_modified ? `Last changed: ${s.last_modified}` : null,
  ].filter(Boolean);
  if (facts.length) lines.push("", facts.join(" · "));
  lines.push("", creditLine(s.source));
  return lines.join("\n");
}

function size(r: { text: string; structured: unknown }): number {
  return Math.max(r.text.length, JSON.stringify(r.structured).length);
}

/** Renders with all of `text`, or with less of it (cut at a boundary) until the result fits `limit`. */
function fitPlainText<S>(
  text: string,
  limit: number,
  build: (text: string, truncated: boolean) => { text: string; structured: S },
): { text: string; structured: S } {
  let max = text.length;
  for (let i = 0; i < 12; i++) {
    const end = cutPoint(text, 0, text.length, max);
    const r = build(text.slice(0, end), end < text.length);
    const over = size(r) - limit;
    if (over <= 0 || end === 0) return r;
    max = Math.max(0, end - over - 64);
  }
  return build("", text.length > 0);
}

// ---------------------------------------------------------------------------------------------
// wikipedia-geosearch

// The API cannot page: the envelope is carried (offset 0, next_offset null) but not declared.
const geoOutput = z.looseObject({
  results: z.array(z.looseObject({ title: z.string() })),
  total: z.number(),
  source: sourceSchema,
  file: fileSchema.optional(),
});

/** Everything a geosearch answer carries (the output schema declares the main fields only). */
type GeoOut = {
  center: { lat: number; lon: number };
  radius_m: number;
  language: string;
  results: {
    title: string;
    pageid: number | null;
    url: string;
    lat: number;
    lon: number;
    distance_m: number | null;
  }[];
  limit_reached: boolean;
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  source: Source;
  file?: FileOut;
};

/** Articles shown in the answer when no limit is given. */
const GEO_DEFAULT_LIMIT = 10;

function geosearchTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    lat: z.number().refine((v) => v >= -90 && v <= 90, "must be between -90 and 90").describe(
      "Latitude (WGS 84)",
    ),
    lon: z.number().refine((v) => v >= -180 && v <= 180, "must be between -180 and 180").describe(
      "Longitude (WGS 84)",
    ),
    radius_m: z.int()
      .min(MIN_RADIUS_M, {
        message: `must be at least ${MIN_RADIUS_M} metres (the Wikipedia API's minimum)`,
      })
      .max(MAX_RADIUS_M, {
        message:
          `must be at most ${MAX_RADIUS_M} metres (the Wikipedia API's maximum); for a wider area, search from several centres`,
      })
      .optional().transform((v) => v ?? 1000)
      .describe("Radius in metres (default 1000)"),
    limit: z.int().min(1).max(GEO_MAX_LIMIT).optional().describe(
      `Most articles (default ${GEO_DEFAULT_LIMIT}, ${GEO_MAX_LIMIT} to a file)`,
    ),
    language: languageField(api.defaultLanguage),
    response_format: formatField,
    output: outputField("all articles"),
  });
  return {
    name: "wikipedia-geosearch",
    title: "Wikipedia nearby",
    toolset: TOOLSET,
    description:
      "Wikipedia articles within radius_m of a point, nearest first, with distances. No paging: raise limit or write a file.",
    input,
    output: geoOutput,
    view: geosearchView,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const toFile = args.output === "file";
      const limit = args.limit ?? (toFile ? GEO_MAX_LIMIT : GEO_DEFAULT_LIMIT);
      const answer = await api.call(
        language,
        {
          action: "query",
          list: "geosearch",
          gscoord: `${args.lat}|${args.lon}`,
          gsradius: args.radius_m,
          gslimit: limit,
          gsnamespace: 0,
        },
        ctx,
        api.deadline(),
      );
      const hits = parseGeosearch(answer.data).slice(0, limit);
      const all = hits.map((h) => ({
        title: clip(h.title, TITLE_MAX),
        pageid: h.pageid,
        url: api.pageUrl(language, clip(h.title, TITLE_MAX)),
        lat: h.lat,
        lon: h.lon,
        distance_m: h.dist,
      }));
      const src = source(api.host(language), answer.url);
      const limitReached = hits.length >= limit;
      let file: Written | null = null;
      if (toFile) {
        const saved = await ctx.files.save({
          name: fileName("geosearch", `${args.lat}_${args.lon}_${args.radius_m}m`),
          format: args.response_format === "json" ? "json" : "csv",
          rows: [all],
          head: { center: { lat: args.lat, lon: args.lon }, radius_m: args.radius_m, language, source: src },
          itemsKey: "results",
          description:
            `Wikipedia (${language}) articles within ${args.radius_m} m of ${args.lat}, ${args.lon}: ${all.length}; ${src.license}`,
        });
        file = written(
          saved,
          `${n(all.length)} articles`,
          ctx,
          limitReached
            ? `the limit of ${limit} was reached, more may lie inside the radius: shrink the radius or search from other centres`
            : undefined,
        );
      }
      // With a file the answer previews the nearest articles; the file holds them all.
      const results = toFile ? all.slice(0, args.limit ?? GEO_DEFAULT_LIMIT) : all;
      const room = ctx.limits.characterLimit - (file ? 2 * file.line.length : 0);
      const rendered = fitToLimit(results, room, ({ items, truncated }) => {
        const cut = items.length < all.length;
        const structured: GeoOut = {
          center: { lat: args.lat, lon: args.lon },
          radius_m: args.radius_m,
          language,
          results: items,
          limit_reached: limitReached,
          total: all.length,
          count: items.length,
          offset: 0,
          has_more: cut,
          next_offset: null,
          source: src,
          ...(file ? { file: file.out } : {}),
        };
        const text = formatText(args.response_format, structured, () => {
          const lines = [
            `## Wikipedia articles within ${n(args.radius_m)} m of ${args.lat}, ${args.lon} (${language})`,
            "",
            items.length === 0
              ? "No articles with coordinates lie inside this radius. Try a larger radius (up to 10,000 m) or another language edition."
              : `${cut ? `${items.length} of ${all.length}` : items.length} article(s), nearest first:`,
            "",
          ];
          items.forEach((r, i) => {
            const d = r.distance_m === null ? "" : `${n(Math.round(r.distance_m))} m · `;
            lines.push(`${i + 1}. **${r.title}**: ${d}${r.lat}, ${r.lon} · ${r.url}`);
          });
          if (cut && !file) {
            lines.push(
              "",
              `Showing ${items.length} of ${all.length} articles to stay within the response limit: call again with output "file" to get them all, or narrow the radius.`,
            );
          } else if (limitReached && !file) {
            lines.push(
              "",
              `The limit of ${limit} was reached: more articles may lie inside the radius. Raise limit (max ${GEO_MAX_LIMIT}), use output "file", or shrink the radius.`,
            );
          }
          if (truncated && file) {
            lines.push("", "The answer shows the nearest ones; the file holds them all.");
          }
          lines.push("", creditLine(src));
          return lines.join("\n");
        });
        return { text, structured };
      });
      return withFile(rendered, file);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// wikipedia-content

const contentOutput = z.looseObject({
  text: z.string(),
  ...pageShape,
  source: sourceSchema,
  file: fileSchema.optional(),
});

/** One entry of the outline. */
interface SectionOut {
  index: number;
  title: string;
  level: number;
  offset: number;
  chars: number;
}

/** Everything a part of an article carries (the output schema declares the main fields only). */
interface ContentOut {
  title: string;
  pageid: number | null;
  language: string;
  url: string;
  history_url: string;
  /** Revision the text comes from; if it changes between parts, offsets may shift. */
  revision_id: number | null;
  last_modified: string | null;
  redirected_from: string | null;
  is_disambiguation: boolean;
  section: { index: number; title: string } | null;
  next_section: number | null;
  text: string;
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  sections: SectionOut[];
  sections_total: number;
  source: Source;
  file?: FileOut;
}

function contentTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    title: titleField,
    language: languageField(api.defaultLanguage),
    section: z.int().min(0).max(10_000).optional().describe("Only this section (outline index)"),
    offset: z.int().min(0).max(10_000_000).optional().describe("Character to start at (next_offset)"),
    max_chars: z.int().min(200).max(100_000).optional().describe("Most characters in this part"),
    response_format: formatField,
    output: outputField("the whole article"),
  });
  return {
    name: "wikipedia-content",
    title: "Wikipedia article",
    toolset: TOOLSET,
    description:
      "A Wikipedia article's whole text in parts, with a section outline: read on with offset=next_offset.",
    input,
    output: contentOutput,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const answer = await api.call(
        language,
        {
          action: "query",
          prop: "extracts|info|pageprops",
          titles: args.title,
          redirects: 1,
          explaintext: 1,
          exsectionformat: "wiki",
          inprop: "url",
          ppprop: "disambiguation",
        },
        ctx,
        api.deadline(),
      );
      const found = locate(answer.data, args.title, language, api);
      const { page } = found;
      const article = articleText(page.extract ?? "");
      const { text, sections } = article;

      let scopeStart = 0;
      let scopeEnd = text.length;
      let chosen: Section | null = null;
      if (args.section !== undefined) {
        chosen = sections[args.section] ?? null;
        if (!chosen) {
          throw new ToolError(
            "VALIDATION_ERROR",
            `Section ${args.section} does not exist: "${page.title}" has sections 0–${sections.length - 1}`,
            { field: "section", hint: "Call without section to see the outline, then pick an index from it" },
          );
        }
        scopeStart = chosen.offset;
        const after = sections.find((s) => s.index > chosen!.index && s.level <= chosen!.level);
        scopeEnd = after ? after.offset : text.length;
      }
      let start = args.offset ?? scopeStart;
      if (args.offset !== undefined && (start < scopeStart || (start >= scopeEnd && start !== scopeStart))) {
        const what = chosen
          ? `section ${chosen.index} ("${chosen.title}") spans ${scopeStart}–${scopeEnd}`
          : `the article has ${n(text.length)} characters`;
        throw new ToolError(
          "VALIDATION_ERROR",
          `Offset ${args.offset} is outside the text: ${what}`,
          {
            field: "offset",
            hint: "Use next_offset from the previous part, or leave offset out to start at the beginning",
          },
        );
      }
      start = safeIndex(text, start);

      const url = boundedUrl(page.fullUrl) ?? api.pageUrl(language, page.title);
      const historyUrl = api.historyUrl(language, page.title);
      const src = source(api.host(language), url, historyUrl);
      const nextSection = chosen
        ? sections.find((s) => s.index > chosen!.index && s.level <= chosen!.level)?.index ?? null
        : null;
      const file = args.output === "file"
        ? await articleFile(page.title, language, text, found.redirectedFrom, page.lastRevId, src, ctx)
        : null;

      const render = (end: number, outline: Section[]): { text: string; structured: ContentOut } => {
        citeRevision(url, page.lastRevId, page.touched);
        const hasMore = end < scopeEnd;
        const structured: ContentOut = {
          title: page.title,
          pageid: page.pageid,
          language,
          url,
          history_url: historyUrl,
          revision_id: page.lastRevId,
          last_modified: page.touched,
          redirected_from: found.redirectedFrom,
          is_disambiguation: isDisambiguation(page),
          section: chosen ? { index: chosen.index, title: chosen.title } : null,
          next_section: nextSection,
          text: text.slice(start, end),
          total: text.length,
          count: end - start,
          offset: start,
          has_more: hasMore,
          next_offset: hasMore ? end : null,
          sections: outline,
          sections_total: sections.length,
          source: src,
          ...(file ? { file: file.out } : {}),
        };
        const md = () => contentMarkdown(structured, sectionAt(sections, start));
        const body = formatText(args.response_format, structured, md);
        return { text: file ? `${body}\n\n${file.line}` : body, structured };
      };

      // With a file the answer previews the first part; the file holds the whole article.
      const maxChars = args.max_chars ?? (file ? FILE_PREVIEW_CHARS : undefined);
      const part = fitContent(text, start, scopeEnd, sections, maxChars, ctx.limits.characterLimit, render);
      return file ? { ...part, content: [file.link] } : part;
    },
  };
}

/** Writes the whole article as one markdown document, with its credit. */
async function articleFile(
  title: string,
  language: string,
  text: string,
  redirectedFrom: string | null,
  revision: number | null,
  src: Source,
  ctx: ToolCallContext,
): Promise<Written> {
  const head = [
    `# ${title}`,
    "",
    `Source: ${src.url}${revision === null ? "" : ` (revision ${revision})`}${
      redirectedFrom ? `, redirected from "${redirectedFrom}"` : ""
    }`,
    "",
  ];
  const doc = [...head, text.replace(/\s+$/, ""), "", "---", "", creditLine(src), ""].join("\n");
  const saved = await ctx.files.save({
    name: fileName(`article_${language}`, title),
    format: "md",
    text: doc,
    description: `Wikipedia (${language}) article "${clip(title, 80)}", whole text; ${src.license}`,
  });
  return written(saved, `The whole article (${n(text.length)} characters)`, ctx);
}

function contentMarkdown(s: ContentOut, at: Section): string {
  const lines = [`# ${s.title}`];
  const meta = [
    s.redirected_from ? `redirected from "${s.redirected_from}"` : null,
    s.revision_id === null ? null : `revision ${s.revision_id}`,
    s.last_modified ? `last changed ${s.last_modified}` : null,
  ].filter(Boolean);
  if (meta.length) lines.push(`(${meta.join("; ")})`);
  if (s.is_disambiguation) {
    lines.push(
      `"${s.title}" is a disambiguation page: it lists articles with similar names. Pick one and read it instead.`,
    );
  }
  const where = s.section
    ? `section ${s.section.index} "${s.section.title}"`
    : `starting in section ${at.index} "${at.title}"`;
  lines.push(
    s.total === 0
      ? "This article has no text that can be extracted."
      : `Part: characters ${n(s.offset)}–${n(s.offset + s.count)} of ${n(s.total)}, ${where}.`,
    "",
    s.text.replace(/\s+$/, ""),
    "",
    "---",
  );
  if (s.has_more) {
    lines.push(
      `More follows: call wikipedia-content again with title "${s.title}"${
        s.section ? `, section=${s.section.index}` : ""
      } and offset=${s.next_offset}.`,
    );
  } else if (s.section && s.next_section !== null) {
    lines.push(`End of the section. The next section is ${s.next_section}.`);
  } else if (!s.section) {
    lines.push("End of the article.");
  } else {
    lines.push("End of the section, which is the last one.");
  }
  if (s.sections.length) {
    const shown = s.sections.length < s.sections_total
      ? ` (${s.sections.length} of ${s.sections_total} shown)`
      : "";
    lines.push("", `Sections${shown} (index: title, offset):`);
    for (const sec of s.sections) {
      lines.push(`${"  ".repeat(Math.max(0, sec.level - 2))}${sec.index}: ${sec.title}, ${n(sec.offset)}`);
    }
  }
  lines.push("", creditLine(s.source));
  return lines.join("\n");
}

/**
 * Picks the longest part from `start` (cut at a paragraph, line or word boundary, at most
 * `maxChars`) whose rendering fits `limit` in both formats. A very long outline is shown as a
 * window from the current section so the text always has room.
 */
function fitContent(
  text: string,
  start: number,
  scopeEnd: number,
  sections: Section[],
  maxChars: number | undefined,
  limit: number,
  render: (end: number, outline: Section[]) => { text: string; structured: ContentOut },
): { text: string; structured: ContentOut } {
  const size = (r: { text: string; structured: ContentOut }) =>
    Math.max(r.text.length, JSON.stringify(r.structured).length);
  let outline = sections;
  // Leave at least a third of the limit for text.
  const room = Math.floor(limit * 2 / 3);
  if (size(render(start, outline)) > room) {
    const first = sectionAt(sections, start).index;
    let lo = 0;
    let hi = sections.length - first;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (size(render(start, sections.slice(first, first + mid))) <= room) lo = mid;
      else hi = mid - 1;
    }
    outline = sections.slice(first, first + lo);
  }
  let max = Math.min(maxChars ?? limit, limit);
  for (let i = 0; i < 16; i++) {
    const end = cutPoint(text, start, scopeEnd, Math.max(1, max));
    const r = render(end, outline);
    const over = size(r) - limit;
    if (over <= 0) return r;
    max = end - start - over - 32;
    if (max < 1) break;
  }
  // Nothing fits (a tiny limit): the empty part still says where to go next.
  return render(start, outline);
}

/** The four Wikipedia tools. */
export function wikipediaTools(api: WikipediaApi): ToolDefinition[] {
  return [searchTool(api), summaryTool(api), geosearchTool(api), contentTool(api)];
}

/**
 * The provenance of an article answer: the permalink of the revision shown (`?oldid=`, which
 * never changes) and its time, so a citation names exactly the text read.
 */
function citeRevision(pageUrl: string, revisionId: number | null, touched: string | null): void {
  let permalink: string | undefined;
  if (revisionId !== null) {
    try {
      permalink = new URL(`/w/index.php?oldid=${revisionId}`, pageUrl).toString();
    } catch {
      permalink = undefined;
    }
  }
  cite({
    ...(permalink ? { permalink } : { permalink: pageUrl }),
    ...(revisionId !== null || touched
      ? {
        as_of: [revisionId !== null ? `revision ${revisionId}` : "", touched ? `page touched ${touched}` : ""]
          .filter(Boolean).join(", "),
      }
      : {}),
  });
}
