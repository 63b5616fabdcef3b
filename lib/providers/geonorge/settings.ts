// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The keys of the `providers.geonorge` block beyond the common ones. */
export const EXTRA = () => ({
  organization: z.string().min(1).max(200).default("Riksantikvaren").describe(
    "Organization whose datasets geonorge-datasets lists by default",
  ),
  file_max_entries: z.number().int().min(10).max(10_000).default(1000).describe(
    'Most catalogue entries one output: "file" call of geonorge-datasets writes (read in one request)',
  ),
});

/** The validated settings of this provider. */
export type GeonorgeSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>;
