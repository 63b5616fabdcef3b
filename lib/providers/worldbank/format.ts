import { markdownTable, shorten } from "../../mcp/shaping.ts";
import type { ExportedFile } from "../../output/exports.ts";
import { csvFileLine } from "../../output/result_files.ts";
import { DOCUMENT_COLUMNS, FACET_COLUMNS } from "./files.ts";
import type { WdsDocument } from "./parse.ts";
import type {
  DetailsOutput,
  DocumentDetails,
  DocumentSummary,
  FacetsOutput,
  FileInfo,
  ProjectOutput,
  SearchOutput,
  Source,
} from "./schemas.ts";

/** The credit line every result carries. */
export const ATTRIBUTION =
  "Source: World Bank Documents & Reports (documents.worldbank.org), via the World Bank's document search API (WDS). " +
  "Use of the documents is subject to the World Bank's terms and conditions, and each document may " +
  "carry its own rights statement. Link to documents.worldbank.org rather than reproducing its pages.";

/** Builds the `source` block of a result. */
export function sourceOf(url: string, termsUrl: string): Source {
  return {
    name: "World Bank Documents & Reports",
    url,
    site: "https://documents.worldbank.org",
    terms_url: termsUrl,
    attribution: ATTRIBUTION,
  };
}

/** The summary of a document, its abstract shortened to `abstractChars`. */
export function summarize(doc: WdsDocument, abstractChars: number): DocumentSummary {
  return {
    id: doc.id,
    title: doc.title,
    document_date: doc.document_date,
    document_type: doc.document_type,
    major_document_type: doc.major_document_type,
    countries: doc.countries,
    languages: doc.languages,
    report_number: doc.report_number,
    project_id: doc.project_id,
    abstract: doc.abstract === null ? null : shorten(doc.abstract, abstractChars),
    url: doc.url,
    pdf_url: doc.pdf_url,
  };
}

/** Every field of a document, for the details tool. */
export function details(doc: WdsDocument): DocumentDetails {
  return {
    id: doc.id,
    guid: doc.guid,
    title: doc.title,
    document_date: doc.document_date,
    document_type: doc.document_type,
    major_document_type: doc.major_document_type,
    countries: doc.countries,
    languages: doc.languages,
    report_number: doc.report_number,
    project_id: doc.project_id,
    abstract: doc.abstract,
    url: doc.url,
    pdf_url: doc.pdf_url,
    text_url: doc.text_url,
    authors: doc.authors,
    keywords: doc.keywords,
    volume_number: doc.volume_number,
    collection: doc.collection,
    project_name: doc.project_name,
    region: doc.region,
    disclosure_date: doc.disclosure_date,
  };
}

/** Options for {@linkcode pageNotice}. */
export interface PageNoticeOptions {
  /** Items on the page the upstream sent. */
  received: number;
  shown: number;
  nextOffset: number | null;
  limit: number;
  /** The filters this tool offers, for the narrowing advice; null when it has none. */
  filters: string | null;
}

/**
 * The notice of a result cut to fit the character limit: what was shown and the three ways
 * to see more (offset, filters, smaller limit).
 */
export function pageNotice(options: PageNoticeOptions): string {
  const cap = options.limit.toLocaleString("en-US");
  const parts = [
    `Response truncated: showing ${options.shown} of the ${options.received} documents on this page to stay within the ${cap}-character limit.`,
    "To see more results:",
  ];
  if (options.nextOffset !== null) parts.push(`use offset=${options.nextOffset} to continue;`);
  if (options.filters) parts.push(`add more specific filters (${options.filters});`);
  parts.push('or reduce "limit".');
  return parts.join(" ");
}

/** Options for {@linkcode fileNotice}. */
export interface FileNoticeOptions {
  file: ExportedFile;
  written: number;
  offset: number;
  total: number;
  /** Why the file ends before the result does, or null. */
  stopped: string | null;
}

/** The notice of a documents file that does not hold the rest of the result, else null. */
export function fileNotice(o: FileNoticeOptions): string | null {
  const end = o.offset + o.written;
  if (end >= o.total) return null;
  const why = o.stopped ?? "the upstream sent no more";
  const held = o.written ? `documents ${o.offset + 1}–${end} of ${o.total}` : `no documents of ${o.total}`;
  return `The file holds ${held}: ${why}. Call again with offset=${end} (output "file" again for a ` +
    "further file) for the rest.";
}

function documentsFileLine(
  out: { file?: FileInfo | undefined; offset: number; count: number; total: number },
) {
  const range = out.count ? ` (${out.offset + 1}–${out.offset + out.count} of ${out.total} found)` : "";
  return csvFileLine(
    out.file!,
    `${out.count} document${out.count === 1 ? "" : "s"}${range}, abstracts whole,`,
    DOCUMENT_COLUMNS,
  );
}

function line(label: string, value: string | null | undefined): string | null {
  return value ? `**${label}:** ${value}` : null;
}

function list(values: readonly string[]): string | null {
  return values.length ? values.join("; ") : null;
}

function links(doc: { url: string | null; pdf_url: string | null; text_url?: string | null }): string | null {
  const parts = [
    doc.url ? `[Document page](${doc.url})` : null,
    doc.pdf_url ? `[PDF](${doc.pdf_url})` : null,
    doc.text_url ? `[Text](${doc.text_url})` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : null;
}

/** One document of a result list in markdown. */
export function documentMarkdown(doc: DocumentSummary, index: number): string {
  const lines = [
    `### ${index}. ${doc.title}`,
    line("Date", doc.document_date),
    line("Countries", list(doc.countries)),
    line("Type", doc.document_type),
    line("Languages", list(doc.languages)),
    line("Report", doc.report_number),
    line("Project", doc.project_id),
    `**ID:** ${doc.id}`,
    line("Links", links(doc)),
  ].filter((l): l is string => l !== null);
  // Two trailing spaces keep the fields on separate lines in rendered markdown.
  const head = lines.join("  \n");
  return doc.abstract ? `${head}\n\n${doc.abstract}` : head;
}

function footer(source: Source): string {
  return `---\n*${source.attribution} Terms: ${source.terms_url} · [search request](${source.url})*`;
}

function range(offset: number, count: number): string {
  return count === 0 ? "none" : `${offset + 1}–${offset + count}`;
}

function pagingLine(total: number, offset: number, count: number, nextOffset: number | null): string {
  const found = `Found ${total.toLocaleString("en-US")} document${total === 1 ? "" : "s"}`;
  const more = nextOffset === null ? "" : ` Next page: offset=${nextOffset}.`;
  return `${found}; showing ${range(offset, count)}.${more}`;
}

/** Markdown for `worldbank_search_documents`. */
export function searchMarkdown(out: SearchOutput): string {
  const f = out.filters;
  const filters = [
    f.countries.length ? `countries: ${f.countries.join(", ")}` : null,
    f.document_types.length ? `document types: ${f.document_types.join(", ")}` : null,
    f.languages.length ? `languages: ${f.languages.join(", ")}` : null,
    f.date_from || f.date_to ? `dates: ${f.date_from ?? "…"} to ${f.date_to ?? "…"}` : null,
    f.sort_by === "relevance" ? null : `sorted by ${f.sort_by} ${f.sort_order}`,
  ].filter(Boolean);
  const parts = [`# World Bank documents: "${out.query}"`];
  if (filters.length) parts.push(`Filters: ${filters.join("; ")}`);
  if (out.file) {
    parts.push(documentsFileLine(out));
  } else if (out.count === 0) {
    parts.push(emptyText(out.total, out.offset, [
      "use broader or fewer search terms",
      "drop or widen filters (country, type and language values must match exactly: " +
      "find them with worldbank_explore_facets)",
      "widen the date range",
    ]));
  } else {
    parts.push(pagingLine(out.total, out.offset, out.count, out.next_offset));
    (out.documents ?? []).forEach((d, i) => parts.push(documentMarkdown(d, out.offset + i + 1)));
  }
  if (out.notice) parts.push(`**${out.notice}**`);
  parts.push(footer(out.source));
  return parts.join("\n\n");
}

/** Markdown for `worldbank_search_by_project`. */
export function projectMarkdown(out: ProjectOutput): string {
  const parts = [`# World Bank documents of project ${out.project_id}`];
  if (out.file) {
    parts.push(documentsFileLine(out));
  } else if (out.count === 0) {
    parts.push(emptyText(out.total, out.offset, [
      "check the project id on projects.worldbank.org",
      "or search by the project's name with worldbank_search_documents",
    ]));
  } else {
    parts.push(pagingLine(out.total, out.offset, out.count, out.next_offset));
    (out.documents ?? []).forEach((d, i) => parts.push(documentMarkdown(d, out.offset + i + 1)));
  }
  if (out.notice) parts.push(`**${out.notice}**`);
  parts.push(footer(out.source));
  return parts.join("\n\n");
}

function emptyText(total: number, offset: number, advice: string[]): string {
  if (total > 0 && offset >= total) {
    return `No documents at offset ${offset}: only ${total.toLocaleString("en-US")} match. ` +
      `Use an offset below ${total}.`;
  }
  return `No documents matched. To find some: ${advice.join("; ")}.`;
}

/** Markdown for `worldbank_get_document_details`. */
export function detailsMarkdown(out: DetailsOutput): string {
  const d = out.document;
  const fields = [
    line("Date", d.document_date),
    line("Countries", list(d.countries)),
    line("Type", [d.document_type, d.major_document_type].filter(Boolean).join(" — ") || null),
    line("Languages", list(d.languages)),
    line("Authors", list(d.authors)),
    line("Report", d.report_number),
    line("Volume", d.volume_number),
    line("Collection", d.collection),
    line("Project", [d.project_id, d.project_name].filter(Boolean).join(" — ") || null),
    line("Region", d.region),
    line("Disclosed", d.disclosure_date),
    `**ID:** ${d.id}${d.guid ? ` (guid ${d.guid})` : ""}`,
    line("Links", links(d)),
  ].filter((l): l is string => l !== null);
  const parts = [`# ${d.title}`, fields.join("  \n")];
  const part = out.offset > 0 || out.has_more
    ? ` (characters ${out.offset}–${out.offset + (d.abstract?.length ?? 0)} of ${out.abstract_total})`
    : "";
  parts.push(`## Abstract${part}\n\n${d.abstract ?? "No abstract available."}`);
  if (d.keywords.length) parts.push(`## Keywords\n\n${d.keywords.join("; ")}`);
  if (out.next_offset !== null) {
    parts.push(`More of the abstract follows: call again with offset=${out.next_offset}.`);
  }
  if (out.notice) parts.push(`**${out.notice}**`);
  parts.push(footer(out.source));
  return parts.join("\n\n");
}

/** Markdown for `worldbank_explore_facets` with output "file": what the file holds. */
export function facetsFileMarkdown(out: FacetsOutput): string {
  const rows = out.facets.reduce((n, f) => n + f.available, 0);
  const counts = out.facets.map((f) => `${f.name} (\`${f.field}\`): ${f.available}`).join("; ");
  const parts = [
    `# World Bank document facets${out.query ? ` for "${out.query}"` : ""}`,
    `Counts over ${out.total.toLocaleString("en-US")} matching document${out.total === 1 ? "" : "s"}.`,
    csvFileLine(out.file!, `all ${rows} values (${counts}) with their document counts`, FACET_COLUMNS),
    footer(out.source),
  ];
  return parts.join("\n\n");
}

/** Markdown for `worldbank_explore_facets`: one count table per facet. */
export function facetsMarkdown(out: FacetsOutput): string {
  const parts = [
    `# World Bank document facets${out.query ? ` for "${out.query}"` : ""}`,
    `Counts over ${out.total.toLocaleString("en-US")} matching document${out.total === 1 ? "" : "s"}.`,
  ];
  for (const facet of out.facets) {
    const use = facet.filter_argument
      ? `Use a value in worldbank_search_documents' "${facet.filter_argument}" argument.`
      : "";
    const heading = `## ${facet.name} (\`${facet.field}\`)`;
    if (facet.available === 0) {
      parts.push(`${heading}\n\nNo values returned.`);
      continue;
    }
    if (facet.values.length === 0) {
      parts.push(
        `${heading}\n\n${
          out.offset >= facet.available
            ? `All ${facet.available} values were listed before offset ${out.offset}.`
            : `${facet.remaining} values not shown: see the notice below.`
        }`,
      );
      continue;
    }
    const from = out.offset + 1;
    const to = out.offset + facet.values.length;
    const shown = facet.values.length < facet.available
      ? `Values ${from}–${to} of ${facet.available}${
        facet.remaining > 0 && out.next_offset !== null
          ? ` (${facet.remaining} more: call again with offset=${out.next_offset})`
          : ""
      }.`
      : "";
    const note = [shown, use].filter(Boolean).join(" ");
    const table = markdownTable(
      ["Value", "Documents"],
      facet.values.map((v) => [v.value, v.count.toLocaleString("en-US")]),
    );
    parts.push([heading, note, table].filter(Boolean).join("\n\n"));
  }
  if (out.notice) parts.push(`**${out.notice}**`);
  parts.push(footer(out.source));
  return parts.join("\n\n");
}
