import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { fitToLimit, formatText, pageSchema, responseFormatField } from "../../mcp/output.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { articleText, cutPoint, safeIndex, sectionAt } from "./article_text.ts";
import type { Section } from "./article_text.ts";
import type { WikipediaApi } from "./client.ts";
import { boundedUrl, clip, NOT_WELL_FORMED } from "../../html.ts";
import { creditLine, n, SHORT_TEXT_MAX, source, sourceSchema, TITLE_MAX } from "./format.ts";
import { LANGUAGE_MAX_LENGTH, LANGUAGE_PATTERN, languageProblem } from "./language.ts";
import { hasContinue, interwikiOf, parseGeosearch, parsePages, parseSearch, resolveTitle } from "./parse.ts";
import type { QueryPage } from "./parse.ts";

const ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/** Most results one search call returns (the API allows 500, but ~50 fill the response limit). */
export const SEARCH_MAX_LIMIT = 50;
/** The API's own limits: `exsentences` 1–10, `exchars` 1–1200, `gsradius` 10–10,000 m, `gslimit` 500. */
export const MAX_SENTENCES = 10;
export const MAX_CHARS = 1200;
export const MIN_RADIUS_M = 10;
export const MAX_RADIUS_M = 10_000;
export const GEO_MAX_LIMIT = 500;
/** Most options listed for a disambiguation page. */
const MAX_OPTIONS = 100;

function languageField(defaultLanguage: string) {
  return z.string()
    .max(LANGUAGE_MAX_LENGTH, { message: "a language code has at most 32 characters" })
    .regex(LANGUAGE_PATTERN, {
      message: 'must be a Wikipedia language code such as "no", "nn", "en" or "zh-min-nan"',
    })
    .superRefine((code, ctx) => {
      // The pattern has spoken for malformed codes; this adds the hosts that are not editions.
      const problem = LANGUAGE_PATTERN.test(code) ? languageProblem(code) : null;
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional()
    .describe(
      `Wikipedia language edition, e.g. "no" (Bokmål), "nn" (Nynorsk), "se" (Northern Sami), "en"; default "${defaultLanguage}"`,
    );
}

// "|" would ask for several pages at once; the others can never appear in a MediaWiki title.
const titleField = z.string().trim().min(1).max(255)
  // deno-lint-ignore no-control-regex
  .refine((t) => !/[|#<>[\]{}\u0000-\u001f\u007f]/.test(t), {
    message: "a title cannot contain | # < > [ ] { } or control characters",
  })
  .refine((t) => t.isWellFormed(), { message: NOT_WELL_FORMED })
  .describe(
    'Article title as it appears on Wikipedia, e.g. "Oslo" or "Edvard Munch"; redirects are followed',
  );

const resultSchema = z.object({
  title: z.string().describe("Article title"),
  pageid: z.number().int().nullable().describe("Page id"),
  url: z.string().describe("Article URL"),
});

// ---------------------------------------------------------------------------------------------
// wikipedia-search

const searchOutput = z.object({
  query: z.string().describe("The search terms"),
  language: z.string().describe("Language edition searched"),
  results: z.array(resultSchema.extend({
    snippet: z.string().describe("Matching text around the hit, plain text"),
    wordcount: z.number().int().nullable().describe("Words in the article"),
    size: z.number().int().nullable().describe("Article size in bytes of wikitext"),
    timestamp: z.string().nullable().describe("Last edit, ISO 8601"),
  })).describe("Matching articles, best first"),
  suggestion: z.string().nullable().describe("The API's spelling suggestion, if any"),
  ...pageSchema.shape,
  source: sourceSchema,
});

function searchTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    query: z.string().trim().min(1).max(300)
      .refine((q) => q.isWellFormed(), { message: NOT_WELL_FORMED })
      .describe(
        'Search terms (at most 300 characters); CirrusSearch syntax works, e.g. "intitle:Munch" or a "quoted phrase"',
      ),
    language: languageField(api.defaultLanguage),
    limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).default(10).describe(
      `Results per call, 1–${SEARCH_MAX_LIMIT} (default 10)`,
    ),
    offset: z.number().int().min(0).max(9_999).default(0).describe(
      "Results to skip, for paging: pass next_offset from the previous result",
    ),
    response_format: responseFormatField,
  });
  return {
    name: "wikipedia-search",
    title: "Search Wikipedia",
    description:
      `Full-text search of one Wikipedia language edition (default "${api.defaultLanguage}"). Returns titles, URLs and a plain-text snippet per article, best match first, with total, has_more and next_offset for paging. Use the title with wikipedia-summary or wikipedia-content to read an article. Text is CC BY-SA 4.0: credit Wikipedia.`,
    input,
    output: searchOutput,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const answer = await api.call(
        language,
        {
          action: "query",
          list: "search",
          srsearch: args.query,
          srlimit: args.limit,
          sroffset: args.offset,
          srnamespace: 0,
          srprop: "size|wordcount|timestamp|snippet",
          srinfo: "totalhits|suggestion",
        },
        ctx,
        api.deadline(),
      );
      const parsed = parseSearch(answer.data);
      // Snippets are clipped in proportion to the limit, so at least one hit fits any limit.
      const snippetMax = Math.max(80, Math.min(SHORT_TEXT_MAX, Math.floor(ctx.limits.characterLimit / 12)));
      const results = parsed.hits.map((h) => ({
        title: clip(h.title, TITLE_MAX),
        pageid: h.pageid,
        url: api.pageUrl(language, clip(h.title, TITLE_MAX)),
        snippet: clip(h.snippet, snippetMax),
        wordcount: h.wordcount,
        size: h.size,
        timestamp: h.timestamp,
      }));
      const src = source(api.host(language), answer.url);
      return fitToLimit(results, ctx.limits.characterLimit, ({ items, truncated }) => {
        const count = items.length;
        const hasMore = truncated || parsed.nextOffset !== null;
        const nextOffset = truncated ? args.offset + count : parsed.nextOffset;
        const structured: z.output<typeof searchOutput> = {
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
    },
  };
}

// ---------------------------------------------------------------------------------------------
// wikipedia-summary

const summaryOutput = z.object({
  title: z.string().describe("Title of the article read (after redirects)"),
  pageid: z.number().int().nullable().describe("Page id"),
  language: z.string().describe("Language edition"),
  url: z.string().describe("Article URL"),
  history_url: z.string().describe("Revision history: the article's authors"),
  description: z.string().nullable().describe("Short description, when the wiki has one"),
  extract: z.string().describe("The introduction as plain text, shortened as asked"),
  extract_truncated: z.boolean().describe(
    "Whether the extract was cut to fit the response limit (read it whole with wikipedia-content, section 0)",
  ),
  is_disambiguation: z.boolean().describe(
    "Whether the title is a disambiguation page listing other articles",
  ),
  disambiguation_options: z.array(z.object({ title: z.string(), url: z.string() })).describe(
    "Articles a disambiguation page points to (empty otherwise)",
  ),
  disambiguation_options_more: z.boolean().describe(
    "Whether the page lists more articles than shown here (read them all with wikipedia-content)",
  ),
  disambiguation_options_error: z.string().nullable().describe(
    "Why the list of articles could not be fetched, when it could not; the rest of the summary is valid",
  ),
  redirected_from: z.string().nullable().describe("The redirect followed to reach this article, if any"),
  normalized_from: z.string().nullable().describe("The title as given, when the API normalised it"),
  redirect_section: z.string().nullable().describe("The section a redirect points at, if any"),
  coordinates: z.object({ lat: z.number(), lon: z.number() }).nullable().describe(
    "The article's primary coordinates (WGS 84), if any",
  ),
  wikidata_id: z.string().nullable().describe("Wikidata item, e.g. Q585"),
  revision_id: z.number().int().nullable().describe("Revision the text comes from"),
  last_modified: z.string().nullable().describe("When the page last changed, ISO 8601"),
  source: sourceSchema,
});

type SummaryOut = z.output<typeof summaryOutput>;

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
    sentences: z.number().int().min(1).max(MAX_SENTENCES).optional().describe(
      `Return only the first N sentences of the introduction, 1–${MAX_SENTENCES} (cannot be combined with chars)`,
    ),
    chars: z.number().int().min(1).max(MAX_CHARS).optional().describe(
      `Return about N characters of the introduction, 1–${MAX_CHARS} (the API may return slightly more; cannot be combined with sentences)`,
    ),
    response_format: responseFormatField,
  }).refine((a) => a.sentences === undefined || a.chars === undefined, {
    message: 'give either "sentences" or "chars", not both (the Wikipedia API accepts only one)',
    path: ["chars"],
  });
  return {
    name: "wikipedia-summary",
    title: "Wikipedia article summary",
    description:
      `The introduction of one Wikipedia article as plain text (whole intro by default, or the first 1–10 sentences, or about 1–1200 characters), with its URL, short description, coordinates, Wikidata id and revision. Redirects are followed and reported. When the title is a disambiguation page the result says so and lists the articles it points to: pick one and call again. Default language "${api.defaultLanguage}". For the full article use wikipedia-content. Text is CC BY-SA 4.0: credit Wikipedia.`,
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
        return {
          text: formatText(args.response_format, structured, () => summaryMarkdown(structured)),
          structured,
        };
      };
      const limit = ctx.limits.characterLimit;
      // A long list of options leaves the introduction at least a fifth of the limit.
      let shown = options.list;
      if (size(build("", extract.length > 0, shown)) > limit * 0.8) {
        const fit = largest(
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

/** The largest x in [lo, hi] for which `ok` holds (monotone), or lo - 1 when none does. */
function largest(lo: number, hi: number, ok: (x: number) => boolean): number {
  let best = lo - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ok(mid)) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
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

const geoOutput = z.object({
  center: z.object({ lat: z.number(), lon: z.number() }).describe("The point searched around (WGS 84)"),
  radius_m: z.number().int().describe("Search radius in metres"),
  language: z.string().describe("Language edition searched"),
  results: z.array(resultSchema.extend({
    lat: z.number().describe("Latitude of the article's coordinates"),
    lon: z.number().describe("Longitude of the article's coordinates"),
    distance_m: z.number().nullable().describe("Metres from the centre"),
  })).describe("Articles with coordinates inside the radius, nearest first"),
  limit_reached: z.boolean().describe(
    "Whether as many articles came back as asked for: more may lie inside the radius",
  ),
  ...pageSchema.shape,
  source: sourceSchema,
});

function geosearchTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    lat: z.number().min(-90).max(90).describe("Latitude of the centre, WGS 84 decimal degrees (-90 to 90)"),
    lon: z.number().min(-180).max(180).describe(
      "Longitude of the centre, WGS 84 decimal degrees (-180 to 180)",
    ),
    radius_m: z.number().int()
      .min(MIN_RADIUS_M, {
        message: `must be at least ${MIN_RADIUS_M} metres (the Wikipedia API's minimum)`,
      })
      .max(MAX_RADIUS_M, {
        message:
          `must be at most ${MAX_RADIUS_M} metres (the Wikipedia API's maximum); for a wider area, search from several centres`,
      })
      .default(1000)
      .describe(`Search radius in metres, ${MIN_RADIUS_M}–${MAX_RADIUS_M} (default 1000)`),
    limit: z.number().int().min(1).max(GEO_MAX_LIMIT).default(10).describe(
      `Most articles returned, 1–${GEO_MAX_LIMIT} (default 10); the API cannot page further`,
    ),
    language: languageField(api.defaultLanguage),
    response_format: responseFormatField,
  });
  return {
    name: "wikipedia-geosearch",
    title: "Wikipedia articles near a point",
    description:
      `Finds Wikipedia articles whose coordinates lie within radius_m metres (10–10,000) of a point given as lat/lon (WGS 84), nearest first, with distance in metres and each article's coordinates and URL. Default language "${api.defaultLanguage}"; other editions cover different places. The API cannot page: to see more, raise limit (max 500) or search from another centre. Text is CC BY-SA 4.0: credit Wikipedia.`,
    input,
    output: geoOutput,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const answer = await api.call(
        language,
        {
          action: "query",
          list: "geosearch",
          gscoord: `${args.lat}|${args.lon}`,
          gsradius: args.radius_m,
          gslimit: args.limit,
          gsnamespace: 0,
        },
        ctx,
        api.deadline(),
      );
      const hits = parseGeosearch(answer.data).slice(0, args.limit);
      const results = hits.map((h) => ({
        title: clip(h.title, TITLE_MAX),
        pageid: h.pageid,
        url: api.pageUrl(language, clip(h.title, TITLE_MAX)),
        lat: h.lat,
        lon: h.lon,
        distance_m: h.dist,
      }));
      const src = source(api.host(language), answer.url);
      const limitReached = hits.length >= args.limit;
      return fitToLimit(results, ctx.limits.characterLimit, ({ items, truncated }) => {
        const structured: z.output<typeof geoOutput> = {
          center: { lat: args.lat, lon: args.lon },
          radius_m: args.radius_m,
          language,
          results: items,
          limit_reached: limitReached,
          total: results.length,
          count: items.length,
          offset: 0,
          has_more: truncated,
          next_offset: null,
          source: src,
        };
        const text = formatText(args.response_format, structured, () => {
          const lines = [
            `## Wikipedia articles within ${n(args.radius_m)} m of ${args.lat}, ${args.lon} (${language})`,
            "",
            items.length === 0
              ? "No articles with coordinates lie inside this radius. Try a larger radius (up to 10,000 m) or another language edition."
              : `${items.length} article(s), nearest first:`,
            "",
          ];
          items.forEach((r, i) => {
            const d = r.distance_m === null ? "" : `${n(Math.round(r.distance_m))} m · `;
            lines.push(`${i + 1}. **${r.title}**: ${d}${r.lat}, ${r.lon} · ${r.url}`);
          });
          if (truncated) {
            lines.push(
              "",
              `Showing ${items.length} of ${results.length} articles to stay within the response limit: narrow the radius or lower the limit to see the rest.`,
            );
          } else if (limitReached) {
            lines.push(
              "",
              `The limit of ${args.limit} was reached: more articles may lie inside the radius. Raise limit (max ${GEO_MAX_LIMIT}) or shrink the radius.`,
            );
          }
          lines.push("", creditLine(src));
          return lines.join("\n");
        });
        return { text, structured };
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// wikipedia-content

const sectionSchema = z.object({
  index: z.number().int().describe("Pass as section to read this section (0 = the lead)"),
  title: z.string().describe("Heading"),
  level: z.number().int().describe("1 for the lead, 2 for top-level headings, 3 below them, ..."),
  offset: z.number().int().describe("Character offset where the section starts"),
  chars: z.number().int().describe("Characters up to the next heading"),
});

const contentOutput = z.object({
  title: z.string().describe("Title of the article read (after redirects)"),
  pageid: z.number().int().nullable().describe("Page id"),
  language: z.string().describe("Language edition"),
  url: z.string().describe("Article URL"),
  history_url: z.string().describe("Revision history: the article's authors"),
  revision_id: z.number().int().nullable().describe(
    "Revision the text comes from; if it changes between parts, offsets may shift",
  ),
  last_modified: z.string().nullable().describe("When the page last changed, ISO 8601"),
  redirected_from: z.string().nullable().describe("The redirect followed, if any"),
  is_disambiguation: z.boolean().describe("Whether this is a disambiguation page listing other articles"),
  section: z.object({ index: z.number().int(), title: z.string() }).nullable().describe(
    "The section asked for, or null when reading by offset",
  ),
  next_section: z.number().int().nullable().describe("Index of the section after the one asked for"),
  text: z.string().describe("This part of the article as plain text with markdown headings"),
  ...pageSchema.shape,
  sections: z.array(sectionSchema).describe("Outline of the article: where each section starts"),
  sections_total: z.number().int().describe("Sections in the article (the outline may show fewer)"),
  source: sourceSchema,
});

type ContentOut = z.output<typeof contentOutput>;

function contentTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    title: titleField,
    language: languageField(api.defaultLanguage),
    section: z.number().int().min(0).optional().describe(
      "Read only this section (index from the outline; 0 = the lead), subsections included",
    ),
    offset: z.number().int().min(0).optional().describe(
      "Character offset to start from: pass next_offset from the previous part (default 0, or the section's start)",
    ),
    max_chars: z.number().int().min(200).max(100_000).optional().describe(
      "Most characters of article text in this part (default: as many as fit the response limit)",
    ),
    response_format: responseFormatField,
  });
  return {
    name: "wikipedia-content",
    title: "Wikipedia article text",
    description:
      `The whole text of a Wikipedia article as plain text with markdown headings, delivered in parts that fit the response limit: each part gives total, offset, has_more and next_offset (in characters) plus an outline of the sections with their indexes and offsets. Read on with offset=next_offset, or jump to one section with section=N (add offset=next_offset to continue inside a long section). Infoboxes, tables and references are not included. Default language "${api.defaultLanguage}". Text is CC BY-SA 4.0: credit Wikipedia.`,
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

      const render = (end: number, outline: Section[]): { text: string; structured: ContentOut } => {
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
        };
        return {
          text: formatText(
            args.response_format,
            structured,
            () => contentMarkdown(structured, sectionAt(sections, start)),
          ),
          structured,
        };
      };

      return fitContent(text, start, scopeEnd, sections, args.max_chars, ctx.limits.characterLimit, render);
    },
  };
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
