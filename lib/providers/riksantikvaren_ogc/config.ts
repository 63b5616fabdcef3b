import { defineProvider } from "../../config/provider_spec.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { RiksantikvarenOgcSettings, Same } from "./settings.ts";

/** The keys of the `providers.riksantikvaren_ogc` block beyond the common ones. */
const EXTRA = () => ({
  max_limit: z.number().int().min(1).max(1000).default(100).describe(
    "Largest limit a caller may give riksantikvaren-features (features listed per page)",
  ),
  scan_page_size: z.number().int().min(10).max(1000).default(1000).describe(
    "Page size of the scans that filter pages themselves (bbox listings, riksantikvaren-nearby); api.ra.no serves 1000",
  ),
  max_bbox_km: z.number().positive().max(20_000).default(200).describe(
    "Longest side of a bbox a caller may ask for, in kilometres",
  ),
  max_radius_m: z.number().int().min(10).max(100_000).default(20_000).describe(
    "Largest radius_m of riksantikvaren-nearby, in metres",
  ),
  max_scan: z.number().int().min(10).max(100_000).default(10_000).describe(
    "Most records one scanning call (riksantikvaren-features with bbox, riksantikvaren-nearby) reads before it answers with a cursor to read on",
  ),
  file_max_features: z.number().int().min(10).max(100_000).default(5000).describe(
    'Most features one output: "file" call of riksantikvaren-features or riksantikvaren-nearby writes',
  ),
  deadline_margin_ms: z.number().int().min(0).max(30_000).default(1500).describe(
    "Time kept before the call's deadline: a scan starts no further page with under twice this left, and answers with a cursor",
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<
  RiksantikvarenOgcSettings,
  CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>
> = true;

/**
 * Riksantikvaren's OGC API Features (api.ra.no). The host serves several APIs ("datasets"), each
 * with its own collections; there is no root `/collections`. The provider's design set a 60 s
 * timeout ("geo queries can be slow", docs/apis/riksantikvaren_ogc.md); `timeout` bounds one
 * upstream request, and 60 s is what common MCP clients wait for a whole call, so the default is 20
 * s: a tool call answers by the server's per-call deadline (45 s) and a scan that needs more pages
 * continues with a cursor. `GEO_API_TIMEOUT` replaces the default.
 */
export const riksantikvarenOgcSpec = defineProvider({
  id: "riksantikvaren_ogc",
  title: "Riksantikvaren OGC API Features",
  description:
    "Norwegian cultural heritage (protected sites, monuments, user-contributed memories) from api.ra.no",
  common: {
    base_url: "https://api.ra.no",
    timeout: 20,
    cache_ttl: 900,
    max_retries: 2,
    // A page of up to 1,000 features with polygon geometry.
    max_body_mb: 16,
  },
  extra: EXTRA,
  defaultTimeoutEnv: "GEO_API_TIMEOUT",
  load: () => import("./mod.ts"),
});

export type { RiksantikvarenOgcSettings } from "./settings.ts";
