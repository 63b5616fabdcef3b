// Where the World Bank's documents API answers and the terms that govern its documents: the
// spec's defaults (loaded at start with it), and the client names the first in its hints.

/** Where the World Bank Documents & Reports search API (WDS) answers. */
export const WDS_BASE_URL = "https://search.worldbank.org/api/v3/wds";

/** The World Bank's terms and conditions, which govern use of its documents. */
export const WORLDBANK_TERMS_URL = "https://www.worldbank.org/en/about/legal/terms-and-conditions";
