// The one place a licence or credit line is written for an answer: said once and compact,
// since every line an agent reads costs it tokens.
// opendata_search prints one per source that has hits; provenance lines of data answers build on it.

/** Most characters of a credit line. */
export const CREDIT_MAX = 200;

/** `licence` as one compact line: whitespace collapsed, at most {@linkcode CREDIT_MAX} characters. */
export function creditLine(licence: string): string {
  const line = licence.replace(/\s+/g, " ").trim();
  return line.length <= CREDIT_MAX ? line : `${line.slice(0, CREDIT_MAX - 1).trimEnd()}…`;
}
