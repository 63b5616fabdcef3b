import type { PartialFileOut } from "../../output/result_files.ts";
import { z } from "zod";
import { openList, openObject, resultObject } from "../../output/schema.ts";

/**
 * Facets the tools let a model explore, by the name the tools take (the upstream field is the
 * name plus `_exact`, e.g. `count_exact`; callers may send either), with a human name for each.
 */
export const FACETS = {
  count: "Country",
  lang: "Language",
  docty: "Document type",
  majdocty: "Major document type",
  admreg: "Region",
  majtheme: "Major theme",
  theme: "Theme",
  topic: "Topic",
  subtopic: "Subtopic",
  sectr: "Sector",
  disclstat: "Disclosure status",
  colti: "Collection or series",
  teratopic: "Topic (legacy)",
} as const;

/** A facet name as the tools take it. */
export type FacetField = keyof typeof FACETS;

/** The upstream field of a facet (`fct`, and the key of its values in the reply). */
export function upstreamFacet(field: FacetField): string {
  return `${field}_exact`;
}

/** Facets whose values are search filters, and the argument that takes them. */
export const FACET_ARGUMENT: Partial<Record<FacetField, string>> = {
  count: "countries",
  docty: "document_types",
  lang: "languages",
};

/** Fields a search can be sorted by (`srt`), plus the upstream's relevance ranking. */
export const SORT_FIELDS = ["relevance", "docdt", "docty", "docna", "repnb"] as const;

// Output schemas are served with every tools/list, so they are compact: the top level of each
// result is typed (clients validate structuredContent against it), records inside it are typed
// as objects only, and nothing carries a description or an integer bound. The TypeScript types
// below hold the records' fields.
const str = z.string();
const num = z.number();
const nstr = z.string().nullable();
const bool = z.boolean();
const obj = openObject();
const objs = openList();

/** Where a result came from and under what terms. */
export interface Source {
  name: string;
  /** The upstream request that produced the result. */
  url: string;
  site: string;
  terms_url: string;
  attribution: string;
}

/** A file written by `output: "file"`. */
export type FileInfo = PartialFileOut;

/** What search and project results show of one document. */
export interface DocumentSummary {
  id: string;
  title: string;
  document_date: string | null;
  document_type: string | null;
  major_document_type: string | null;
  countries: string[];
  languages: string[];
  report_number: string | null;
  project_id: string | null;
  /** Shortened to `abstract_chars`; the details give it whole. */
  abstract: string | null;
  url: string | null;
  pdf_url: string | null;
}

/** Everything the details tool shows of one document. */
export interface DocumentDetails extends DocumentSummary {
  guid: string | null;
  text_url: string | null;
  authors: string[];
  keywords: string[];
  volume_number: string | null;
  collection: string | null;
  project_name: string | null;
  region: string | null;
  disclosure_date: string | null;
}

/** The filters a search applied (`date_to` is today when only `date_from` was given). */
export interface SearchFiltersOut {
  countries: string[];
  document_types: string[];
  languages: string[];
  date_from: string | null;
  date_to: string | null;
  sort_by: string;
  sort_order: "asc" | "desc";
}

/** One facet's values. */
export interface FacetOut {
  field: string;
  name: string;
  /** The search argument its values go in, or null. */
  filter_argument: string | null;
  values: { value: string; count: number }[];
  /** Values the upstream returned for the facet. */
  available: number;
  /** Values after those shown. */
  remaining: number;
}

const pageFields = { total: num, count: num, offset: num, has_more: bool, next_offset: num.nullable() };
const cutFields = { truncated: bool, notice: nstr };

/** `worldbank_search_documents` output; `documents` is absent when they went to a file. */
export const searchOutputSchema = resultObject({
  ...pageFields,
  query: str,
  filters: obj,
  documents: objs.optional(),
  file: obj.optional(),
  ...cutFields,
  source: obj,
});

/** `worldbank_search_by_project` output; `documents` is absent when they went to a file. */
export const projectOutputSchema = resultObject({
  ...pageFields,
  project_id: str,
  documents: objs.optional(),
  file: obj.optional(),
  ...cutFields,
  source: obj,
});

/** `worldbank_get_document_details` output. */
export const detailsOutputSchema = resultObject({
  document: obj,
  authors_total: num,
  keywords_total: num,
  abstract_total: num,
  offset: num,
  has_more: bool,
  next_offset: num.nullable(),
  ...cutFields,
  source: obj,
});

/** `worldbank_explore_facets` output; with a file, `facets` list no values. */
export const facetsOutputSchema = resultObject({
  total: num,
  query: nstr,
  facets: objs,
  offset: num,
  has_more: bool,
  next_offset: num.nullable(),
  file: obj.optional(),
  ...cutFields,
  source: obj,
});

interface Page {
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
}

interface Cut {
  truncated: boolean;
  notice: string | null;
}

/** structuredContent of `worldbank_search_documents`. */
export interface SearchOutput extends Page, Cut {
  query: string;
  filters: SearchFiltersOut;
  documents?: DocumentSummary[];
  file?: FileInfo;
  source: Source;
}

/** structuredContent of `worldbank_search_by_project`. */
export interface ProjectOutput extends Page, Cut {
  project_id: string;
  documents?: DocumentSummary[];
  file?: FileInfo;
  source: Source;
}

/** structuredContent of `worldbank_get_document_details`. */
export interface DetailsOutput extends Cut {
  document: DocumentDetails;
  authors_total: number;
  keywords_total: number;
  abstract_total: number;
  /** Where `document.abstract` starts in the whole abstract. */
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  source: Source;
}

/** structuredContent of `worldbank_explore_facets`. */
export interface FacetsOutput extends Cut {
  total: number;
  query: string | null;
  facets: FacetOut[];
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  file?: FileInfo;
  source: Source;
}
