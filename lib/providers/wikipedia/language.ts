// Language codes and the {lang} base URL template. The language code becomes part of a host name,
// so it is checked before any URL is built: a code that passed here can only ever name one DNS
// label below the configured domain.

/**
 * Wikipedia language codes: lowercase letters, then up to three hyphenated parts of letters or
 * digits ("no", "nn", "se", "simple", "zh-min-nan", "be-tarask", "be-x-old"). No dots, colons,
 * slashes, `@`, ports or percent signs can pass, so a code cannot pick another host.
 */
export const LANGUAGE_PATTERN = /^[a-z]{2,8}(?:-[a-z0-9]{1,12}){0,3}$/;

/** Longest code accepted (the longest real ones, such as "zh-classical", are far shorter). */
export const LANGUAGE_MAX_LENGTH = 32;

// Wikimedia hosts below wikipedia.org that are not language editions.
const NOT_LANGUAGES = new Set([
  "www",
  "meta",
  "test",
  "test2",
  "api",
  "donate",
  "upload",
  "commons",
  "species",
  "incubator",
  "beta",
]);

/** Why `code` is not a usable language code, or null when it is. */
export function languageProblem(code: string): string | null {
  if (code.length > LANGUAGE_MAX_LENGTH || !LANGUAGE_PATTERN.test(code)) {
    return `Invalid language code ${
      JSON.stringify(code.slice(0, 40))
    }: use a Wikipedia language code such as "no", "nn", "en", "se" or "zh-min-nan" (lowercase letters, digits and hyphens only)`;
  }
  if (NOT_LANGUAGES.has(code)) {
    return `"${code}" is a Wikimedia site, not a Wikipedia language edition: use a language code such as "no" or "en"`;
  }
  return null;
}

/** Whether `code` is a usable language code. */
export function isLanguage(code: string): boolean {
  return languageProblem(code) === null;
}

/**
 * The origin (no trailing slash) serving `language`: the `{lang}` template filled in, or the
 * configured URL itself when it has no `{lang}` (every language then goes to that one origin).
 * Throws a TypeError for a code that did not pass {@linkcode languageProblem}.
 */
export function originFor(baseUrl: string, language: string): string {
  const problem = languageProblem(language);
  if (problem) throw new TypeError(problem);
  const filled = baseUrl.replaceAll("{lang}", language);
  return filled.replace(/\/+$/, "");
}

/** Whether the configured base URL is a per-language template. */
export function isTemplate(baseUrl: string): boolean {
  return baseUrl.includes("{lang}");
}

/** `host[:port]` that `language` is served from under `baseUrl`. */
export function hostFor(baseUrl: string, language: string): string {
  return new URL(originFor(baseUrl, language)).host;
}

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

/** English names of languages, made on first use: building it costs about 20 ms, which no start should pay. */
let languageNames: Intl.DisplayNames | undefined;

/**
 * The edition's name in plain words, "Norwegian Wikipedia (no)": "Wikipedia (no)" read as a
 * negation. A code without an English name keeps the code alone, quoted.
 */
export function editionName(language: string): string {
  let name: string | undefined;
  try {
    languageNames ??= new Intl.DisplayNames(["en"], { type: "language", fallback: "none" });
    name = languageNames.of(language);
  } catch {
    name = undefined;
  }
  return name ? `${name} Wikipedia (${language})` : `Wikipedia edition "${language}"`;
}
