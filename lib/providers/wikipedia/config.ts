import { defineProvider, hostOf } from "../../config/provider_spec.ts";
import { baseUrlProblem, DEFAULT_BASE_URL, hostFor, isLanguage, isTemplate } from "./language.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { Same, WikipediaSettings } from "./settings.ts";

// Provider-specific keys. `base_url` is redeclared (it replaces the common key) so a template
// is checked as a template: the common check alone would accept any braces.
const extra = () => ({
  base_url: z.string()
    .superRefine((value, ctx) => {
      const problem = baseUrlProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: `base_url ${problem}` });
    })
    .default(DEFAULT_BASE_URL)
    .describe(
      "MediaWiki origin; {lang} stands for the language code. Without {lang} every language goes to that one origin",
    ),
  default_language: z.string()
    .refine(isLanguage, { message: 'must be a Wikipedia language code such as "no", "nn" or "en"' })
    .default("no")
    .describe('Language edition used when a call names none ("no" is Norwegian Bokmål)'),
  maxlag: z.number().int().min(0).max(60).default(5).describe(
    "Seconds of database lag at which Wikipedia may ask us to back off (maxlag); 0 = not sent",
  ),
  file_max_results: z.number().int().min(10).max(10_000).default(1000).describe(
    'Most search results one output: "file" call writes (it reads page after page up to this)',
  ),
  deadline_margin_ms: z.number().int().min(0).max(30_000).default(1500).describe(
    "Time kept before the call's deadline: a file of search results starts no further page with under twice this left, and says it is partial",
  ),
  user_agent: z.string().max(300).default("").describe(
    "User-Agent sent to Wikipedia (Wikimedia asks for a name and contact); empty = the server's own",
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<WikipediaSettings, CommonSettings & z.output<z.ZodObject<ReturnType<typeof extra>>>> =
  true;

/** The Wikipedia provider's spec: `{lang}` in `base_url` is filled in per call. */
export const wikipediaSpec = defineProvider({
  id: "wikipedia",
  title: "Wikipedia",
  description:
    "Wikipedia in any language (Norwegian by default): search, summaries, whole articles in parts, articles near a point",
  // "Retries with exponential backoff (3 attempts)" (docs/apis/wikipedia.md): 2 retries after the
  // first.
  common: {
    base_url: DEFAULT_BASE_URL,
    cache_ttl: 900,
    max_retries: 2,
    // One article's full text (the longest are a few MB), or a page of search hits.
    max_body_mb: 8,
  },
  extra,
  replaces: ["base_url"],
  env: [
    {
      name: "WIKIPEDIA_DEFAULT_LANGUAGE",
      key: "default_language",
      kind: "string",
      description: "Wikipedia language used when a call names none (default no)",
    },
    {
      name: "WIKIPEDIA_USER_AGENT",
      key: "user_agent",
      kind: "string",
      description: "User-Agent sent to Wikipedia, with your contact (default: the server's own)",
    },
  ],
  flags: [
    {
      name: "wikipedia-default-language",
      key: "default_language",
      kind: "string",
      description: "Wikipedia language used when a call names none",
    },
  ],
  // A template serves many hosts; the start-up check needs concrete names, so it checks the
  // default language's host (other languages live under the same wildcard entry).
  hosts: (s) => [isTemplate(s.base_url) ? hostFor(s.base_url, s.default_language) : hostOf(s.base_url)],
  allowNet: ["*.wikipedia.org"],
  load: () => import("./mod.ts"),
});

export { baseUrlProblem, DEFAULT_BASE_URL } from "./language.ts";

export type { WikipediaSettings } from "./settings.ts";
