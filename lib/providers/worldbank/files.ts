// `output: "file"`: a whole result written to a CSV resource instead of one page cut to the size
// limit. Documents are fetched a page at a time from the requested offset up to the configured
// cap, and written as they come; a page that fails, or the call's deadline drawing near, ends
// the file early and the answer says where to continue.
import type { Clock } from "../../clock.ts";
import { describeError } from "../../errors.ts";
import { timeForAnotherRequest } from "../../http/deadline.ts";
import type { ExportedFile, ResultFiles } from "../../output/exports.ts";
import type { FacetValue, WdsDocument, WdsPage } from "./parse.ts";

/** Documents asked for per request while writing a file (the largest page the search takes, docs/apis/worldbank.md). */
export const FILE_PAGE_SIZE = 100;

/** Columns of a documents file, in order. */
export const DOCUMENT_COLUMNS = [
  "id",
  "title",
  "document_date",
  "document_type",
  "major_document_type",
  "countries",
  "languages",
  "report_number",
  "project_id",
  "abstract",
  "url",
  "pdf_url",
] as const;

/** Columns of a facets file, in order. */
export const FACET_COLUMNS = ["field", "name", "value", "count"] as const;

/** One CSV row of a document: lists joined with "; ", the abstract whole. */
export function documentRow(doc: WdsDocument): Record<string, unknown> {
  return {
    id: doc.id,
    title: doc.title,
    document_date: doc.document_date,
    document_type: doc.document_type,
    major_document_type: doc.major_document_type,
    countries: doc.countries.join("; "),
    languages: doc.languages.join("; "),
    report_number: doc.report_number,
    project_id: doc.project_id,
    abstract: doc.abstract,
    url: doc.url,
    pdf_url: doc.pdf_url,
  };
}

/** A name for a result file from words of the request (`documents_post_office`). */
export function fileName(prefix: string, words: string): string {
  const slug = words.normalize("NFKD").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")
    .slice(0, 60).replace(/_+$/, "");
  return slug ? `${prefix}_${slug}` : prefix;
}

/** Options for {@linkcode writeDocumentsFile}. */
export interface DocumentsFileOptions {
  files: ResultFiles;
  name: string;
  /** What the file holds, for listings. */
  what: string;
  /** The first page, already fetched from `offset` (so a refused request writes no file). */
  first: WdsPage;
  offset: number;
  /** Most documents to write (`file_max_documents`). */
  cap: number;
  /** Fetches `rows` documents from `offset`. */
  fetchPage(offset: number, rows: number): Promise<WdsPage>;
  clock: Clock;
  signal: AbortSignal;
}

/** A written documents file and how far it got. */
export interface DocumentsFile {
  file: ExportedFile;
  /** Documents written. */
  written: number;
  /** Matches in all, as the first page said. */
  total: number;
  /** Why the file stops before the end of what was asked (cap, deadline, failure), or null. */
  stopped: string | null;
}

/**
 * Writes every document from `offset` to the end of the result or `cap`, one page at a time.
 * Pages go on while the call's deadline leaves room for about two more; a page that fails
 * after the first ends the file there, and the result says so instead of failing.
 */
export async function writeDocumentsFile(o: DocumentsFileOptions): Promise<DocumentsFile> {
  const total = o.first.total;
  const end = Math.min(total, o.offset + o.cap);
  let written = 0;
  let stopped: string | null = null;
  async function* pages(): AsyncGenerator<Record<string, unknown>[]> {
    let at = o.offset;
    let docs = o.first.documents.slice(0, Math.max(0, end - at));
    let slowest = 0;
    while (docs.length > 0) {
      written += docs.length;
      at += docs.length;
      yield docs.map(documentRow);
      if (at >= end) break;
      if (!timeForAnotherRequest(o.clock.now(), slowest)) {
        stopped = "the call's deadline drew near";
        return;
      }
      const started = o.clock.now();
      try {
        const page = await o.fetchPage(at, Math.min(FILE_PAGE_SIZE, end - at));
        docs = page.documents.slice(0, end - at);
      } catch (e) {
        if (o.signal.aborted) throw e;
        stopped = `the request for documents from offset ${at} failed (${describeError(e)})`;
        return;
      }
      slowest = Math.max(slowest, o.clock.now() - started);
    }
    if (at < end) {
      // The upstream ran out before its own total (records withdrawn meanwhile): nothing to add.
      stopped = null;
    } else if (end < total) {
      stopped = `the file holds at most ${o.cap.toLocaleString("en-US")} documents (file_max_documents)`;
    }
  }
  const file = await o.files.save({
    name: o.name,
    format: "csv",
    columns: DOCUMENT_COLUMNS,
    rows: pages(),
    description: o.what,
  });
  return { file, written, total, stopped };
}

/** Writes every value of each facet (the upstream's whole list) as field, name, value, count. */
export async function writeFacetsFile(
  files: ResultFiles,
  facets: readonly { field: string; name: string; values: readonly FacetValue[] }[],
  options: { name: string; what: string },
): Promise<ExportedFile> {
  const rows = facets.flatMap((f) => f.values.map((v) => ({ field: f.field, name: f.name, ...v })));
  return await files.save({
    name: options.name,
    format: "csv",
    columns: FACET_COLUMNS,
    rows: [rows],
    description: options.what,
  });
}
