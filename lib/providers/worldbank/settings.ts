// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";

/** Where the World Bank Documents & Reports search API (WDS) answers. */
export const WDS_BASE_URL = "https://search.worldbank.org/api/v3/wds";

/** The World Bank's terms and conditions, which govern use of its documents. */
export const WORLDBANK_TERMS_URL = "https://www.worldbank.org/en/about/legal/terms-and-conditions";

/** The keys of the `providers.worldbank` block beyond the common ones. */
export const WORLDBANK_EXTRA = () => ({
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

/** The validated `providers.worldbank` block. */
export type WorldbankSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof WORLDBANK_EXTRA>>>;
