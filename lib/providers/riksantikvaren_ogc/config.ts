import { z } from "zod";
import { defineProvider } from "../../config/provider_spec.ts";
import type { CommonSettings } from "../../config/provider_spec.ts";

const EXTRA = {
  max_limit: z.number().int().min(1).max(1000).default(100).describe(
    "Largest page size a tool asks api.ra.no for (the API is reported to break on large pages)",
  ),
  max_bbox_km: z.number().positive().max(20_000).default(200).describe(
    "Longest side of a bbox a caller may ask for, in kilometres",
  ),
  max_radius_m: z.number().int().min(10).max(100_000).default(20_000).describe(
    "Largest radius_m of riksantikvaren-nearby, in metres",
  ),
  nearby_max_scan: z.number().int().min(10).max(5000).default(500).describe(
    "Most features riksantikvaren-nearby reads from the search box before ranking by distance",
  ),
};

/**
 * Riksantikvaren's OGC API Features (api.ra.no). The host serves several APIs ("datasets"),
 * each with its own collections; there is no root `/collections`. Seed 002 sets a 60 s timeout
 * ("geo queries can be slow") and `GEO_API_TIMEOUT` replaces it.
 */
export const riksantikvarenOgcSpec = defineProvider({
  id: "riksantikvaren_ogc",
  title: "Riksantikvaren OGC API Features",
  description:
    "Norwegian cultural heritage (protected sites, monuments, user-contributed memories) from api.ra.no",
  common: {
    base_url: "https://api.ra.no",
    timeout: 60,
    cache_ttl: 900,
    max_retries: 2,
    // A page of up to 1,000 features with polygon geometry.
    max_body_mb: 16,
  },
  extra: EXTRA,
  defaultTimeoutEnv: "GEO_API_TIMEOUT",
  load: () => import("./mod.ts"),
});

/** The validated settings of this provider. */
export type RiksantikvarenOgcSettings = CommonSettings & z.output<z.ZodObject<typeof EXTRA>>;
