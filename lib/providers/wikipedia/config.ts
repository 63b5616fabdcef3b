import { defineProvider, hostOf } from "../../config/provider_spec.ts";
import { hostFor, isTemplate } from "./language.ts";
import { DEFAULT_BASE_URL, extra } from "./settings.ts";

/** The Wikipedia provider's spec: `{lang}` in `base_url` is filled in per call. */
export const wikipediaSpec = defineProvider({
  id: "wikipedia",
  title: "Wikipedia",
  description:
    "Wikipedia in any language (Norwegian by default): search, summaries, whole articles in parts, articles near a point",
  // Seed 002: "retries with exponential backoff (3 attempts)", that is 2 retries after the first.
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

export { baseUrlProblem, DEFAULT_BASE_URL } from "./settings.ts";
export type { WikipediaSettings } from "./settings.ts";
