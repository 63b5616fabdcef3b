// What the Wikipedia tools share: their toolset and annotations, the API's limits, and the
// language and title fields every tool's input has.
import { z } from "zod";
import { NOT_WELL_FORMED } from "../../html.ts";
import { LANGUAGE_MAX_LENGTH, LANGUAGE_PATTERN, languageProblem } from "./language.ts";

/** Every Wikipedia tool only reads, from the open web. */
export const ANNOTATIONS = {
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
export const SEARCH_PAGE_MAX = 500;
/** CirrusSearch serves no result past this offset. */
export const SEARCH_OFFSET_MAX = 10_000;
/** Most options listed for a disambiguation page. */
export const MAX_OPTIONS = 100;
/** Article characters shown in the answer when the whole article goes to a file. */
export const FILE_PREVIEW_CHARS = 2000;

/** The `language` input field, defaulting to the configured language. */
export function languageField(defaultLanguage: string) {
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
export const titleField = z.string().trim()
  .refine((t) => t.length >= 1 && t.length <= 255, { message: "a title has 1 to 255 characters" })
  // deno-lint-ignore no-control-regex
  .refine((t) => !/[|#<>[\]{}\u0000-\u001f\u007f]/.test(t), {
    message: "a title cannot contain | # < > [ ] { } or control characters",
  })
  .refine((t) => t.isWellFormed(), { message: NOT_WELL_FORMED })
  .describe("Article title (redirects are followed)");
