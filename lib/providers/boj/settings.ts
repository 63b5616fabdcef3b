// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The keys of the `providers.boj` block beyond the common ones. */
export const BOJ_EXTRA = () => ({
  file_max_requests: z.number().int().min(1).max(1000).default(20).describe(
    'Most BOJ requests one output: "file" call makes, following NEXTPOSITION (each up to 250 series ' +
      "and 60,000 points), within the call's deadline",
  ),
});

/** The validated `providers.boj` block. */
export type BojSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof BOJ_EXTRA>>>;
