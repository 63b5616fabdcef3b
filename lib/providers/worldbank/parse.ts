// Turns WDS replies into plain records. The API's field shapes vary from record to record
// (strings or lists, objects keyed "0", "1", ..., `abstracts["cdata!"]`, missing titles), so
// every reader here accepts each shape seen in the wild and never throws on an odd field.
import { ToolError } from "../../errors.ts";

/** One document as the tools report it; absent fields are null or empty lists. */
export interface WdsDocument {
  /** The WDS document id (digits, without the `D` of the reply's keys). */
  id: string;
  /** The number in the document's documents.worldbank.org address. */
  guid: string | null;
  title: string;
  /** `YYYY-MM-DD` when the upstream date can be read. */
  document_date: string | null;
  document_type: string | null;
  major_document_type: string | null;
  countries: string[];
  languages: string[];
  report_number: string | null;
  project_id: string | null;
  abstract: string | null;
  /** The document's page on documents.worldbank.org. */
  url: string | null;
  pdf_url: string | null;
  text_url: string | null;
  authors: string[];
  keywords: string[];
  volume_number: string | null;
  collection: string | null;
  project_name: string | null;
  region: string | null;
  disclosure_date: string | null;
}

/** One value of a facet and how many matching documents carry it. */
export interface FacetValue {
  value: string;
  count: number;
}

/** A parsed WDS reply. */
export interface WdsPage {
  /** Documents matching in all (not just this page). */
  total: number;
  documents: WdsDocument[];
  /** Facet values by facet field (`lang_exact`), in the upstream's order. */
  facets: Record<string, FacetValue[]>;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Every non-empty string inside `value`, in order: plain strings, numbers, lists, and the
 * upstream's objects keyed "0", "1", ... (`{"0": {"author": "..."}}`) or by field name
 * (`{"repnme": "..."}`, `{"cdata!": "..."}`).
 */
export function strings(value: unknown): string[] {
  if (typeof value === "string") {
    const s = value.trim();
    return s ? [s] : [];
  }
  if (typeof value === "number" && Number.isFinite(value)) return [String(value)];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (isObject(value)) return Object.values(value).flatMap(strings);
  return [];
}

function first(value: unknown): string | null {
  return strings(value)[0] ?? null;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/** `YYYY-MM-DD` from the upstream's ISO timestamps (`2013-10-01T04:00:00Z`) or other dates. */
export function isoDate(value: unknown): string | null {
  const text = first(value);
  if (!text) return null;
  const iso = /^(\d{4}-\d{2}-\d{2})/.exec(text);
  if (iso) return iso[1]!;
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) return text;
  return new Date(parsed).toISOString().slice(0, 10);
}

/** The upstream gives `http://` links to its own sites; https works and is what we hand out. */
export function secureUrl(value: unknown): string | null {
  const text = first(value);
  if (!text) return null;
  try {
    const url = new URL(text);
    if (url.protocol === "http:" && /(^|\.)worldbank\.org$/i.test(url.hostname)) url.protocol = "https:";
    return url.toString();
  } catch {
    return text;
  }
}

function abstractOf(record: Json): string | null {
  const raw = record["abstracts"] ?? record["abstract"];
  // `{"cdata!": "..."}` is the usual shape; a plain string or `{"abstract": "..."}` also occur.
  if (isObject(raw) && typeof raw["cdata!"] === "string") return raw["cdata!"].trim() || null;
  const text = strings(raw).join("\n\n").trim();
  return text || null;
}

function titleOf(record: Json): string {
  // display_title is missing from some non-English records: fall back to the volume and
  // report names, as the upstream's own site does.
  return first(record["display_title"]) ?? first(record["docna"]) ?? first(record["repnme"]) ??
    first(record["title"]) ?? "Untitled document";
}

/** Normalizes one WDS record; `key` is its key in the reply (`D18419181`). */
export function parseDocument(record: Json, key = ""): WdsDocument {
  const id = first(record["id"]) ?? key.replace(/^D/, "");
  return {
    id,
    guid: first(record["guid"]),
    title: titleOf(record),
    document_date: isoDate(record["docdt"]),
    document_type: first(record["docty"]),
    major_document_type: first(record["majdocty"]),
    countries: unique(strings(record["count"])),
    languages: unique(strings(record["lang"])),
    report_number: first(record["repnb"]),
    project_id: first(record["projectid"]),
    abstract: abstractOf(record),
    url: secureUrl(record["url"]),
    pdf_url: secureUrl(record["pdfurl"]),
    text_url: secureUrl(record["txturl"]),
    // `fl=authr` comes back as an `authors` object.
    authors: unique(strings(record["authors"] ?? record["authr"])),
    keywords: unique(strings(record["keywd"])),
    volume_number: first(record["volnb"]),
    collection: first(record["colti"]),
    project_name: first(record["projn"]),
    region: first(record["admreg"]),
    disclosure_date: isoDate(record["disclosure_date"]),
  };
}

function count(value: unknown): number {
  const n = typeof value === "number" ? value : Number(first(value));
  return Number.isFinite(n) && n >= 0 ? Math.trunc(n) : 0;
}

/** Parses one facet's values: an object keyed "0", "1", ... or a list of `{name, label, count}`. */
export function parseFacetValues(raw: unknown): FacetValue[] {
  const entries = Array.isArray(raw) ? raw : isObject(raw) ? Object.values(raw) : [];
  const values: FacetValue[] = [];
  for (const entry of entries) {
    if (!isObject(entry)) continue;
    const value = first(entry["name"]) ?? first(entry["label"]);
    if (value === null) continue;
    values.push({ value, count: count(entry["count"]) });
  }
  return values;
}

function decodeError(message: string): ToolError {
  return new ToolError("DECODE_ERROR", message, {
    retryable: false,
    hint: "Try again later; if it persists the World Bank API has changed its reply format",
  });
}

/**
 * Parses a WDS JSON reply. Documents sit in an object keyed `D<id>` in ranking order, with a
 * `facets` sibling inside it that is skipped; facets are read from there (or from the top
 * level, where some clients expect them).
 */
export function parseWdsResponse(data: unknown): WdsPage {
  if (!isObject(data)) {
    throw decodeError("The World Bank API answered with JSON that is not an object");
  }
  const rawDocs = data["documents"];
  if (rawDocs !== undefined && rawDocs !== null && typeof rawDocs !== "object") {
    throw decodeError('The World Bank API answered with a "documents" field that is not an object');
  }
  const documents: WdsDocument[] = [];
  let facetSource: unknown = data["facets"];
  if (Array.isArray(rawDocs)) {
    for (const record of rawDocs) if (isObject(record)) documents.push(parseDocument(record));
  } else if (isObject(rawDocs)) {
    for (const [key, record] of Object.entries(rawDocs)) {
      if (key === "facets") {
        facetSource = record;
        continue;
      }
      if (isObject(record)) documents.push(parseDocument(record, key));
    }
  }
  const facets: Record<string, FacetValue[]> = {};
  if (isObject(facetSource)) {
    for (const [field, raw] of Object.entries(facetSource)) facets[field] = parseFacetValues(raw);
  }
  const rawTotal = data["total"];
  const total = rawTotal === undefined || rawTotal === null ? documents.length : count(rawTotal);
  return { total, documents, facets };
}
