// The endpoint family a request belongs to, for per-endpoint circuit breakers: the host, the
// base URL's path, and up to two path segments below it. Version and "api" segments are kept
// without counting, and the walk stops at a segment that names one record (a number, or a name
// with a file extension such as "bergen.json"), so callers cannot make a breaker per record.
//
//   https://api.stlouisfed.org  + /fred/series/observations    -> api.stlouisfed.org/fred/series
//   https://www.stat-search.boj.or.jp + /api/v1/getDataCode     -> www.stat-search.boj.or.jp/api/v1/getDataCode
//   https://snl.no + /bergen.json                               -> snl.no
//   https://no.wikipedia.org + /w/api.php                       -> no.wikipedia.org/w/api.php

/** Segments kept in the family without counting as one of its two. */
const UNCOUNTED = /^(api|rest|rest_v\d+|v\d+(\.\d+)*)$/i;
/** Script names are endpoints, not records. */
const SCRIPT = /\.(php|aspx?|cgi|jsp|pl)$/i;
/** The longest family kept, so odd paths cannot make huge keys. */
const MAX_LENGTH = 200;

/** `host/path-family` of `url`, relative to the client's `baseUrl` when `url` is under it. */
export function endpointFamily(url: URL, baseUrl: string): string {
  const basePath = basePathOf(url, baseUrl);
  const kept: string[] = [];
  let counted = 0;
  for (const segment of url.pathname.slice(basePath.length).split("/")) {
    if (segment === "") continue;
    if (UNCOUNTED.test(segment)) {
      kept.push(segment);
      continue;
    }
    if (namesRecord(segment)) break;
    kept.push(segment);
    if (++counted === 2) break;
  }
  const tail = kept.length > 0 ? `/${kept.join("/")}` : "";
  return `${url.host}${basePath}${tail}`.slice(0, MAX_LENGTH);
}

/**
 * The pattern of `declared` (paths below the base URL, `*` for any one segment) that the
 * endpoint `family` (from {@linkcode endpointFamily}) matches, else `"other"`.
 */
export function declaredEndpoint(family: string, baseUrl: string, declared: readonly string[]): string {
  const slash = family.indexOf("/");
  let path = slash === -1 ? "" : family.slice(slash);
  const base = URL.parse(baseUrl.replace(/\{[^}]*\}/g, "x"))?.pathname.replace(/\/+$/, "") ?? "";
  if (base && (path === base || path.startsWith(`${base}/`))) path = path.slice(base.length);
  const segments = path.split("/").filter(Boolean);
  const found = declared.find((pattern) => {
    const want = pattern.split("/").filter(Boolean);
    return want.length === segments.length && want.every((w, i) => w === "*" || w === segments[i]);
  });
  return found ?? "other";
}

function basePathOf(url: URL, baseUrl: string): string {
  let base: URL;
  try {
    base = new URL(baseUrl.replace(/\{[^}]*\}/g, "x"));
  } catch {
    return "";
  }
  const path = base.pathname.replace(/\/+$/, "");
  if (base.host !== url.host || path === "") return "";
  return url.pathname === path || url.pathname.startsWith(`${path}/`) ? path : "";
}

function namesRecord(segment: string): boolean {
  if (/^\d+$/.test(segment)) return true;
  return /\.[a-z0-9]{1,5}$/i.test(segment) && !SCRIPT.test(segment);
}
