// The API key's format check, apart from the client so the spec runs it at start-up without
// loading the provider's code.

/** Where users get a key. */
export const KEY_URL = "https://fredaccount.stlouisfed.org/apikeys";

/** The key FRED's documentation prints in its examples; it works nowhere else. */
export const DEMO_KEY = "abcdefghijklmnopqrstuvwxyz123456";

/**
 * What is wrong with a configured key, as a warning for the start-up log, or undefined when it
 * looks right or is not set (the provider says what a missing key leaves out). The key itself
 * is never part of the text.
 */
export function checkKeyFormat(key: string): string | undefined {
  if (key === "") return undefined;
  if (key === DEMO_KEY) {
    return "FRED_API_KEY is the example key from FRED's documentation, which FRED does not accept; set your own key";
  }
  if (!/^[a-z0-9]{32}$/.test(key)) {
    return `FRED_API_KEY does not look like a FRED API key (FRED documents 32 lower-case letters and digits; this one has ${key.length} characters${
      /[A-Z]/.test(key) ? " and upper-case letters" : ""
    }); calls may fail with INVALID_API_KEY`;
  }
  return undefined;
}
