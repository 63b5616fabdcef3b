// Reading MediaWiki Action API answers. We ask for formatversion=2, but both formats are read:
// fv1 keys pages by id (missing pages under "-1"), spells true as "" and wraps text in "*".
// A body that is not an API answer at all (null, a list, a query of the wrong types) is a
// DECODE_ERROR, never an empty result.
import { ToolError } from "../../errors.ts";
import { clip, cutField, inlineText } from "../../html.ts";

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Json : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** Most characters of a title: MediaWiki allows 255 bytes, so a longer one is cut, saying so. */
export const TITLE_MAX = 512;
/** Most characters of a search snippet (MediaWiki sends a few hundred). */
export const SNIPPET_MAX = 1000;

/** A title, cut when no real title could be that long. */
function titleOf(value: unknown): string | null {
  const s = str(value);
  return s === null ? null : cutField(s, TITLE_MAX);
}

function num(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) {
    return Number(value);
  }
  return null;
}

// fv2 says true; fv1 says "" for true and leaves the key out for false.
function flag(value: unknown): boolean {
  return value === true || value === "";
}

/** A DECODE_ERROR for an answer that is not what the Action API sends for this query. */
export function shapeError(what: string): ToolError {
  return new ToolError("DECODE_ERROR", `The Wikipedia API sent an answer of an unexpected shape: ${what}`, {
    retryable: false,
    hint: "Try again later; if it persists, something other than the MediaWiki API is answering",
  });
}

/** Whether `body` has the outline of an `action=query` answer (an object with a `query` object). */
export function isQueryAnswer(body: unknown): boolean {
  return obj(obj(body)?.["query"]) !== null;
}

/** The `query` object of an answer, or a DECODE_ERROR. */
function queryOf(body: unknown): Json {
  const root = obj(body);
  if (!root) {
    throw shapeError(
      body === null
        ? "null instead of an object"
        : Array.isArray(body)
        ? "a list instead of an object"
        : typeof body,
    );
  }
  const query = obj(root["query"]);
  if (!query) throw shapeError(`no "query" object`);
  return query;
}

/** The list under `query[key]`, or a DECODE_ERROR. */
function listOf(query: Json, key: string): unknown[] {
  const list = query[key];
  if (!Array.isArray(list)) throw shapeError(`"query.${key}" is not a list`);
  return list;
}

/** An error the API reported in the body (usually with HTTP 200). */
export interface ApiErrorInfo {
  code: string;
  info: string;
  /** Seconds of lag, on a maxlag error. */
  lag: number | null;
}

/**
 * The error in an API answer, or null. Reads the legacy `{"error": {code, info}}` of both
 * formats and the `{"errors": [{code, text | "*"}]}` of `errorformat=...`.
 */
export function apiErrorOf(body: unknown): ApiErrorInfo | null {
  const root = obj(body);
  if (!root) return null;
  // Not MediaWiki's shape, but a proxy or an older extension may answer `{"error": "text"}`.
  if (typeof root["error"] === "string" && root["error"].trim() !== "") {
    return { code: "unknown", info: root["error"].trim(), lag: null };
  }
  const error = obj(root["error"]);
  if (error) {
    return {
      code: str(error["code"]) ?? "unknown",
      info: str(error["info"]) ?? str(error["text"]) ?? str(error["*"]) ?? "",
      lag: num(error["lag"]),
    };
  }
  const errors = root["errors"];
  if (Array.isArray(errors) && errors.length > 0) {
    const first = obj(errors[0]) ?? {};
    const data = obj(first["data"]);
    return {
      code: str(first["code"]) ?? "unknown",
      info: str(first["text"]) ?? str(first["*"]) ?? str(first["html"]) ?? "",
      lag: num(first["lag"]) ?? num(data?.["lag"]),
    };
  }
  return null;
}

/** One search hit. */
export interface SearchHit {
  title: string;
  pageid: number | null;
  /** Plain text: the `searchmatch` markup is removed. */
  snippet: string;
  wordcount: number | null;
  size: number | null;
  timestamp: string | null;
}

/** A `list=search` answer. */
export interface SearchResult {
  hits: SearchHit[];
  totalhits: number | null;
  suggestion: string | null;
  /** `continue.sroffset`, present when more results follow. */
  nextOffset: number | null;
}

/** Reads a `list=search` answer; a DECODE_ERROR when it is not one. */
export function parseSearch(body: unknown): SearchResult {
  const query = queryOf(body);
  const root = obj(body)!;
  const info = obj(query["searchinfo"]) ?? {};
  const list = listOf(query, "search");
  const hits: SearchHit[] = [];
  for (const raw of list) {
    const item = obj(raw);
    const title = titleOf(item?.["title"]);
    if (!item || !title) continue;
    hits.push({
      title,
      pageid: num(item["pageid"]),
      // Cut before reading too: a snippet of megabytes is not worth turning into text.
      snippet: clip(inlineText(clip(str(item["snippet"]) ?? "", 4 * SNIPPET_MAX)), SNIPPET_MAX),
      wordcount: num(item["wordcount"]),
      size: num(item["size"]),
      timestamp: str(item["timestamp"]),
    });
  }
  if (list.length > 0 && hits.length === 0) throw shapeError("search results without titles");
  return {
    hits,
    totalhits: num(info["totalhits"]),
    suggestion: str(info["suggestion"]),
    nextOffset: num(obj(root["continue"])?.["sroffset"]),
  };
}

/** One `list=geosearch` item. */
export interface GeoHit {
  title: string;
  pageid: number | null;
  lat: number;
  lon: number;
  /** Metres from the centre. */
  dist: number | null;
}

/** Reads a `list=geosearch` answer, nearest first; a DECODE_ERROR when it is not one. */
export function parseGeosearch(body: unknown): GeoHit[] {
  const list = listOf(queryOf(body), "geosearch");
  const hits: GeoHit[] = [];
  for (const raw of list) {
    const item = obj(raw);
    const title = titleOf(item?.["title"]);
    const lat = num(item?.["lat"]);
    const lon = num(item?.["lon"]);
    if (!item || !title || lat === null || lon === null) continue;
    hits.push({ title, pageid: num(item["pageid"]), lat, lon, dist: num(item["dist"]) });
  }
  if (list.length > 0 && hits.length === 0) {
    throw shapeError("geosearch results without titles or coordinates");
  }
  return hits.sort((a, b) => (a.dist ?? Infinity) - (b.dist ?? Infinity));
}

/** One page of a `prop=...` query. */
export interface QueryPage {
  title: string;
  pageid: number | null;
  ns: number | null;
  missing: boolean;
  invalid: boolean;
  invalidReason: string | null;
  extract: string | null;
  fullUrl: string | null;
  lastRevId: number | null;
  touched: string | null;
  pageprops: Record<string, string>;
  coordinates: { lat: number; lon: number } | null;
  links: string[];
}

/** How the title asked for became the page's title. */
export interface TitleResolution {
  /** The title after normalisation (case, underscores), before redirects. */
  normalizedFrom: string | null;
  /** The redirect page that was followed, if any. */
  redirectedFrom: string | null;
  /** The section a redirect points at (`tofragment`), if any. */
  fragment: string | null;
}

/** The pages of a query answer, in either format; a DECODE_ERROR when it is not one. */
export function parsePages(body: unknown): QueryPage[] {
  const query = queryOf(body);
  const rawPages = query["pages"];
  // A title with an interwiki prefix ("en:Oslo") gets `query.interwiki` and no pages.
  if (rawPages === undefined && Array.isArray(query["interwiki"])) return [];
  const keyed = obj(rawPages);
  if (!Array.isArray(rawPages) && !keyed) throw shapeError(`"query.pages" is neither a list nor an object`);
  const list = Array.isArray(rawPages) ? rawPages : Object.values(keyed!);
  const pages: QueryPage[] = [];
  for (const raw of list) {
    const page = obj(raw);
    const title = titleOf(page?.["title"]);
    if (!page || title === null) continue;
    const props: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj(page["pageprops"]) ?? {})) {
      props[k] = typeof v === "string" ? v : v === true ? "" : String(v);
    }
    const coords = Array.isArray(page["coordinates"]) ? page["coordinates"].map(obj) : [];
    const primary = coords.find((c) => c && flag(c["primary"])) ?? coords[0];
    const lat = num(primary?.["lat"]);
    const lon = num(primary?.["lon"]);
    const links = Array.isArray(page["links"])
      ? page["links"].map((l) => titleOf(obj(l)?.["title"])).filter((t): t is string => t !== null)
      : [];
    pages.push({
      title,
      pageid: num(page["pageid"]),
      ns: num(page["ns"]),
      missing: flag(page["missing"]),
      invalid: flag(page["invalid"]),
      invalidReason: str(page["invalidreason"]),
      extract: str(page["extract"]) ?? str(obj(page["extract"])?.["*"]),
      fullUrl: str(page["fullurl"]) ?? str(page["canonicalurl"]),
      lastRevId: num(page["lastrevid"]),
      touched: str(page["touched"]),
      pageprops: props,
      coordinates: lat !== null && lon !== null ? { lat, lon } : null,
      links,
    });
  }
  if (list.length > 0 && pages.length === 0) throw shapeError("pages without titles");
  return pages;
}

/** Follows `normalized` and `redirects` from the title asked for. */
export function resolveTitle(body: unknown, asked: string): TitleResolution {
  const query = obj(obj(body)?.["query"]) ?? {};
  const pairs = (key: string) =>
    (Array.isArray(query[key]) ? query[key] : []).map(obj).filter((p): p is Json => p !== null);
  let current = asked;
  let normalizedFrom: string | null = null;
  for (const n of pairs("normalized")) {
    if (n["from"] === current && typeof n["to"] === "string") {
      normalizedFrom = current;
      current = n["to"];
    }
  }
  let redirectedFrom: string | null = null;
  let fragment: string | null = null;
  // A chain is resolved by the API to its end, but walk it in case several hops are listed.
  for (let hops = 0; hops < 5; hops++) {
    const r = pairs("redirects").find((p) => p["from"] === current);
    if (!r || typeof r["to"] !== "string") break;
    redirectedFrom ??= current;
    fragment = str(r["tofragment"]);
    current = r["to"];
  }
  return { normalizedFrom, redirectedFrom, fragment };
}

/** `continue.plcontinue` etc.: whether a `prop=links` list was cut. */
export function hasContinue(body: unknown): boolean {
  return obj(obj(body)?.["continue"]) !== null;
}

/** The interwiki prefix of the title asked for (`en` for "en:Oslo"), when the API read it as one. */
export function interwikiOf(body: unknown): string | null {
  const list = obj(obj(body)?.["query"])?.["interwiki"];
  if (!Array.isArray(list)) return null;
  return str(obj(list[0])?.["iw"]);
}
