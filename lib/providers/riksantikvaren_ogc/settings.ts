// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The keys of the `providers.riksantikvaren_ogc` block beyond the common ones. */
export const EXTRA = () => ({
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

/** The validated settings of this provider. */
export type RiksantikvarenOgcSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>;
