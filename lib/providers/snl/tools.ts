import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { fitToLimit, formatText, responseFormatField } from "../../mcp/output.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { isNotFound } from "./client.ts";
import type { SnlApi } from "./client.ts";
import { clip, inlineText, NOT_WELL_FORMED } from "../../html.ts";
import {
  bodyToText,
  errorMessageOf,
  NAME_MAX,
  parseArticle,
  parseSearch,
  slugOfPath,
  SNIPPET_MAX,
} from "./parse.ts";
import type { SnlArticle } from "./parse.ts";
import { SITE_IDS, siteList, siteOfHost, SITES } from "./sites.ts";
import type { SiteId } from "./sites.ts";

const ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/** The search API accepts `limit` 1–10. */
export const SEARCH_MAX_LIMIT = 10;
/** Most links listed from one article. */
const MAX_LINKS = 50;
/** SNL's page on reusing "fri" articles. */
export const REUSE_TERMS_URL = "https://meta.snl.no/fri_gjenbruk";

/** What an article's `license_name` allows. */
export interface Terms {
  name: string;
  url: string | null;
  reuse: string;
}

/** The terms behind SNL's `license_name` values ("fri", "begrenset"). */
export function licenseTerms(licenseName: string | null): Terms {
  if (licenseName === "fri") {
    return {
      name: "CC BY-SA 3.0",
      url: "https://creativecommons.org/licenses/by-sa/3.0/",
      reuse:
        `Free to reuse under CC BY-SA 3.0, crediting the author(s) and the encyclopedia (${REUSE_TERMS_URL})`,
    };
  }
  if (licenseName === "begrenset") {
    return {
      name: "Restricted (begrenset)",
      url: null,
      reuse: "Not free to reuse: reuse needs the publisher's permission; cite the article when you quote it",
    };
  }
  return {
    name: licenseName ?? "not stated",
    url: null,
    reuse: "The article states no known licence: check its page before reuse",
  };
}

const siteField = z.enum(SITE_IDS).describe(`Encyclopedia to use: ${siteList()}; default "snl"`);

const sourceSchema = z.object({
  name: z.string().describe("Who published the data"),
  url: z.string().describe("Where the data came from: the article page, or the API request for lists"),
  license: z.string().describe("Licence of the text"),
  license_url: z.string().nullable().describe("Where the licence or reuse terms are explained"),
  attribution: z.string().describe("Credit line to give when quoting"),
});

type Source = z.output<typeof sourceSchema>;

function creditLine(s: Source): string {
  return `Source: ${s.url}\nLicence: ${s.license}${
    s.license_url ? ` (${s.license_url})` : ""
  }. ${s.attribution}.`;
}

function n(value: number): string {
  return value.toLocaleString("en-US");
}

// ---------------------------------------------------------------------------------------------
// snl-search

const hitSchema = z.object({
  article_id: z.number().int().nullable().describe("SNL's numeric article id"),
  title: z.string().describe("Article title (headword plus clarification)"),
  headword: z.string().nullable().describe("Headword"),
  clarification: z.string().nullable().describe("What distinguishes articles with the same headword"),
  url: z.string().nullable().describe("Article page"),
  slug: z.string().nullable().describe("The article's name in its URL: pass it to snl-article"),
  snippet: z.string().nullable().describe("Matching text, plain"),
  first_sentences: z.string().nullable().describe("The article's opening sentences, plain"),
  rank: z.number().nullable().describe("Relevance score (higher is better)"),
  license_name: z.string().nullable().describe(
    '"fri" (CC BY-SA 3.0) or "begrenset" (no reuse without permission)',
  ),
  taxonomy: z.object({ id: z.number().int().nullable(), title: z.string().nullable() }).nullable().describe(
    "Subject category",
  ),
  article_type_id: z.number().int().nullable().describe("1 ordinary, 2 biography, 3 country article, ..."),
  encyclopedia_id: z.number().int().nullable().describe("1 SNL, 3 SML, 4 NBL, ..."),
  image: z.object({ url: z.string(), license: z.string().nullable() }).nullable().describe("First image"),
});

const searchOutput = z.object({
  query: z.string().describe("The search terms"),
  site: z.enum(SITE_IDS).describe("Encyclopedia searched"),
  encyclopedia: z.string().describe("Its name"),
  results: z.array(hitSchema).describe("Matching articles, best first"),
  total: z.number().int().nullable().describe("Matches in all: null, the SNL API does not report it"),
  count: z.number().int().describe("Items in this result"),
  offset: z.number().int().describe("Offset of the first item in this result"),
  has_more: z.boolean().describe("Whether more results follow"),
  next_offset: z.number().int().nullable().describe("Offset to ask for next, or null"),
  source: sourceSchema,
});

type Hit = z.output<typeof hitSchema>;

function searchTool(api: SnlApi): ToolDefinition {
  const input = z.strictObject({
    query: z.string().trim().min(1).max(200)
      .refine((q) => q.isWellFormed(), { message: NOT_WELL_FORMED })
      .describe('Search terms in Norwegian, e.g. "Edvard Munch" or "tog"'),
    site: siteField.default("snl"),
    limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).default(5).describe(
      `Results per call, 1–${SEARCH_MAX_LIMIT} (the API's maximum; default 5)`,
    ),
    offset: z.number().int().min(0).max(10_000).default(0).describe(
      "Results to skip, for paging: pass next_offset from the previous result",
    ),
    response_format: responseFormatField,
  });
  return {
    name: "snl-search",
    title: "Search Store norske leksikon",
    description:
      `Searches Store norske leksikon (snl.no), the Norwegian encyclopedia, or a sister encyclopedia via site: ${siteList()}. Returns titles, URLs, slugs, the opening sentences and each article's licence (license_name "fri" = CC BY-SA 3.0, "begrenset" = no reuse without permission), with has_more and next_offset for paging (1–10 per call). Read an article with snl-article using the slug or url.`,
    input,
    output: searchOutput,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const site: SiteId = args.site;
      // Ask for one more than shown, when the API allows it, to know whether more follow.
      const ask = Math.min(args.limit + 1, SEARCH_MAX_LIMIT);
      const answer = await api.search(
        site,
        { query: args.query, limit: ask, offset: args.offset },
        ctx,
        api.deadline(),
      );
      const parsed = parseSearch(answer.data);
      const refusal = parsed === null ? errorMessageOf(answer.data) : null;
      if (refusal !== null) {
        throw new ToolError("API_ERROR", `${SITES[site].name} answered with an error: "${refusal}"`, {
          hint: "Check the search terms; if the message is about the service, try again later",
        });
      }
      if (parsed === null) {
        throw new ToolError(
          "DECODE_ERROR",
          `${SITES[site].name} sent a search answer of an unexpected shape`,
          {
            retryable: false,
            hint: "Try again later; if it persists the API may have changed",
          },
        );
      }
      const upstreamMore = parsed.length > args.limit || parsed.length === SEARCH_MAX_LIMIT;
      // Texts are clipped in proportion to the limit, so at least one hit fits any limit.
      const limit = ctx.limits.characterLimit;
      const nameMax = Math.max(40, Math.min(NAME_MAX, Math.floor(limit / 40)));
      const textMax = Math.max(80, Math.min(SNIPPET_MAX, Math.floor(limit / 12)));
      const name = (v: string | null) => v === null ? null : clip(v, nameMax);
      const results: Hit[] = parsed.slice(0, args.limit).map((h) => ({
        article_id: h.articleId,
        title: clip(inlineText(h.title), nameMax),
        headword: name(h.headword),
        clarification: name(h.clarification),
        // A slug from the upstream may carry a lone surrogate, which encodeURIComponent refuses.
        url: h.url ?? (h.slug ? `${api.origin(site)}/${encodeURIComponent(h.slug.toWellFormed())}` : null),
        slug: h.slug,
        snippet: h.snippet === null ? null : clip(inlineText(h.snippet), textMax),
        first_sentences: h.firstSentences === null ? null : clip(inlineText(h.firstSentences), textMax),
        rank: h.rank,
        license_name: h.license,
        taxonomy: h.taxonomyId === null && h.taxonomyTitle === null
          ? null
          : { id: h.taxonomyId, title: name(h.taxonomyTitle) },
        article_type_id: h.articleTypeId,
        encyclopedia_id: h.encyclopediaId,
        image: h.imageUrl ? { url: h.imageUrl, license: h.imageLicense } : null,
      }));
      const src: Source = {
        name: `${SITES[site].name} (${SITES[site].host})`,
        url: answer.url,
        license:
          'Per article, see each license_name: "fri" = CC BY-SA 3.0, "begrenset" = no reuse without permission',
        license_url: REUSE_TERMS_URL,
        attribution: `Credit the article's author(s) and ${SITES[site].name}`,
      };
      return fitToLimit(results, limit, ({ items, truncated }) => {
        const hasMore = truncated || upstreamMore;
        const structured: z.output<typeof searchOutput> = {
          query: args.query,
          site,
          encyclopedia: SITES[site].name,
          results: items,
          total: null,
          count: items.length,
          offset: args.offset,
          has_more: hasMore,
          next_offset: hasMore ? args.offset + items.length : null,
          source: src,
        };
        const text = formatText(args.response_format, structured, () => {
          const lines = [`## ${SITES[site].name}: "${args.query}"`, ""];
          if (items.length === 0) {
            lines.push(
              args.offset > 0
                ? `No more results after offset ${args.offset}.`
                : `No articles matched. Try other words, or another site (${SITE_IDS.join(", ")}).`,
            );
          }
          items.forEach((r, i) => {
            lines.push(
              `${args.offset + i + 1}. **${r.title}**${r.url ? ` (${r.url})` : ""}${
                r.license_name ? `, licence: ${r.license_name}` : ""
              }`,
            );
            const about = r.first_sentences ?? r.snippet;
            if (about) lines.push(`   ${about}`);
            if (r.slug) lines.push(`   slug: ${r.slug}`);
          });
          if (truncated) {
            lines.push(
              "",
              `Showing ${items.length} of ${results.length} results to stay within the response limit: call again with offset=${structured.next_offset}.`,
            );
          } else if (hasMore) {
            lines.push(
              "",
              `${
                parsed.length > args.limit ? "More results follow" : "More results may follow"
              }: call again with offset=${structured.next_offset}.`,
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
// snl-article

const articleOutput = z.object({
  site: z.enum(SITE_IDS).describe("Encyclopedia"),
  encyclopedia: z.string().describe("Its name"),
  title: z.string().describe("Article title"),
  headword: z.string().nullable().describe("Headword, when given"),
  url: z.string().describe("Article page"),
  subject: z.object({ title: z.string().nullable(), url: z.string().nullable() }).nullable().describe(
    "Subject area the article belongs to",
  ),
  authors: z.array(z.string()).describe("Authors, to credit (the first 50)"),
  authors_total: z.number().int().describe("How many authors the article names"),
  created_at: z.string().nullable().describe("When the article was created, ISO 8601"),
  changed_at: z.string().nullable().describe("When it last changed, ISO 8601"),
  license_name: z.string().nullable().describe('SNL\'s licence name: "fri" or "begrenset"'),
  metadata_license_name: z.string().nullable().describe("Licence of the article's metadata"),
  license: z.object({
    name: z.string().describe("The licence in plain words"),
    url: z.string().nullable().describe("Licence text"),
    reuse: z.string().describe("What reuse is allowed"),
  }),
  images: z.array(z.object({
    url: z.string().nullable(),
    caption: z.string().nullable(),
    license: z.string().nullable(),
  })).describe("Images attached to the article (fields as SNL gives them; the first 20)"),
  images_total: z.number().int().describe("How many images the article has"),
  links: z.array(z.object({ text: z.string(), url: z.string() })).describe(
    `Articles the text links to (first ${MAX_LINKS}); pass a url to snl-article to read one`,
  ),
  links_total: z.number().int().describe("How many links the text has"),
  text: z.string().describe("This part of the article as plain text with light markdown"),
  total: z.number().int().describe("Characters in the whole article text"),
  count: z.number().int().describe("Characters in this part"),
  offset: z.number().int().describe("Character offset where this part starts"),
  has_more: z.boolean().describe("Whether more text follows"),
  next_offset: z.number().int().nullable().describe("Offset to ask for next, or null"),
  source: sourceSchema,
});

type ArticleOut = z.output<typeof articleOutput>;

// A slug is one path segment: no separators, no query or fragment, and not one of the
// site's dot-prefixed internal routes (".taxonomy", ".api").
function slugProblem(slug: string): string | null {
  // deno-lint-ignore no-control-regex
  if (/[/\\?#\u0000-\u001f\u007f]/.test(slug)) {
    return "a slug is one path segment: no / \\ ? # or control characters";
  }
  if (slug.startsWith(".")) return 'a slug cannot start with "."';
  return null;
}

function articleTool(api: SnlApi): ToolDefinition {
  const input = z.strictObject({
    slug: z.string().trim().min(1).max(200)
      .superRefine((s, ctx) => {
        const problem = s.isWellFormed() ? slugProblem(s) : NOT_WELL_FORMED;
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional()
      .describe(
        'The article\'s name in its URL, as snl-search returns it (slug), e.g. "Oslo" or "fortolket_programmeringsspråk"',
      ),
    url: z.string().trim().min(1).max(500)
      .refine((u) => u.isWellFormed(), { message: NOT_WELL_FORMED })
      .optional().describe(
        "The article's page URL on snl.no or a sister site, e.g. https://snl.no/Oslo or https://sml.snl.no/hjerteinfarkt",
      ),
    id: z.number().int().min(1).optional().describe(
      "SNL's numeric article_id from snl-search. Uses an endpoint SNL does not document: prefer slug or url",
    ),
    site: siteField.optional(),
    offset: z.number().int().min(0).default(0).describe(
      "Character offset to start from in a long article: pass next_offset from the previous part",
    ),
    max_chars: z.number().int().min(200).max(100_000).optional().describe(
      "Most characters of article text in this part (default: as many as fit the response limit)",
    ),
    response_format: responseFormatField,
  }).refine((a) => [a.slug, a.url, a.id].filter((v) => v !== undefined).length === 1, {
    message: 'give exactly one of "slug", "url" or "id"',
    path: ["slug"],
  });
  return {
    name: "snl-article",
    title: "Read a Store norske leksikon article",
    description: `Reads one article from Store norske leksikon or a sister encyclopedia (${
      SITE_IDS.join(", ")
    }), by slug (from snl-search), page URL, or numeric id. Returns the text as plain text with light markdown, authors, dates, subject, the links in the text, and the licence: license_name "fri" means CC BY-SA 3.0 (credit the authors and the encyclopedia), "begrenset" means no reuse without permission. Long articles come in parts: continue with offset=next_offset.`,
    input,
    output: articleOutput,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      let site: SiteId = args.site ?? "snl";
      let path: string;
      let wanted: string;
      if (args.url !== undefined) {
        const parsed = parseArticleUrl(args.url);
        if (args.site !== undefined && args.site !== parsed.site) {
          throw new ToolError(
            "VALIDATION_ERROR",
            `The url is on ${SITES[parsed.site].host} but site is "${args.site}"`,
            { field: "site", hint: "Leave site out when you give a url: the url decides" },
          );
        }
        site = parsed.site;
        path = `${encodeURIComponent(parsed.slug)}.json`;
        wanted = `"${parsed.slug}"`;
      } else if (args.slug !== undefined) {
        const slug = args.slug.replace(/ /g, "_");
        path = `${encodeURIComponent(slug)}.json`;
        wanted = `"${slug}"`;
      } else {
        path = `api/v1/article/${args.id}`;
        wanted = `with id ${args.id}`;
      }
      let answer;
      try {
        answer = await api.get(site, path, ctx, api.deadline());
      } catch (e) {
        if (isNotFound(e)) {
          throw new ToolError(
            "NOT_FOUND",
            `${SITES[site].name} has no article ${wanted} (HTTP ${e.status})`,
            {
              status: e.status!,
              hint: args.id !== undefined
                ? "Lookup by id uses a route SNL does not document; call snl-search and pass the result's slug or url instead"
                : `Find the article with snl-search (site "${site}") and pass its slug or url`,
            },
          );
        }
        throw e;
      }
      const parsed = parseArticle(answer.data);
      const refusal = parsed === null ? errorMessageOf(answer.data) : null;
      if (refusal !== null) {
        throw new ToolError(
          "API_ERROR",
          `${SITES[site].name} answered for ${wanted} with an error: "${refusal}"`,
          {
            hint: `Check the slug or url (snl-search, site "${site}", gives valid ones), or try again later`,
          },
        );
      }
      if (!parsed) {
        throw new ToolError(
          "DECODE_ERROR",
          `${SITES[site].name} answered for ${wanted}, but not with article JSON`,
          { hint: `Check the slug or url; snl-search (site "${site}") gives valid ones` },
        );
      }
      const article = shortFields(parsed, ctx.limits.characterLimit);
      const body = article.xhtmlBody !== null
        ? bodyToText(article.xhtmlBody)
        : { text: article.plainBody ?? "", links: [] };
      const text = body.text;
      if (args.offset > 0 && args.offset >= text.length) {
        throw new ToolError(
          "VALIDATION_ERROR",
          `Offset ${args.offset} is past the end of the article (${n(text.length)} characters)`,
          { field: "offset", hint: "Use next_offset from the previous part, or leave offset out" },
        );
      }
      const url = canonicalUrl(article.url) ?? answer.url.replace(/\.json(?=$|\?)/, "");
      const terms = licenseTerms(article.licenseName);
      const authors = article.authors.length
        ? article.authors.slice(0, CREDITED_AUTHORS).join(", ") +
          (article.authorsTotal > CREDITED_AUTHORS ? " et al." : "")
        : "the editors";
      const src: Source = {
        name: `${SITES[site].name} (${SITES[site].host})`,
        url,
        license: terms.name,
        license_url: terms.url ?? (article.licenseName === "fri" ? REUSE_TERMS_URL : null),
        attribution: `${authors}: "${article.title}" in ${SITES[site].name}, ${url} (licence: ${
          article.licenseName ?? "not stated"
        })`,
      };
      const start = safeIndex(text, args.offset);
      const links = body.links.slice(0, MAX_LINKS).map((l) => ({
        text: l.text,
        url: canonicalUrl(l.url) ?? l.url,
      }));
      const all: Lists = {
        authors: article.authors.length,
        images: article.images.length,
        links: links.length,
      };
      const render = (end: number, k: Lists = all): { text: string; structured: ArticleOut } => {
        const hasMore = end < text.length;
        const structured: ArticleOut = {
          site,
          encyclopedia: SITES[site].name,
          title: article.title,
          headword: article.headword,
          url,
          subject: article.subjectTitle === null && article.subjectUrl === null
            ? null
            : { title: article.subjectTitle, url: canonicalUrl(article.subjectUrl) },
          authors: article.authors.slice(0, k.authors),
          authors_total: article.authorsTotal,
          created_at: article.createdAt,
          changed_at: article.changedAt,
          license_name: article.licenseName,
          metadata_license_name: article.metadataLicenseName,
          license: terms,
          images: article.images.slice(0, k.images),
          images_total: article.imagesTotal,
          links: links.slice(0, k.links),
          links_total: body.links.length,
          text: text.slice(start, end),
          total: text.length,
          count: end - start,
          offset: start,
          has_more: hasMore,
          next_offset: hasMore ? end : null,
          source: src,
        };
        return {
          text: formatText(args.response_format, structured, () => articleMarkdown(structured)),
          structured,
        };
      };
      const limit = ctx.limits.characterLimit;
      const k = fitLists(all, limit, (lists) => render(start, lists));
      return fitPart(text, start, args.max_chars, limit, (end) => render(end, k));
    },
  };
}

function articleMarkdown(s: ArticleOut): string {
  const lines = [`# ${s.title}`, `${s.encyclopedia} · ${s.url}`];
  if (s.subject?.title) {
    lines.push(`Subject: ${s.subject.title}${s.subject.url ? ` (${s.subject.url})` : ""}`);
  }
  const meta = [
    s.authors.length
      ? `Authors: ${s.authors.join(", ")}${
        s.authors_total > s.authors.length
          ? ` and ${s.authors_total - s.authors.length} more (see the article page)`
          : ""
      }`
      : null,
    s.created_at ? `created ${s.created_at.slice(0, 10)}` : null,
    s.changed_at ? `changed ${s.changed_at.slice(0, 10)}` : null,
  ].filter(Boolean);
  if (meta.length) lines.push(meta.join(" · "));
  lines.push(`Licence: ${s.license_name ?? "not stated"} = ${s.license.name}. ${s.license.reuse}.`);
  if (s.total > 0 && (s.offset > 0 || s.has_more)) {
    lines.push(`Part: characters ${n(s.offset)}–${n(s.offset + s.count)} of ${n(s.total)}.`);
  }
  lines.push("", s.text.replace(/\s+$/, "") || "(The article has no text.)", "");
  if (s.has_more) {
    lines.push(`More follows: call snl-article again with the same article and offset=${s.next_offset}.`, "");
  }
  if (s.links.length && !s.has_more) {
    const shown = s.links.length < s.links_total ? ` (${s.links.length} of ${s.links_total})` : "";
    lines.push(`Links in the article${shown}: ${s.links.map((l) => `${l.text} (${l.url})`).join("; ")}`, "");
  }
  lines.push(creditLine(s.source));
  return lines.join("\n");
}

/** Reads an article page URL: the host must be an SNL site and the path one segment. */
function parseArticleUrl(raw: string): { site: SiteId; slug: string } {
  const fail = (why: string) =>
    new ToolError("VALIDATION_ERROR", `Cannot read "url": ${why}`, {
      field: "url",
      hint: `Give an article page such as https://snl.no/Oslo (hosts: ${
        SITE_IDS.map((id) => SITES[id].host).join(", ")
      }), or pass slug instead`,
    });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw fail("it is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw fail("only http and https URLs are accepted");
  }
  if (url.username || url.password || url.port) throw fail("it carries credentials or a port");
  const site = siteOfHost(url.hostname);
  if (!site) throw fail(`"${url.hostname}" is not an SNL encyclopedia`);
  const slug = slugOfPath(url.pathname);
  if (!slug || slugProblem(slug)) throw fail("its path is not a single article name");
  return { site, slug };
}

// SNL's article JSON gives http:// URLs for its own pages; the sites are served over https.
function canonicalUrl(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.protocol === "http:" && siteOfHost(u.hostname)) u.protocol = "https:";
    return u.toString();
  } catch {
    return url;
  }
}

function safeIndex(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return Math.max(0, Math.min(i, text.length));
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

function cutPoint(text: string, start: number, max: number): number {
  if (text.length - start <= max) return text.length;
  const limit = start + max;
  const floor = start + Math.floor(max / 2);
  for (const sep of ["\n\n", "\n", ". ", " "]) {
    const at = text.lastIndexOf(sep, limit - sep.length);
    if (at >= floor) return at + sep.length;
  }
  return safeIndex(text, limit);
}

/**
 * The article with its names (title, headword, subject, authors, captions) clipped in proportion
 * to the limit: they repeat in every part, so each part must leave room for text.
 */
function shortFields(a: SnlArticle, limit: number): SnlArticle {
  const max = Math.max(40, Math.min(NAME_MAX, Math.floor(limit / 40)));
  const name = (v: string | null) => v === null ? null : clip(v, max);
  return {
    ...a,
    title: clip(a.title, max),
    headword: name(a.headword),
    subjectTitle: name(a.subjectTitle),
    authors: a.authors.map((x) => clip(x, max)),
    images: a.images.map((i) => ({ ...i, caption: i.caption === null ? null : clip(i.caption, 2 * max) })),
  };
}

/** How many authors, images and links a part shows. */
interface Lists {
  authors: number;
  images: number;
  links: number;
}

/** Authors named in the credit line; the rest are in `authors`. */
const CREDITED_AUTHORS = 5;

function size(r: { text: string; structured: unknown }): number {
  return Math.max(r.text.length, JSON.stringify(r.structured).length);
}

/**
 * Shortens the lists around the text (images first, then links, then authors, keeping one) until
 * a part without text takes at most two thirds of the limit, so every part carries text.
 */
function fitLists(
  all: Lists,
  limit: number,
  render: (lists: Lists) => { text: string; structured: unknown },
): Lists {
  const room = Math.floor(limit * 2 / 3);
  let k = { ...all };
  for (const key of ["images", "links", "authors"] as const) {
    if (size(render(k)) <= room) break;
    const min = key === "authors" ? Math.min(1, all.authors) : 0;
    let lo = min;
    let hi = all[key];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (size(render({ ...k, [key]: mid })) <= room) lo = mid;
      else hi = mid - 1;
    }
    k = { ...k, [key]: lo };
  }
  return k;
}

/** The longest part from `start`, cut at a boundary, whose rendering fits `limit` in both formats. */
function fitPart(
  text: string,
  start: number,
  maxChars: number | undefined,
  limit: number,
  render: (end: number) => { text: string; structured: ArticleOut },
): { text: string; structured: ArticleOut } {
  let max = Math.min(maxChars ?? limit, limit);
  for (let i = 0; i < 16; i++) {
    const end = cutPoint(text, start, Math.max(1, max));
    const r = render(end);
    const over = size(r) - limit;
    if (over <= 0) return r;
    max = end - start - over - 32;
    if (max < 1) break;
  }
  return render(start);
}

/** The two SNL tools. */
export function snlTools(api: SnlApi): ToolDefinition[] {
  return [searchTool(api), articleTool(api)];
}
