import { defineProvider, hostOf } from "../../config/provider_spec.ts";
import { DEFAULT_BASE_URL, isDefaultBase, SITE_IDS, SITES } from "./sites.ts";
import { EXTRA } from "./settings.ts";

/**
 * The SNL provider's spec. With the default base URL each sister site is reached on its own
 * host (snl.no, nbl.snl.no, ...); any other base URL sends every site to that one origin.
 */
export const snlSpec = defineProvider({
  id: "snl",
  title: "Store norske leksikon",
  description:
    "Store norske leksikon and its sister encyclopedias (NBL, SML, NKL, Lille): search and full articles with licence",
  // Seed 002: "retries with exponential backoff (3 attempts)", that is 2 retries after the first.
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
