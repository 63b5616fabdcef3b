import { defineProvider } from "../../config/provider_spec.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { GeonorgeSettings, Same } from "./settings.ts";

/** The keys of the `providers.geonorge` block beyond the common ones. */
const EXTRA = () => ({
  organization: z.string().min(1).max(200).default("Riksantikvaren").describe(
    "Organization whose datasets geonorge-datasets lists by default",
  ),
  file_max_entries: z.number().int().min(10).max(10_000).default(1000).describe(
    'Most catalogue entries one output: "file" call of geonorge-datasets writes (read in one request)',
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<GeonorgeSettings, CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>> =
  true;

/**
 * GeoNorge's map catalogue (kartkatalog.geonorge.no), for discovering Riksantikvaren's datasets
 * and their WMS/WFS/download distributions. Served by default like every real
 * provider; the response parsing is defensive because the API was not checked live (see
 * docs/apis/geonorge.md). A call may make two requests (the organization fallback), so one
 * request's `timeout` is 20 s, well inside the server's per-call deadline (45 s).
 */
export const geonorgeSpec = defineProvider({
  id: "geonorge",
  title: "GeoNorge kartkatalog",
  description: "Dataset discovery in GeoNorge's map catalogue (Riksantikvaren's datasets by default)",
  common: {
    base_url: "https://kartkatalog.geonorge.no",
    timeout: 20,
    cache_ttl: 3600,
    max_retries: 2,
    // One page of catalogue search hits.
    max_body_mb: 4,
  },
  extra: EXTRA,
  load: () => import("./mod.ts"),
});

export type { GeonorgeSettings } from "./settings.ts";
