// snl-article: one article by URL or site and slug, a part at a time within the character limit,
// with its licence and authors; or all of it to a file.
import { cite } from "../../../output/provenance.ts";
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import { formatText } from "../../../mcp/shaping.ts";
import { fitLists, fitPart } from "../article_parts.ts";
import { safeIndex } from "../../../mcp/shaping.ts";
import type { Lists } from "../article_parts.ts";
import type { ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import { isNotFound } from "../client.ts";
import type { SnlApi } from "../client.ts";
import { clip, NOT_WELL_FORMED } from "../../../html.ts";
import { bodyToText, errorMessageOf, NAME_MAX, parseArticle, slugOfPath } from "../parse.ts";
import type { SnlArticle } from "../parse.ts";
import {
  fileName,
  fileSchema,
  formatField,
  orDefault,
  outputField,
  written,
} from "../../../output/result_files.ts";
import type { FileOut, Written } from "../../../output/result_files.ts";
import { SITE_IDS, siteOfHost, SITES } from "../sites.ts";
import type { SiteId } from "../sites.ts";
import {
  ANNOTATIONS,
  creditLine,
  FILE_PREVIEW_CHARS,
  licenseTerms,
  MAX_LINKS,
  n,
  REUSE_TERMS_URL,
  siteField,
  type Source,
  sourceSchema,
  type Terms,
  TOOLSET,
} from "../format.ts";

const articleOutput = z.looseObject({
  title: z.string(),
  url: z.string(),
  license_name: z.string().nullable(),
  text: z.string(),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  source: sourceSchema,
  file: fileSchema.optional(),
});

/** Everything a part of an article carries (the output schema declares the main fields only). */
type ArticleOut = {
  site: SiteId;
  encyclopedia: string;
  title: string;
  headword: string | null;
  url: string;
  subject: { title: string | null; url: string | null } | null;
  /** Authors, to credit (the first 50). */
  authors: string[];
  authors_total: number;
  created_at: string | null;
  changed_at: string | null;
  /** SNL's licence name: "fri" or "begrenset". */
  license_name: string | null;
  metadata_license_name: string | null;
  license: Terms;
  images: { url: string | null; caption: string | null; license: string | null }[];
  images_total: number;
  /** Articles the text links to (the first 50); pass a url to snl-article to read one. */
  links: { text: string; url: string }[];
  links_total: number;
  text: string;
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  source: Source;
  file?: FileOut;
};

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

/** `snl-article`. */
export function articleTool(api: SnlApi): ToolDefinition {
  const input = articleInput();
  return {
    name: "snl-article",
    title: "Read SNL article",
    toolset: TOOLSET,
    description:
      'Reads an SNL article by slug, url or id: text in parts (offset=next_offset), authors, links and licence ("fri" = CC BY-SA 3.0, "begrenset" = no reuse).',
    input,
    output: articleOutput,
    annotations: ANNOTATIONS,
    async handler(args: ArticleArgs, ctx: ToolCallContext) {
      const target = articleTarget(args);
      const { answer, parsed } = await fetchArticle(api, target, args, ctx);
      return await articlePart(parsed, { site: target.site, answerUrl: answer.url }, args, ctx);
    },
  };
}

/** The tool's arguments. */
function articleInput() {
  return z.strictObject({
    slug: z.string().trim()
      .superRefine((s, ctx) => {
        const problem = s.length < 1 || s.length > 200
          ? "give 1 to 200 characters"
          : s.isWellFormed()
          ? slugProblem(s)
          : NOT_WELL_FORMED;
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional()
      .describe('Slug from snl-search, e.g. "Oslo"'),
    url: z.string().trim()
      .refine((u) => u.length >= 1 && u.length <= 500, { message: "give 1 to 500 characters" })
      .refine((u) => u.isWellFormed(), { message: NOT_WELL_FORMED })
      .optional().describe("Article page, e.g. https://snl.no/Oslo"),
    id: z.int().min(1).max(1_000_000_000).optional().describe("Numeric article_id (prefer slug or url)"),
    site: siteField.optional(),
    offset: orDefault(z.int().min(0).max(10_000_000), 0).describe("Character to start at (next_offset)"),
    max_chars: z.int().min(200).max(100_000).optional().describe("Most characters in this part"),
    response_format: formatField,
    output: outputField("the whole article"),
  }).refine((a) => [a.slug, a.url, a.id].filter((v) => v !== undefined).length === 1, {
    message: 'give exactly one of "slug", "url" or "id"',
    path: ["slug"],
  });
}

type ArticleArgs = z.output<ReturnType<typeof articleInput>>;

/** Which article: its site, its path on the API, and how an error names it. */
interface ArticleTarget {
  site: SiteId;
  path: string;
  wanted: string;
}

/** The article the arguments name: by url (its site decides), slug or id. */
function articleTarget(args: ArticleArgs): ArticleTarget {
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
  return { site, path, wanted };
}

/** The article's JSON, parsed; a missing article, an error answer or other JSON each say what to do. */
async function fetchArticle(
  api: SnlApi,
  target: ArticleTarget,
  args: ArticleArgs,
  ctx: ToolCallContext,
): Promise<{ answer: { url: string }; parsed: SnlArticle }> {
  const { site, path, wanted } = target;
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
  return { answer, parsed };
}

/**
 * Most characters of markup an article body may have: turning it into text is linear
 * (lib/markup.ts) but runs again for every part, on the event loop every session shares.
 */
export const MAX_MARKUP_CHARS = 2_000_000;

/** The part of the article from `offset` that fits the limit, with its lists, credit and file. */
async function articlePart(
  parsed: SnlArticle,
  from: { site: SiteId; answerUrl: string },
  args: ArticleArgs,
  ctx: ToolCallContext,
) {
  const { site } = from;
  const article = shortFields(parsed, ctx.limits.characterLimit);
  const url = canonicalUrl(article.url) ?? from.answerUrl.replace(/\.json(?=$|\?)/, "");
  if (article.xhtmlBody !== null && article.xhtmlBody.length > MAX_MARKUP_CHARS) {
    throw new ToolError(
      "DECODE_ERROR",
      `The article's body is ${n(article.xhtmlBody.length)} characters of markup, more than the ${
        n(MAX_MARKUP_CHARS)
      } this server turns into text (no real SNL article comes near)`,
      { hint: `Read the article on its page: ${url}` },
    );
  }
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
  const file = args.output === "file" ? await articleFile(parsed, site, url, body, terms, src, ctx) : null;
  const all: Lists = {
    authors: article.authors.length,
    images: article.images.length,
    links: links.length,
  };
  // The article's own licence and last change, for the answer's provenance.
  cite({
    ...(url ? { permalink: url } : {}),
    licence: `${terms.name}${article.licenseName ? ` (SNL: "${article.licenseName}")` : ""}`,
    ...(article.changedAt ? { as_of: `changed ${article.changedAt}` } : {}),
  });
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
      ...(file ? { file: file.out } : {}),
    };
    const md = formatText(args.response_format, structured, () => articleMarkdown(structured));
    return { text: file ? `${md}\n\n${file.line}` : md, structured };
  };
  const limit = ctx.limits.characterLimit;
  const k = fitLists(all, limit, (lists) => render(start, lists));
  // With a file the answer previews the first part; the file holds the whole article.
  const maxChars = args.max_chars ?? (file ? FILE_PREVIEW_CHARS : undefined);
  const part = fitPart(text, start, maxChars, limit, (end) => render(end, k));
  return file ? { ...part, content: [file.link] } : part;
}

/** Writes the whole article as one markdown document: text, every link, authors and licence. */
async function articleFile(
  a: SnlArticle,
  site: SiteId,
  url: string,
  body: { text: string; links: { text: string; url: string }[] },
  terms: Terms,
  src: Source,
  ctx: ToolCallContext,
): Promise<Written> {
  const lines = [`# ${a.title}`, "", `${SITES[site].name} · ${url}`];
  if (a.subjectTitle) lines.push(`Subject: ${a.subjectTitle}`);
  if (a.authors.length) {
    lines.push(
      `Authors: ${a.authors.join(", ")}${
        a.authorsTotal > a.authors.length ? ` and ${a.authorsTotal - a.authors.length} more` : ""
      }`,
    );
  }
  const dates = [a.createdAt && `created ${a.createdAt}`, a.changedAt && `changed ${a.changedAt}`].filter(
    Boolean,
  );
  if (dates.length) lines.push(dates.join(" · "));
  lines.push(`Licence: ${a.licenseName ?? "not stated"} = ${terms.name}. ${terms.reuse}.`, "");
  lines.push(body.text.trimEnd() || "(The article has no text.)");
  if (body.links.length) {
    lines.push("", "## Links in the article", "");
    for (const l of body.links) lines.push(`- [${l.text}](${canonicalUrl(l.url) ?? l.url})`);
  }
  lines.push("", "---", "", creditLine(src), "");
  const saved = await ctx.files.save({
    name: fileName(`article_${site}`, a.title),
    format: "md",
    text: lines.join("\n"),
    description: `${SITES[site].name}: "${clip(a.title, 80)}", whole article; licence ${
      a.licenseName ?? "not stated"
    }`,
  });
  return written(
    saved,
    `The whole article (${n(body.text.length)} characters, ${body.links.length} links)`,
    ctx,
  );
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
  // A free article's reuse terms are its closing credit line (licence, link and the credit to
  // give), and the provenance line names the licence too: the head says which licence, once.
  // Restricted or unstated articles keep their warning at the top.
  lines.push(
    s.license_name === "fri"
      ? `Licence: fri = ${s.license.name} (credit at the end).`
      : `Licence: ${s.license_name ?? "not stated"} = ${s.license.name}. ${s.license.reuse}.`,
  );
  if (s.total > 0 && (s.offset > 0 || s.has_more)) {
    lines.push(`Part: characters ${n(s.offset)}–${n(s.offset + s.count)} of ${n(s.total)}.`);
  }
  lines.push("", s.text.trimEnd() || "(The article has no text.)", "");
  if (s.has_more) {
    lines.push(`More follows: call snl-article again with the same article and offset=${s.next_offset}.`, "");
  }
  if (s.links.length && !s.has_more) {
    const shown = s.links.length < s.links_total
      ? ` (${s.links.length} of ${s.links_total}; output "file" lists them all)`
      : "";
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

/** Authors named in the credit line; the rest are in `authors`. */
const CREDITED_AUTHORS = 5;
