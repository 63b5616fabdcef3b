// snl-search: articles matching a query on one of the encyclopedias, a page at a time or every
// result to a file.
import { snlSearchView } from "../view.ts";
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import { fitToLimit, formatText } from "../../../mcp/shaping.ts";
import type { NextCall, ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import type { SnlApi } from "../client.ts";
import { clip, inlineText, NOT_WELL_FORMED } from "../../../html.ts";
import { errorMessageOf, NAME_MAX, parseSearch, SNIPPET_MAX } from "../parse.ts";
import type { SnlHit } from "../parse.ts";
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
import type { Written } from "../../../output/result_files.ts";
import { SITES } from "../sites.ts";
import type { SiteId } from "../sites.ts";
import {
  ANNOTATIONS,
  creditLine,
  n,
  REUSE_TERMS_URL,
  SEARCH_MAX_LIMIT,
  siteField,
  type Source,
  sourceSchema,
  TOOLSET,
} from "../format.ts";

const searchOutput = z.looseObject({
  results: z.array(z.looseObject({ title: z.string() })),
  total: z.number().nullable(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  source: sourceSchema,
  file: fileSchema.optional(),
});

type Hit = {
  article_id: number | null;
  title: string;
  headword: string | null;
  clarification: string | null;
  url: string | null;
  /** The article's name in its URL: pass it to snl-article. */
  slug: string | null;
  snippet: string | null;
  first_sentences: string | null;
  rank: number | null;
  /** "fri" (CC BY-SA 3.0) or "begrenset" (no reuse without permission). */
  license_name: string | null;
  taxonomy: { id: number | null; title: string | null } | null;
  article_type_id: number | null;
  encyclopedia_id: number | null;
  image: { url: string; license: string | null } | null;
};

/** Everything a search answer carries (the output schema declares the main fields only). */
type SearchOut = {
  query: string;
  site: SiteId;
  encyclopedia: string;
  results: Hit[];
  /** Always null: the SNL API does not report it. */
  total: number | null;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  source: Source;
};

/** Reads a search answer, or throws the error contract for a refusal or a body of another shape. */
function searchHits(data: unknown, site: SiteId): SnlHit[] {
  const parsed = parseSearch(data);
  const refusal = parsed === null ? errorMessageOf(data) : null;
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
  return parsed;
}

/** `snl-search`. */
export function searchTool(api: SnlApi): ToolDefinition {
  const input = z.strictObject({
    query: z.string().trim()
      .refine((q) => q.length >= 1 && q.length <= 200, { message: "give 1 to 200 characters" })
      .refine((q) => q.isWellFormed(), { message: NOT_WELL_FORMED })
      .describe("Search terms (Norwegian)"),
    site: orDefault(siteField, "snl"),
    limit: orDefault(z.int().min(1).max(SEARCH_MAX_LIMIT), 5).describe("Results (default 5)"),
    offset: orDefault(z.int().min(0).max(10_000), 0).describe("Results to skip (next_offset)"),
    response_format: formatField,
    output: outputField("all results"),
  });
  return {
    name: "snl-search",
    title: "Search SNL",
    toolset: TOOLSET,
    description:
      "Searches Store norske leksikon, the Norwegian encyclopedia, or a sister site: titles, slugs, opening sentences and licence. Read one with snl-article.",
    input,
    output: searchOutput,
    view: snlSearchView,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const site: SiteId = args.site;
      const toFile = args.output === "file";
      // Ask for one more than shown, when the API allows it, to know whether more follow; a
      // file asks for full pages from the start.
      const ask = toFile ? SEARCH_MAX_LIMIT : Math.min(args.limit + 1, SEARCH_MAX_LIMIT);
      const answer = await api.search(
        site,
        { query: args.query, limit: ask, offset: args.offset },
        ctx,
        api.deadline(),
      );
      const parsed = searchHits(answer.data, site);
      const upstreamMore = parsed.length > args.limit || parsed.length === SEARCH_MAX_LIMIT;
      // Texts are clipped in proportion to the limit, so at least one hit fits any limit.
      const limit = ctx.limits.characterLimit;
      const nameMax = Math.max(40, Math.min(NAME_MAX, Math.floor(limit / 40)));
      const textMax = Math.max(80, Math.min(SNIPPET_MAX, Math.floor(limit / 12)));
      const results: Hit[] = parsed.slice(0, args.limit).map((h) => hitOut(api, site, h, nameMax, textMax));
      const src: Source = {
        name: `${SITES[site].name} (${SITES[site].host})`,
        url: answer.url,
        license:
          'Per article, see each license_name: "fri" = CC BY-SA 3.0, "begrenset" = no reuse without permission',
        license_url: REUSE_TERMS_URL,
        attribution: `Credit the article's author(s) and ${SITES[site].name}`,
      };
      const file = toFile ? await searchFile(api, args, site, parsed, src, ctx) : null;
      const room = limit - (file ? 2 * file.line.length : 0);
      const rendered = fitToLimit(results, room, ({ items, truncated }) => {
        const hasMore = truncated || upstreamMore;
        const structured: SearchOut = {
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
                : `No articles matched on ${SITES[site].host}.`,
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
          // The next page is named below as a ready call (the core adds it from next_offset).
          if (truncated) {
            lines.push(
              "",
              `Showing ${items.length} of ${results.length} results to stay within the response limit.`,
            );
          } else if (hasMore) {
            lines.push("", parsed.length > args.limit ? "More results follow." : "More results may follow.");
          }
          lines.push("", creditLine(src));
          return lines.join("\n");
        });
        return { text, structured };
      });
      const next = searchNext(args, site, rendered.structured.results);
      return { ...withFile(rendered, file), ...(next.length ? { next } : {}) };
    },
  };
}

/**
 * What a search answer names next: the first hits' articles; with no hit on the first page, the
 * same words on the general encyclopedias it did not search, and the first word alone.
 */
function searchNext(
  args: { query: string; offset: number },
  site: SiteId,
  results: readonly Hit[],
): NextCall[] {
  if (results.length) {
    return results.slice(0, 3).flatMap((r) =>
      r.slug === null ? [] : [{
        tool: "snl-article",
        arguments: { slug: r.slug, ...(site === "snl" ? {} : { site }) },
        for: `article "${r.title}"`,
      }]
    );
  }
  if (args.offset > 0) return [];
  const calls: NextCall[] = (["snl", "lille", "nbl"] as const).filter((other) => other !== site).slice(0, 2)
    .map((other) => ({
      tool: "snl-search",
      arguments: { query: args.query, site: other },
      for: `${SITES[other].name} (${other})`,
    }));
  const words = args.query.trim().split(/\s+/);
  if (words.length > 1) {
    calls.push({
      tool: "snl-search",
      arguments: { query: words[0]!, ...(site === "snl" ? {} : { site }) },
      for: "the first word",
    });
  }
  return calls;
}

/** One hit as results show it. */
function hitOut(api: SnlApi, site: SiteId, h: SnlHit, nameMax: number, textMax: number): Hit {
  const name = (v: string | null) => v === null ? null : clip(v, nameMax);
  return {
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
  };
}

/**
 * Writes every result from `args.offset` on to a file: the first page already read, then page
 * after page of ten while pages come full, up to `file_max_results` and while the call has time.
 */
async function searchFile(
  api: SnlApi,
  args: { query: string; offset: number; response_format: "markdown" | "json" },
  site: SiteId,
  first: SnlHit[],
  src: Source,
  ctx: ToolCallContext,
): Promise<Written> {
  const cap = api.fileMaxResults;
  const hits = first.slice(0, cap);
  let more = first.length === SEARCH_MAX_LIMIT;
  let next = args.offset + first.length;
  let stop: string | undefined;
  while (more && hits.length < cap) {
    const deadline = api.pageDeadline();
    if (deadline === null) {
      stop = `the call ran short of time; call again with offset=${next} and output "file" for the rest`;
      break;
    }
    let page: SnlHit[];
    try {
      const answer = await api.search(
        site,
        { query: args.query, limit: SEARCH_MAX_LIMIT, offset: next },
        ctx,
        deadline,
      );
      page = searchHits(answer.data, site);
    } catch (e) {
      if (!endsFile(e, ctx.signal)) throw e;
      stop = `a page failed (${e.message}); call again with offset=${next} and output "file" for the rest`;
      break;
    }
    hits.push(...page.slice(0, cap - hits.length));
    more = page.length === SEARCH_MAX_LIMIT;
    next += page.length;
  }
  if (stop === undefined && more) {
    stop =
      `the file holds the most results one call writes (${cap}, file_max_results); call again with offset=${
        args.offset + hits.length
      } and output "file" for the rest`;
  }
  const rows = hits.map((h, i) => {
    const o = hitOut(api, site, h, NAME_MAX, SNIPPET_MAX);
    return {
      rank: args.offset + i + 1,
      title: o.title,
      headword: o.headword,
      clarification: o.clarification,
      slug: o.slug,
      url: o.url,
      license_name: o.license_name,
      first_sentences: o.first_sentences,
      snippet: o.snippet,
      article_id: o.article_id,
      subject: o.taxonomy?.title ?? null,
      article_type_id: o.article_type_id,
      encyclopedia_id: o.encyclopedia_id,
      image_url: o.image?.url ?? null,
      image_license: o.image?.license ?? null,
    };
  });
  const saved = await ctx.files.save({
    name: fileName(`search_${site}`, args.query),
    format: args.response_format === "json" ? "json" : "csv",
    rows: [rows],
    head: { query: args.query, site, offset: args.offset, complete: stop === undefined, source: src },
    itemsKey: "results",
    description: `${SITES[site].name} search "${
      clip(args.query, 80)
    }": ${rows.length} results; licence per row (license_name)`,
  });
  return written(saved, `${n(rows.length)} results`, ctx, stop);
}
