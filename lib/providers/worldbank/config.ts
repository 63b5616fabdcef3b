import { defineProvider } from "../../config/provider_spec.ts";
import { WDS_BASE_URL, WORLDBANK_TERMS_URL } from "./urls.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { Same, WorldbankSettings } from "./settings.ts";

/** The keys of the `providers.worldbank` block beyond the common ones. */
const WORLDBANK_EXTRA = () => ({
  abstract_chars: z.number().int().min(100).max(5000).default(500).describe(
    "Most characters of an abstract shown in search and project results (details show it whole)",
  ),
  terms_url: z.string().url().default(WORLDBANK_TERMS_URL).describe(
    "Terms cited in every result's attribution",
  ),
  file_max_documents: z.number().int().min(1).max(100_000).default(1000).describe(
    'Most documents one output: "file" call writes (fetched 100 a request, within the call\'s deadline)',
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<
  WorldbankSettings,
  CommonSettings & z.output<z.ZodObject<ReturnType<typeof WORLDBANK_EXTRA>>>
> = true;

/**
 * The World Bank documents provider's spec. Its design fixes the endpoint and a 30 s request
 * timeout (docs/apis/worldbank.md) but names no environment variables, so the variables and flags
 * here follow the project's `<PROVIDER>_<KEY>` convention.
 */
export const worldbankSpec = defineProvider({
  id: "worldbank",
  title: "World Bank Documents & Reports",
  description:
    "Search World Bank documents and reports by topic, country, type, language, date and project (WDS API)",
  common: {
    base_url: WDS_BASE_URL,
    timeout: 30,
    max_retries: 2,
    retry_backoff_ms: 500,
    // Document records change rarely; a search repeated within the hour is answered locally.
    cache_ttl: 3600,
    // No published limit; stay polite to a free, keyless service.
    rate_limit_per_second: 5,
    // At most 100 records a page, a few KB each.
    max_body_mb: 8,
  },
  extra: WORLDBANK_EXTRA,
  env: [
    { name: "WORLDBANK_BASE_URL", key: "base_url", kind: "string", description: "WDS API base URL" },
    {
      name: "WORLDBANK_TIMEOUT",
      key: "timeout",
      kind: "number",
      description: "Deadline of one call in seconds, retries included",
    },
    {
      name: "WORLDBANK_CACHE_TTL",
      key: "cache_ttl",
      kind: "number",
      description: "Seconds a successful answer is reused (0 = off)",
    },
    {
      name: "WORLDBANK_MAX_RETRIES",
      key: "max_retries",
      kind: "int",
      description: "Retries after the first attempt",
    },
  ],
  flags: [
    { name: "worldbank-base-url", key: "base_url", kind: "string", description: "WDS API base URL" },
    {
      name: "worldbank-timeout",
      key: "timeout",
      kind: "number",
      description: "World Bank call deadline in seconds",
    },
  ],
  load: () => import("./mod.ts"),
});

export { WDS_BASE_URL, WORLDBANK_TERMS_URL } from "./urls.ts";

export type { WorldbankSettings } from "./settings.ts";
