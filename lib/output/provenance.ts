// Replayable provenance (docs/ARCHITECTURE.md). The shared HTTP client writes down every upstream
// answer a tool call uses (the request with secrets left out, and the SHA-256 of the body);
// providers add what only they know (licence, a permalink for people, the upstream's own as-of or
// vintage) with `cite()`; the core renders both into every data answer: a `provenance` object in
// the structured content and one compact text line. A citation resource
// (`opendata://citation/<provider>/<id>`, kept for a day in the shared store when replicas share
// Redis) gives the exact request to replay.
import { requestScope } from "../http/request_scope.ts";
import type { CallRecord, ProvenanceNote } from "../http/request_scope.ts";
import { iso, keepCitation } from "./citations.ts";
import type { CitationStore } from "./citations.ts";

export type { ProvenanceNote };
export { CITATION_PREFIX, CITATION_TTL_MS, citationTemplate } from "./citations.ts";
export type { CitationStore } from "./citations.ts";

/** The `provenance` object of a data answer. */
export interface Provenance {
  /** The upstream the data came from. */
  source: string;
  /** A page for people, or the exact request (secrets left out) when the provider names none. */
  permalink: string;
  licence: string | null;
  /** When the upstream answered (ISO 8601, UTC); for a cached answer, when it was fetched. */
  retrieved_at: string;
  /** The upstream's own as-of, last-updated time or vintage, where it gives one. */
  as_of: string | null;
  /** SHA-256 (hex) of the upstream body, as received after HTTP content decoding. */
  sha256: string;
  /**
   * `resources/read` this URI for the exact request (method and URL, secrets left out), ready to
   * replay: the answer does not repeat it (said once, to keep answers short).
   */
  citation: string;
  /** Every upstream answer the result used, when there were several (at most 10 listed; each citation holds its request). */
  requests?: { sha256: string; retrieved_at: string; citation: string }[];
  /** How many upstream answers the result used, when there were several. */
  requests_total?: number;
}

/** Most requests listed in one answer's provenance. */
const MAX_LISTED = 10;

/**
 * The characters of a result's limit kept for its provenance: tool handlers are told the limit
 * less this, so adding the provenance never cuts what they fitted (1,000 of 25,000; a fifth of
 * smaller limits). Below about 3,000 a whole provenance object (400-700 characters) may not fit
 * in a fifth: the structured content is then shortened, and the text says so before its
 * provenance line (lib/mcp/server.ts), which stays whole.
 */
export function provenanceReserve(limit: number): number {
  return Math.min(1000, Math.floor(limit / 5));
}

/**
 * Adds what only the provider knows to the provenance of the tool call in progress: the licence
 * of this answer's data, a permalink for people, the upstream's own as-of or vintage. Later
 * notes override earlier ones field by field; outside a tool call it does nothing.
 */
export function cite(note: ProvenanceNote): void {
  const record = requestScope.getStore()?.record;
  if (!record) return;
  for (const [key, value] of Object.entries(note) as [keyof ProvenanceNote, string | undefined][]) {
    if (typeof value === "string" && value.trim() !== "") record.note[key] = value.trim();
  }
}

/** A fresh, empty record for one tool call. */
export function newRecord(): CallRecord {
  return { calls: [], note: {} };
}

/**
 * The provenance of an answer from its call's record, or undefined when the call used no
 * upstream answer (nothing to cite). The main request is the last one (data after lookups).
 * Each request listed is kept in `citations` under a short id, readable as a citation resource.
 */
export async function buildProvenance(
  record: CallRecord,
  citations: CitationStore,
): Promise<Provenance | undefined> {
  const main = record.calls.at(-1);
  if (!main) return undefined;
  const note = record.note;
  const listed = record.calls.length > 1 ? record.calls.slice(-MAX_LISTED) : [main];
  const uris = await Promise.all(listed.map((c) => keepCitation(c, citations)));
  const out: Provenance = {
    source: note.source ?? main.source,
    permalink: note.permalink ?? main.url,
    licence: note.licence ?? main.licence ?? null,
    retrieved_at: iso(main.retrievedAt),
    as_of: note.as_of ?? null,
    sha256: main.sha256,
    citation: uris.at(-1)!,
  };
  if (record.calls.length > 1) {
    out.requests = listed.map((c, i) => ({
      sha256: c.sha256,
      retrieved_at: iso(c.retrievedAt),
      citation: uris[i]!,
    }));
    out.requests_total = record.calls.length;
  }
  return out;
}

/** A character that goes on a word, a number or a URL (so what ends before it is only its start). */
const GOES_ON = /[\p{L}\p{N}_\-\/#?&=%~+@]/u;

/**
 * Whether `text` already says `value` word for word (letter case aside), as a whole: not only as
 * the start or the end of a longer word or URL (`https://x.org/a` is not said by
 * `https://x.org/a/b`, nor `2013-08-14` by `2013-08-14T10:00`). A full stop or comma followed by a
 * space or the end closes a sentence, not the value.
 */
function says(text: string, value: string | null): boolean {
  if (value === null || value === "") return false;
  const hay = text.toLowerCase();
  const needle = value.toLowerCase();
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) {
    const before = hay[at - 1] ?? " ";
    const after = hay[at + needle.length] ?? " ";
    const next = hay[at + needle.length + 1] ?? " ";
    const startsWhole = !GOES_ON.test(before) && before !== ".";
    const endsWhole = !GOES_ON.test(after) && !(/[.,:;]/.test(after) && GOES_ON.test(next));
    if (startsWhole && endsWhole) return true;
  }
  return false;
}

/** Whether `text` says the as-of, whole or without its label ("vintage: "). */
function saysAsOf(text: string, asOf: string | null): boolean {
  return asOf !== null && (says(text, asOf) || says(text, asOf.replace(/^[a-z ]+: /i, "")));
}

/**
 * The one text line that names an answer's provenance. The permalink, the licence and the as-of
 * are left out of it when `text` (the answer it closes) already says them word for word: said once.
 */
export function provenanceLine(p: Provenance, text = ""): string {
  const parts = [
    `Provenance: ${p.source}${says(text, p.permalink) ? "" : ` ${p.permalink}`}`,
    p.licence && !says(text, p.licence) ? `licence ${p.licence}` : "",
    `retrieved ${p.retrieved_at}`,
    p.as_of && !saysAsOf(text, p.as_of) ? `as of ${p.as_of}` : "",
    `sha256 ${p.sha256}`,
    `replay ${p.citation}`,
    p.requests_total
      ? `(last of ${p.requests_total} upstream requests${p.requests ? ", all in provenance.requests" : ""})`
      : "",
  ];
  return parts.filter(Boolean).join(" · ");
}

/**
 * Adds the provenance to an answer: the `provenance` object to its structured content, and the
 * line to its text (inside the JSON when the text is the structured content as JSON), keeping
 * the text within `limit` characters (the body makes room, so the line is never cut).
 */
export function withProvenance(
  text: string,
  structured: Record<string, unknown> | undefined,
  provenance: Provenance,
  limit: number,
  clamp: (text: string, limit: number) => string,
): { text: string; structured: Record<string, unknown> | undefined; line?: string } {
  // Where the room kept is short (small limits, many requests), the list of requests goes first
  // (their count stays; the main citation stays).
  if (structured !== undefined) {
    const over = (p: Provenance) => JSON.stringify({ ...structured, provenance: p }).length > limit;
    if (provenance.requests && over(provenance)) {
      const { requests: _, ...rest } = provenance;
      provenance = rest;
    }
  }
  const withObject = structured === undefined ? undefined : { ...structured, provenance };
  // A JSON text gets the object inside it, on one line before its closing brace (the rest of the
  // text stays as the tool wrote it); if that does not fit, the structured content carries it.
  const body = text.trimEnd();
  if (body.trimStart().startsWith("{") && body.endsWith("}")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      const head = body.slice(0, -1).trimEnd();
      const comma = Object.keys(parsed).length ? "," : "";
      const json = `${head}${comma}\n  "provenance": ${JSON.stringify(provenance)}\n}`;
      return { text: json.length <= limit ? json : body, structured: withObject };
    }
  }
  // `line` is returned too: what is added after the text later (a note, next calls) goes after it
  // whole, and what makes room cuts the text before it, never the line.
  // The permalink, licence and as-of are said by the line only when the text kept does not say them.
  let line = `\n\n${provenanceLine(provenance, text)}`;
  let kept = clamp(text, Math.max(0, limit - line.length));
  const lost = (value: string | null, said = says) => said(text, value) && !said(kept, value);
  if (lost(provenance.permalink) || lost(provenance.licence) || lost(provenance.as_of, saysAsOf)) {
    line = `\n\n${provenanceLine(provenance)}`;
    kept = clamp(text, Math.max(0, limit - line.length));
  }
  return { text: `${kept}${line}`, structured: withObject, line };
}
