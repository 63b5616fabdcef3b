// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The keys of the `providers.snl` block beyond the common ones. */
export const EXTRA = () => ({
  file_max_results: z.number().int().min(10).max(1000).default(100).describe(
    'Most search results one output: "file" call of snl-search writes (10 per request, page after page)',
  ),
  deadline_margin_ms: z.number().int().min(0).max(30_000).default(1500).describe(
    "Time kept before the call's deadline: a file of search results starts no further page with under twice this left, and says it is partial",
  ),
});

/** The validated `providers.snl` block. */
export type SnlSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>;
