// Turns WDS replies into plain records. The API's field shapes vary from record to record
// (strings or lists, objects keyed "0", "1", ..., `abstracts["cdata!"]`, missing titles), so
// every reader here accepts each shape seen in the wild and never throws on an odd field.
import { ToolError } from "../../errors.ts";
import { boundedUrl, clip } from "../../html.ts";

/** Most characters kept of a title. */
export const TITLE_MAX = 500;
/** Most characters kept of a short field (a type, a number, a country, a keyword). */
export const FIELD_MAX = 300;
/** Most items kept of a list field (countries, languages, authors, keywords). */
export const LIST_MAX = 100;

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
  /** The first {@linkcode LIST_MAX} authors. */
  authors: string[];
  /** How many authors the record names. */
  authors_total: number;
  /** The first {@linkcode LIST_MAX} keywords. */
  keywords: string[];
  /** How many keywords the record has. */
  keywords_total: number;
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

// Fields that are short in any real record are clipped, so a broken upstream cannot blow up a
// result; the abstract is the one long field, and the details tool pages it.
function short(value: unknown, max = FIELD_MAX): string | null {
  const s = first(value);
  return s === null ? null : clip(s, max);
}

function list(value: unknown): string[] {
  return unique(strings(value)).map((s) => clip(s, FIELD_MAX));
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
  return short(record["display_title"], TITLE_MAX) ?? short(record["docna"], TITLE_MAX) ??
    short(record["repnme"], TITLE_MAX) ?? short(record["title"], TITLE_MAX) ?? "Untitled document";
}

/** Normalizes one WDS record; `key` is its key in the reply (`D18419181`). */
export function parseDocument(record: Json, key = ""): WdsDocument {
  const id = short(first(record["id"]) ?? key.replace(/^D/, "")) ?? "";
  // `fl=authr` comes back as an `authors` object.
  const authors = list(record["authors"] ?? record["authr"]);
  const keywords = list(record["keywd"]);
  const date = (value: unknown) => {
    const d = isoDate(value);
    return d === null ? null : clip(d, 64);
  };
  return {
    id,
    guid: short(record["guid"]),
    title: titleOf(record),
    document_date: date(record["docdt"]),
    document_type: short(record["docty"]),
    major_document_type: short(record["majdocty"]),
    countries: list(record["count"]).slice(0, LIST_MAX),
    languages: list(record["lang"]).slice(0, LIST_MAX),
    report_number: short(record["repnb"]),
    project_id: short(record["projectid"]),
    abstract: abstractOf(record),
    url: boundedUrl(secureUrl(record["url"])),
    pdf_url: boundedUrl(secureUrl(record["pdfurl"])),
    text_url: boundedUrl(secureUrl(record["txturl"])),
    authors: authors.slice(0, LIST_MAX),
    authors_total: authors.length,
    keywords: keywords.slice(0, LIST_MAX),
    keywords_total: keywords.length,
    volume_number: short(record["volnb"]),
    collection: short(record["colti"], TITLE_MAX),
    project_name: short(record["projn"], TITLE_MAX),
    region: short(record["admreg"]),
    disclosure_date: date(record["disclosure_date"]),
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
    const value = short(entry["name"], TITLE_MAX) ?? short(entry["label"], TITLE_MAX);
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
 * The message of an error object sent with HTTP 200 instead of results (`{"error": ...}`,
 * `{"errors": [...]}`, `{"message": ...}`, `{"fault": {...}}`: the shapes of the API gateways
 * in front of WDS), or null.
 */
export function errorMessageOf(data: Json): string | null {
  const texts = ["error", "errors", "message", "Message", "fault", "detail"].flatMap((key) =>
    strings(
      isObject(data[key])
        ? Object.fromEntries(
          Object.entries(data[key] as Json).filter(([k]) =>
            /message|detail|text|faultstring|reason/i.test(k)
          ),
        )
        : data[key],
    )
  );
  const text = [...new Set(texts)].join("; ");
  return text ? (text.length > 500 ? `${text.slice(0, 499)}…` : text) : null;
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
  // Every WDS answer carries `total` and `documents` (an empty search: total 0 and only
  // `facets` in documents). Without both it is an error object or something else entirely,
  // never "no documents".
  if (!("documents" in data) && !("total" in data)) {
    const message = errorMessageOf(data);
    if (message !== null) {
      throw new ToolError("API_ERROR", `The World Bank API answered with an error: "${message}"`, {
        retryable: false,
        hint: "Check the arguments; if the message is about the service, try again later",
      });
    }
    throw decodeError('The World Bank API answered with JSON that has neither "total" nor "documents"');
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
  const entries = Array.isArray(rawDocs)
    ? rawDocs.length
    : isObject(rawDocs)
    ? Object.keys(rawDocs).filter((k) => k !== "facets").length
    : 0;
  if (entries > 0 && documents.length === 0) {
    throw decodeError("The World Bank API answered with documents that are not records");
  }
  const facets: Record<string, FacetValue[]> = {};
  if (isObject(facetSource)) {
    for (const [field, raw] of Object.entries(facetSource)) facets[field] = parseFacetValues(raw);
  }
  const rawTotal = data["total"];
  let total = documents.length;
  if (rawTotal !== undefined && rawTotal !== null) {
    const n = typeof rawTotal === "number" ? rawTotal : typeof rawTotal === "string" ? Number(rawTotal) : NaN;
    if (!Number.isFinite(n) || n < 0) {
      throw decodeError(`The World Bank API answered with a "total" that is not a count`);
    }
    total = Math.trunc(n);
  }
  return { total, documents, facets };
}
