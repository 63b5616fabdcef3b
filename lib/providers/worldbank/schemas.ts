import { z } from "zod";
import { pageSchema } from "../../mcp/output.ts";

/** Facet fields the tools let a model explore, with a human name for each. */
export const FACETS = {
  count_exact: "Country",
  lang_exact: "Language",
  docty_exact: "Document type",
  majdocty_exact: "Major document type",
  admreg_exact: "Region",
  majtheme_exact: "Major theme",
  theme_exact: "Theme",
  topic_exact: "Topic",
  subtopic_exact: "Subtopic",
  sectr_exact: "Sector",
  disclstat_exact: "Disclosure status",
  colti_exact: "Collection or series",
  teratopic_exact: "Topic (legacy)",
} as const;

/** A facet field name. */
export type FacetField = keyof typeof FACETS;

/** Facets whose values are search filters, and the argument that takes them. */
export const FACET_ARGUMENT: Partial<Record<FacetField, string>> = {
  count_exact: "countries",
  docty_exact: "document_types",
  lang_exact: "languages",
};

/** Fields a search can be sorted by (`srt`), plus the upstream's relevance ranking. */
export const SORT_FIELDS = ["relevance", "docdt", "docty", "docna", "repnb"] as const;

/** Where a result came from and under what terms. */
export const sourceSchema = z.object({
  name: z.string().describe("The publisher and collection"),
  url: z.string().describe("The upstream request that produced this result"),
  site: z.string().describe("The human-facing site of the collection"),
  terms_url: z.string().describe("Terms that govern use of the documents"),
  attribution: z.string().describe("How to credit the source"),
});

/** What search and project results show of one document. */
export const documentSummarySchema = z.object({
  id: z.string().describe("Document id; pass it to worldbank_get_document_details"),
  title: z.string().describe("Display title (falls back to the volume or report name)"),
  document_date: z.string().nullable().describe("Document date, YYYY-MM-DD"),
  document_type: z.string().nullable().describe('Document type, e.g. "Policy Research Working Paper"'),
  major_document_type: z.string().nullable().describe('Major document type, e.g. "Publications & Research"'),
  countries: z.array(z.string()).describe('Countries as the upstream names them ("World" for global work)'),
  languages: z.array(z.string()).describe("Languages of the document"),
  report_number: z.string().nullable().describe("Report number, e.g. WPS6630"),
  project_id: z.string().nullable().describe("Associated World Bank project id, e.g. P123365"),
  abstract: z.string().nullable().describe(
    "Abstract, shortened to the configured length; details give it whole",
  ),
  url: z.string().nullable().describe("The document's page on documents.worldbank.org"),
  pdf_url: z.string().nullable().describe("Direct link to the PDF"),
});

/** Everything the details tool shows of one document. */
export const documentDetailsSchema = documentSummarySchema.extend({
  guid: z.string().nullable().describe("The number in the document's documents.worldbank.org address"),
  abstract: z.string().nullable().describe(
    "The abstract from offset on: whole unless it is too long for the response limit (then see next_offset)",
  ),
  text_url: z.string().nullable().describe("Link to the plain-text version"),
  authors: z.array(z.string()).describe("Authors, as Surname, Given names"),
  keywords: z.array(z.string()).describe("Keywords"),
  volume_number: z.string().nullable().describe("Volume number"),
  collection: z.string().nullable().describe("Collection or series title"),
  project_name: z.string().nullable().describe("Associated project name"),
  region: z.string().nullable().describe("World Bank administrative region"),
  disclosure_date: z.string().nullable().describe("Disclosure date, YYYY-MM-DD"),
});

const truncationFields = {
  truncated: z.boolean().describe("Whether documents were left out to stay within the response limit"),
  notice: z.string().nullable().describe("How to get the rest when truncated, else null"),
};

/** `worldbank_search_documents` output. */
export const searchOutputSchema = pageSchema.extend({
  query: z.string().describe("The search terms"),
  filters: z.object({
    countries: z.array(z.string()).describe("Country filter"),
    document_types: z.array(z.string()).describe("Document type filter"),
    languages: z.array(z.string()).describe("Language filter"),
    date_from: z.string().nullable().describe("Start date sent (YYYY-MM-DD)"),
    date_to: z.string().nullable().describe("End date sent (YYYY-MM-DD; today when only a start was given)"),
    sort_by: z.string().describe("Sort field, or relevance"),
    sort_order: z.enum(["asc", "desc"]).describe("Sort order (ignored for relevance)"),
  }).describe("The filters applied"),
  documents: z.array(documentSummarySchema).describe("Matching documents on this page, best first"),
  ...truncationFields,
  source: sourceSchema,
});

/** `worldbank_search_by_project` output. */
export const projectOutputSchema = pageSchema.extend({
  project_id: z.string().describe("The project searched"),
  documents: z.array(documentSummarySchema).describe("The project's documents on this page, newest first"),
  ...truncationFields,
  source: sourceSchema,
});

/** `worldbank_get_document_details` output. */
export const detailsOutputSchema = z.object({
  document: documentDetailsSchema,
  authors_total: z.number().int().describe("Authors the record names (document.authors may show fewer)"),
  keywords_total: z.number().int().describe("Keywords the record has (document.keywords may show fewer)"),
  abstract_total: z.number().int().describe("Characters in the whole abstract"),
  offset: z.number().int().describe("Character offset in the abstract where document.abstract starts"),
  has_more: z.boolean().describe("Whether more of the abstract follows"),
  next_offset: z.number().int().nullable().describe("Offset to ask for the rest of the abstract, or null"),
  truncated: z.boolean().describe("Whether the abstract or a list was shortened to fit the response limit"),
  notice: z.string().nullable().describe("What was shortened and how to read the rest, else null"),
  source: sourceSchema,
});

/** `worldbank_explore_facets` output. */
export const facetsOutputSchema = z.object({
  total: z.number().int().describe("Documents the facet counts cover"),
  query: z.string().nullable().describe("The search terms the counts are scoped to, or null for all"),
  facets: z.array(z.object({
    field: z.string().describe("Facet field, e.g. lang_exact"),
    name: z.string().describe("Human name of the facet"),
    filter_argument: z.string().nullable().describe(
      "The worldbank_search_documents argument its values go in, or null",
    ),
    values: z.array(z.object({
      value: z.string().describe("Exact value, usable as a filter"),
      count: z.number().int().describe("Matching documents with this value"),
    })).describe("Values, most frequent first as the upstream ranks them"),
    available: z.number().int().describe("Values the upstream returned for this facet"),
    remaining: z.number().int().describe("Values after those shown: call again with next_offset to see them"),
  })).describe("One entry per requested facet"),
  offset: z.number().int().describe("Values skipped in each facet"),
  has_more: z.boolean().describe("Whether any facet has more values after those shown"),
  next_offset: z.number().int().nullable().describe(
    "Offset to ask for the next values of every facet, or null",
  ),
  truncated: z.boolean().describe(
    "Whether fewer values than asked for were shown to stay within the response limit",
  ),
  notice: z.string().nullable().describe("How to get the rest when truncated, else null"),
  source: sourceSchema,
});

/** Output types. */
export type DocumentSummary = z.output<typeof documentSummarySchema>;
export type DocumentDetails = z.output<typeof documentDetailsSchema>;
export type Source = z.output<typeof sourceSchema>;
export type SearchOutput = z.output<typeof searchOutputSchema>;
export type ProjectOutput = z.output<typeof projectOutputSchema>;
export type DetailsOutput = z.output<typeof detailsOutputSchema>;
export type FacetsOutput = z.output<typeof facetsOutputSchema>;
