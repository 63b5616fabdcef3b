// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import { isLanguage } from "./language.ts";

/** The default base URL: `{lang}` is replaced by the validated language code. */
export const DEFAULT_BASE_URL = "https://{lang}.wikipedia.org";

/** Why `value` is not a usable base URL (template or plain), or null. */
export function baseUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.replaceAll("{lang}", "xx"));
  } catch {
    return "must be an http(s) URL, optionally with {lang} where the language code goes";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use http or https";
  if (url.username || url.password || url.search || url.hash) {
    return "must not carry credentials, a query or a fragment";
  }
  if (/[{}]/.test(value.replaceAll("{lang}", ""))) return "may contain no placeholder other than {lang}";
  return null;
}

// Provider-specific keys. `base_url` is redeclared (it replaces the common key) so a template
// is checked as a template: the common check alone would accept any braces.
export const extra = () => ({
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

/** The validated `providers.wikipedia` block. */
export type WikipediaSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof extra>>>;
