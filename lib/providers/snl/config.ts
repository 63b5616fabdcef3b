import { defineProvider, hostOf } from "../../config/provider_spec.ts";
import { DEFAULT_BASE_URL, isDefaultBase, SITE_IDS, SITES } from "./sites.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { Same, SnlSettings } from "./settings.ts";

/** The keys of the `providers.snl` block beyond the common ones. */
const EXTRA = () => ({
  file_max_results: z.number().int().min(10).max(1000).default(100).describe(
    'Most search results one output: "file" call of snl-search writes (10 per request, page after page)',
  ),
  deadline_margin_ms: z.number().int().min(0).max(30_000).default(1500).describe(
    "Time kept before the call's deadline: a file of search results starts no further page with under twice this left, and says it is partial",
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<SnlSettings, CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>> = true;

/**
 * The SNL provider's spec. With the default base URL each sister site is reached on its own
 * host (snl.no, nbl.snl.no, ...); any other base URL sends every site to that one origin.
 */
export const snlSpec = defineProvider({
  id: "snl",
  title: "Store norske leksikon",
  description:
    "Store norske leksikon and its sister encyclopedias (NBL, SML, NKL, Lille): search and full articles with licence",
  // "Retries with exponential backoff (3 attempts)" (docs/apis/snl.md): 2 retries after the first.
  common: {
    base_url: DEFAULT_BASE_URL,
    cache_ttl: 900,
    max_retries: 2,
    // One article's JSON, or ten search hits.
    max_body_mb: 4,
  },
  extra: EXTRA,
  hosts: (s) => isDefaultBase(s.base_url) ? SITE_IDS.map((id) => SITES[id].host) : [hostOf(s.base_url)],
  allowNet: SITE_IDS.map((id) => SITES[id].host),
  load: () => import("./mod.ts"),
});

export type { SnlSettings } from "./settings.ts";
