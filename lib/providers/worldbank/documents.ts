// Lists of documents as the search tools answer them: a page of summaries cut to the character
// limit, or every document from an offset written to a CSV file.
import { fitToLimit, page, shorten } from "../../mcp/shaping.ts";
import type { NextCall, ToolCallContext } from "../../mcp/provider.ts";
import { buildQuery, SUMMARY_FIELDS } from "./client.ts";
import type { SearchFilters } from "./client.ts";
import { partialFileOut } from "../../output/result_files.ts";
import { FILE_PAGE_SIZE, writeDocumentsFile } from "./files.ts";
import type { DocumentsFile } from "./files.ts";
import { fileNotice, pageNotice, summarize } from "./format.ts";
import type { WdsDocument } from "./parse.ts";
import { callContext, today, type ToolDeps } from "./_common.ts";

/** Writes every document of a search from `offset` (up to the cap) to a CSV file. */
export async function documentsFile(
  deps: ToolDeps,
  filters: SearchFilters,
  offset: number,
  ctx: ToolCallContext,
  naming: { name: string; what: string },
): Promise<{ written: DocumentsFile; url: string }> {
  const call = callContext(ctx);
  const cap = deps.settings.file_max_documents;
  const request = (at: number, rows: number) =>
    buildQuery(filters, { rows, offset: at, fields: SUMMARY_FIELDS }, { today: today(deps.clock) });
  const first = await deps.client.query(request(offset, Math.min(FILE_PAGE_SIZE, cap)), call);
  const written = await writeDocumentsFile({
    files: ctx.files,
    name: naming.name,
    what: `${naming.what}${offset ? ` from offset ${offset}` : ""}`,
    first: first.page,
    offset,
    cap,
    fetchPage: async (at, rows) => (await deps.client.query(request(at, rows), call)).page,
    clock: deps.clock,
    signal: ctx.signal,
  });
  return { written, url: first.url };
}

/** The envelope, file block and notice of a documents file. */
export function filePart(w: DocumentsFile, offset: number) {
  const envelope = page(w.total, offset, w.written);
  const partial = envelope.has_more;
  return {
    envelope,
    file: partialFileOut(w.file, partial),
    truncated: partial,
    notice: fileNotice({ file: w.file, written: w.written, offset, total: w.total, stopped: w.stopped }),
  };
}

/** The page of summaries, its envelope and notice, cut to the character limit. */
export function pageOf<S>(
  deps: ToolDeps,
  docs: WdsDocument[],
  total: number,
  offset: number,
  limit: number,
  ctx: ToolCallContext,
  filtersAdvice: string | null,
  build: (parts: ReturnType<typeof pagePart>) => { structured: S; text: string },
): { text: string; structured: S; next?: NextCall[] } {
  // Abstracts are shortened in proportion to the limit too, so at least one document fits.
  const abstractChars = Math.max(
    100,
    Math.min(deps.settings.abstract_chars, Math.floor(ctx.limits.characterLimit / 4)),
  );
  const summaries = docs.slice(0, limit).map((d) => summarize(d, abstractChars));
  // A total below what was received would make the envelope claim there is nothing here.
  const known = Math.max(total, summaries.length ? offset + summaries.length : 0);
  const fitted = fitToLimit(summaries, ctx.limits.characterLimit, ({ items, truncated }) => {
    const envelope = page(known, offset, items.length);
    const notice = truncated
      ? pageNotice({
        received: summaries.length,
        shown: items.length,
        nextOffset: envelope.next_offset,
        limit: ctx.limits.characterLimit,
        filters: filtersAdvice,
      })
      : null;
    return build(pagePart(envelope, items, truncated, notice));
  });
  // From the list to the record: the first documents' details, as ready calls.
  const next = fitted.items.slice(0, 3).map((d) => ({
    tool: "worldbank_get_document_details",
    arguments: { document_id: d.id },
    for: `details of "${shorten(d.title, 60)}"`,
  }));
  return { text: fitted.text, structured: fitted.structured, ...(next.length ? { next } : {}) };
}

function pagePart(
  envelope: ReturnType<typeof page>,
  documents: ReturnType<typeof summarize>[],
  truncated: boolean,
  notice: string | null,
) {
  return { envelope, rest: { documents, truncated, notice } };
}
