// wikipedia-content: a whole article, a section at a time, with its outline; or all of it to a file.
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import { formatText } from "../../../mcp/shaping.ts";
import type { ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import { articleText, cutPoint, safeIndex, sectionAt } from "../article_text.ts";
import type { Section } from "../article_text.ts";
import type { WikipediaApi } from "../client.ts";
import { boundedUrl, clip } from "../../../html.ts";
import { creditLine, n, pageShape, source, sourceSchema } from "../format.ts";
import type { Source } from "../format.ts";
import { fileName, fileSchema, formatField, outputField, written } from "../../../output/result_files.ts";
import type { FileOut, Written } from "../../../output/result_files.ts";
import { citeRevision } from "../format.ts";
import { ANNOTATIONS, FILE_PREVIEW_CHARS, languageField, titleField, TOOLSET } from "../schemas.ts";
import { isDisambiguation, locate } from "../locate.ts";

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

/** `wikipedia-content`. */
export function contentTool(api: WikipediaApi): ToolDefinition {
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
  const doc = [...head, text.trimEnd(), "", "---", "", creditLine(src), ""].join("\n");
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
    s.text.trimEnd(),
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
