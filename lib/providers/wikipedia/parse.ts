import { inlineText } from "../../html.ts";
// Reading MediaWiki Action API answers. We ask for formatversion=2, but both formats are read:
// fv1 keys pages by id (missing pages under "-1"), spells true as "" and wraps text in "*".

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Json : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
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

/** Reads a `list=search` answer. */
export function parseSearch(body: unknown): SearchResult {
  const root = obj(body) ?? {};
  const query = obj(root["query"]) ?? {};
  const info = obj(query["searchinfo"]) ?? {};
  const list = Array.isArray(query["search"]) ? query["search"] : [];
  const hits: SearchHit[] = [];
  for (const raw of list) {
    const item = obj(raw);
    const title = str(item?.["title"]);
    if (!item || !title) continue;
    hits.push({
      title,
      pageid: num(item["pageid"]),
      snippet: inlineText(str(item["snippet"]) ?? ""),
      wordcount: num(item["wordcount"]),
      size: num(item["size"]),
      timestamp: str(item["timestamp"]),
    });
  }
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

/** Reads a `list=geosearch` answer, nearest first. */
export function parseGeosearch(body: unknown): GeoHit[] {
  const query = obj(obj(body)?.["query"]) ?? {};
  const list = Array.isArray(query["geosearch"]) ? query["geosearch"] : [];
  const hits: GeoHit[] = [];
  for (const raw of list) {
    const item = obj(raw);
    const title = str(item?.["title"]);
    const lat = num(item?.["lat"]);
    const lon = num(item?.["lon"]);
    if (!item || !title || lat === null || lon === null) continue;
    hits.push({ title, pageid: num(item["pageid"]), lat, lon, dist: num(item["dist"]) });
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

/** The pages of a query answer, in either format. */
export function parsePages(body: unknown): QueryPage[] {
  const query = obj(obj(body)?.["query"]) ?? {};
  const rawPages = query["pages"];
  const list = Array.isArray(rawPages) ? rawPages : Object.values(obj(rawPages) ?? {});
  const pages: QueryPage[] = [];
  for (const raw of list) {
    const page = obj(raw);
    const title = str(page?.["title"]);
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
      ? page["links"].map((l) => str(obj(l)?.["title"])).filter((t): t is string => t !== null)
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
