import { z } from "zod";
import { cite } from "../../output/provenance.ts";
import { cutPoint } from "./article_text.ts";

/** Wikipedia's text licence (since June 2023; older revisions were CC BY-SA 3.0). */
export const LICENSE = "CC BY-SA 4.0";

/** Where the licence is explained. */
export const LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/";

/** A result's `source`: provenance and terms, on every result. */
export type Source = {
  /** Who published the data. */
  name: string;
  /** Where the data came from: the article page, or the API request for lists. */
  url: string;
  license: string;
  license_url: string;
  /** Credit line to give when quoting. */
  attribution: string;
};

// Output schemas are compact, since every agent pays for them on every turn: no descriptions (the
// tool description, the input schema and the text say what fields mean), open objects where only a
// few fields are worth declaring.

/** Output-schema shape of `source`. */
export const sourceSchema = z.looseObject({ license: z.string() });

/** Output-schema shape of the paging envelope (results carry count and offset too). */
export const pageShape = { total: z.number(), has_more: z.boolean(), next_offset: z.number().nullable() };

/** The `source` of a result from the edition at `host`. */
export function source(host: string, url: string, historyUrl?: string): Source {
  return {
    name: `Wikipedia (${host})`,
    url,
    license: LICENSE,
    license_url: LICENSE_URL,
    attribution: `Text from Wikipedia (${host}) by its contributors, ${LICENSE}${
      historyUrl ? `; authors are listed at ${historyUrl}` : ""
    }`,
  };
}

/** The closing credit line of a markdown result. */
export function creditLine(s: Source): string {
  return `Source: ${s.url}\nLicence: ${s.license} (${s.license_url}). ${s.attribution}.`;
}

/** `1,234` */
export function n(value: number): string {
  return value.toLocaleString("en-US");
}

/** Most characters kept of a title from the API (MediaWiki titles have at most 255 bytes). */
export const TITLE_MAX = 300;
/** Most characters kept of a short upstream text: a snippet, a short description. */
export const SHORT_TEXT_MAX = 1000;

/** The larger of a result's text and its structured content, in characters. */
export function size(r: { text: string; structured: unknown }): number {
  return Math.max(r.text.length, JSON.stringify(r.structured).length);
}

/** Renders with all of `text`, or with less of it (cut at a boundary) until the result fits `limit`. */
export function fitPlainText<S>(
  text: string,
  limit: number,
  build: (text: string, truncated: boolean) => { text: string; structured: S },
): { text: string; structured: S } {
  let max = text.length;
  for (let i = 0; i < 12; i++) {
    const end = cutPoint(text, 0, text.length, max);
    const r = build(text.slice(0, end), end < text.length);
    const over = size(r) - limit;
    if (over <= 0 || end === 0) return r;
    max = Math.max(0, end - over - 64);
  }
  return build("", text.length > 0);
}

/**
 * The provenance of an article answer: the permalink of the revision shown (`?oldid=`, which
 * never changes) and its time, so a citation names exactly the text read.
 */
export function citeRevision(pageUrl: string, revisionId: number | null, touched: string | null): void {
  let permalink: string | undefined;
  if (revisionId !== null) {
    try {
      permalink = new URL(`/w/index.php?oldid=${revisionId}`, pageUrl).toString();
    } catch {
      permalink = undefined;
    }
  }
  cite({
    ...(permalink ? { permalink } : { permalink: pageUrl }),
    ...(revisionId !== null || touched
      ? {
        as_of: [revisionId !== null ? `revision ${revisionId}` : "", touched ? `page touched ${touched}` : ""]
          .filter(Boolean).join(", "),
      }
      : {}),
  });
}
