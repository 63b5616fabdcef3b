// What the snl-* tools share: annotations, toolset and site field, the licence terms of an article
// and the credit line every answer carries.
import { z } from "zod";
import { SITE_IDS } from "./sites.ts";

/** Every snl-* tool only reads, from the open web. */
export const ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/** Article characters shown in the answer when the whole article goes to a file. */
export const FILE_PREVIEW_CHARS = 2000;
/** The search API accepts `limit` 1–10. */
export const SEARCH_MAX_LIMIT = 10;
/** Most links listed from one article. */
export const MAX_LINKS = 50;
/** SNL's page on reusing "fri" articles. */
export const REUSE_TERMS_URL = "https://meta.snl.no/fri_gjenbruk";

/** What an article's `license_name` allows. */
export interface Terms {
  name: string;
  url: string | null;
  reuse: string;
}

/** The terms behind SNL's `license_name` values ("fri", "begrenset"). */
export function licenseTerms(licenseName: string | null): Terms {
  if (licenseName === "fri") {
    return {
      name: "CC BY-SA 3.0",
      url: "https://creativecommons.org/licenses/by-sa/3.0/",
      reuse:
        `Free to reuse under CC BY-SA 3.0, crediting the author(s) and the encyclopedia (${REUSE_TERMS_URL})`,
    };
  }
  if (licenseName === "begrenset") {
    return {
      name: "Restricted (begrenset)",
      url: null,
      reuse: "Not free to reuse: reuse needs the publisher's permission; cite the article when you quote it",
    };
  }
  return {
    name: licenseName ?? "not stated",
    url: null,
    reuse: "The article states no known licence: check its page before reuse",
  };
}

/** The toolset of both SNL tools. */
export const TOOLSET = "snl";

/** The `site` input field: which of the encyclopedias. */
export const siteField = z.enum(SITE_IDS).describe(
  "snl (default), nbl (biographies), sml (medicine), nkl (artists) or lille (for young readers)",
);

/** Output-schema shape of `source` (results carry name, url, license, license_url, attribution). */
export const sourceSchema = z.looseObject({ license: z.string() });

/** Where an answer came from and how to credit it. */
export type Source = {
  name: string;
  /** Where the data came from: the article page, or the API request for lists. */
  url: string;
  license: string;
  license_url: string | null;
  /** Credit line to give when quoting. */
  attribution: string;
};

/** The source, licence and credit lines that end every markdown answer. */
export function creditLine(s: Source): string {
  return `Source: ${s.url}\nLicence: ${s.license}${
    s.license_url ? ` (${s.license_url})` : ""
  }. ${s.attribution}.`;
}

/** A count with thousands separators (1,234). */
export function n(value: number): string {
  return value.toLocaleString("en-US");
}
