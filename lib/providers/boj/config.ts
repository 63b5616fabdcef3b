import { defineProvider } from "../../config/provider_spec.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { BojSettings, Same } from "./settings.ts";

/** The keys of the `providers.boj` block beyond the common ones. */
const BOJ_EXTRA = () => ({
  file_max_requests: z.number().int().min(1).max(1000).default(20).describe(
    'Most BOJ requests one output: "file" call makes, following NEXTPOSITION (each up to 250 series ' +
      "and 60,000 points), within the call's deadline",
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<BojSettings, CommonSettings & z.output<z.ZodObject<ReturnType<typeof BOJ_EXTRA>>>> =
  true;

/**
 * The Bank of Japan provider's spec: the Time-Series Data Search API at stat-search.boj.or.jp.
 * Defaults and variable names are the provider's design contract (docs/apis/boj.md): `BOJ_BASE_URL`,
 * `BOJ_TIMEOUT_MS` (10,000 ms), `BOJ_RETRY_MAX` (2) and `BOJ_RETRY_BACKOFF_MS` (200 ms).
 */
export const bojSpec = defineProvider({
  id: "boj",
  title: "Bank of Japan",
  description:
    "Bank of Japan Time-Series Data Search: databases, series metadata and observations (boj_* tools)",
  common: {
    base_url: "https://www.stat-search.boj.or.jp",
    timeout: 10,
    max_retries: 2,
    retry_backoff_ms: 200,
    cache_ttl: 300,
    // 60,000 data points a request (a few MB); getMetadata of the largest databases is bigger.
    max_body_mb: 16,
  },
  extra: BOJ_EXTRA,
  env: [
    { name: "BOJ_BASE_URL", key: "base_url", kind: "string", description: "BOJ API base URL" },
    {
      name: "BOJ_TIMEOUT_MS",
      key: "timeout",
      kind: "ms_to_s",
      description: "Deadline of one BOJ call in milliseconds, retries included (default 10000)",
    },
    {
      name: "BOJ_RETRY_MAX",
      key: "max_retries",
      kind: "int",
      description: "Retries after a transport error or BOJ status 500/503 (default 2)",
    },
    {
      name: "BOJ_RETRY_BACKOFF_MS",
      key: "retry_backoff_ms",
      kind: "int",
      description: "First retry backoff in milliseconds, doubled each retry (default 200)",
    },
  ],
  flags: [
    { name: "boj-base-url", key: "base_url", kind: "string", description: "BOJ API base URL" },
    {
      name: "boj-timeout-ms",
      key: "timeout",
      kind: "ms_to_s",
      description: "Deadline of one BOJ call in milliseconds (default 10000)",
    },
    {
      name: "boj-retry-max",
      key: "max_retries",
      kind: "int",
      description: "Retries after a transport error or BOJ status 500/503 (default 2)",
    },
    {
      name: "boj-retry-backoff-ms",
      key: "retry_backoff_ms",
      kind: "int",
      description: "First retry backoff in milliseconds, doubled each retry (default 200)",
    },
  ],
  load: () => import("./mod.ts"),
});

export type { BojSettings } from "./settings.ts";
