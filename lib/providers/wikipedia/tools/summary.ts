// wikipedia-summary: an article's lead (or a disambiguation page's options), by title, with its
// credit.
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import { formatText, largestWhere } from "../../../mcp/shaping.ts";
import type { ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import type { WikipediaApi } from "../client.ts";
import { boundedUrl, clip } from "../../../html.ts";
import { creditLine, SHORT_TEXT_MAX, source, sourceSchema, TITLE_MAX } from "../format.ts";
import type { Source } from "../format.ts";
import { formatField } from "../../../output/result_files.ts";
import { hasContinue, parsePages } from "../parse.ts";
import { isDisambiguation, locate } from "../locate.ts";
import { citeRevision, fitPlainText, size } from "../format.ts";
import {
  ANNOTATIONS,
  languageField,
  MAX_CHARS,
  MAX_OPTIONS,
  MAX_SENTENCES,
  titleField,
  TOOLSET,
} from "../schemas.ts";

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

/** `wikipedia-summary`. */
export function summaryTool(api: WikipediaApi): ToolDefinition {
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
