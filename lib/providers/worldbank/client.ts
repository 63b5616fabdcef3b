import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient } from "../../http/fetch_client.ts";
import type { Logger } from "../../log.ts";
import { WDS_BASE_URL } from "./urls.ts";
import { parseWdsResponse } from "./parse.ts";
import type { WdsPage } from "./parse.ts";

/** Fields requested for search and project results (`fl`): what the summaries show. */
export const SUMMARY_FIELDS = [
  "id",
  "guid",
  "display_title",
  "docna",
  "repnme",
  "docdt",
  "docty",
  "majdocty",
  "count",
  "lang",
  "repnb",
  "projectid",
  "abstracts",
  "url",
  "pdfurl",
] as const;

/** Fields requested for one document's details. */
export const DETAIL_FIELDS = [
  ...SUMMARY_FIELDS,
  "txturl",
  // `authr` is answered as an `authors` object; asking for `authors` returns nothing.
  "authr",
  "keywd",
  "volnb",
  "colti",
  "projn",
  "admreg",
  "disclosure_date",
] as const;

/** The search filters the tools accept, in their own names. */
export interface SearchFilters {
  query?: string | undefined;
  countries?: readonly string[] | undefined;
  document_types?: readonly string[] | undefined;
  languages?: readonly string[] | undefined;
  /** `YYYY-MM-DD`. */
  date_from?: string | undefined;
  /** `YYYY-MM-DD`. */
  date_to?: string | undefined;
  /** An upstream sort field, or "relevance" for the upstream's own ranking. */
  sort_by?: string | undefined;
  sort_order?: "asc" | "desc" | undefined;
  project_id?: string | undefined;
}

/** Paging and shaping of one request. */
export interface RequestShape {
  rows: number;
  offset?: number;
  fields?: readonly string[];
  facets?: readonly string[];
}

/** Options for {@linkcode buildQuery}. */
export interface BuildQueryOptions {
  /** Today as `YYYY-MM-DD`: the end date sent with a start date when none is given. */
  today: string;
}

/**
 * Maps the tools' arguments to WDS query parameters (docs/apis/worldbank.md): `qterm`, `rows`, `os`,
 * `count_exact` / `docty_exact` / `lang_exact` joined with `^`, `strdate`, `enddate`, `srt`,
 * `order`, `fct`, `fl`, `projectid`, and always `format=json`.
 */
export function buildQuery(
  filters: SearchFilters,
  shape: RequestShape,
  options: BuildQueryOptions,
): Record<string, string | number> {
  const q: Record<string, string | number> = { format: "json" };
  if (filters.query) q["qterm"] = filters.query;
  if (filters.project_id) q["projectid"] = filters.project_id;
  if (filters.countries?.length) q["count_exact"] = filters.countries.join("^");
  if (filters.document_types?.length) q["docty_exact"] = filters.document_types.join("^");
  if (filters.languages?.length) q["lang_exact"] = filters.languages.join("^");
  if (filters.date_from) {
    q["strdate"] = filters.date_from;
    // A start date alone makes WDS return only that calendar year, so an end date always goes
    // with it: the one given, else today (or the start date itself if that lies ahead).
    q["enddate"] = filters.date_to ??
      (filters.date_from > options.today ? filters.date_from : options.today);
  } else if (filters.date_to) {
    q["enddate"] = filters.date_to;
  }
  if (filters.sort_by && filters.sort_by !== "relevance") {
    q["srt"] = filters.sort_by;
    q["order"] = filters.sort_order ?? "desc";
  }
  q["rows"] = shape.rows;
  q["os"] = shape.offset ?? 0;
  if (shape.fields?.length) q["fl"] = shape.fields.join(",");
  if (shape.facets?.length) q["fct"] = shape.facets.join(",");
  return q;
}

/** What a tool hands each upstream call: cancellation and the call's logger. */
export interface CallContext {
  signal: AbortSignal;
  logger: Logger;
}

/** A parsed reply and where it came from. */
export interface WdsResult {
  page: WdsPage;
  /** The request URL (the API takes no key, so it is safe to show). */
  url: string;
}

/** Talks to the WDS search endpoint through the shared HTTP client. */
export class WdsClient {
  #http: HttpClient;
  #endpoint: string;

  constructor(http: HttpClient, endpoint: string) {
    this.#http = http;
    this.#endpoint = endpoint;
  }

  /** The URL a query is sent to, for attribution. */
  url(query: Record<string, string | number>): string {
    return this.#http.url(this.#endpoint, query).toString();
  }

  /** Runs one query and parses the reply. */
  async query(query: Record<string, string | number>, context: CallContext): Promise<WdsResult> {
    try {
      // The endpoint is passed whole: resolving "" against it would add a trailing slash.
      const response = await this.#http.json<unknown>(this.#endpoint, {
        query,
        signal: context.signal,
        logger: context.logger,
        // An error object or a body that is no WDS answer must not be served again from the cache.
        cacheable: (data) => {
          try {
            parseWdsResponse(data);
            return true;
          } catch {
            return false;
          }
        },
      });
      return { page: parseWdsResponse(response.data), url: response.url };
    } catch (e) {
      throw explain(e);
    }
  }
}

/**
 * Says what an HTTP refusal from WDS means. WDS answers a search that matches nothing, or an id
 * that does not exist, with HTTP 200 and no documents; a 400 comes from a parameter it cannot
 * read (observed: `rows=abc`); a 404 means the search endpoint itself was not found.
 */
function explain(e: unknown): unknown {
  if (!(e instanceof UpstreamError)) return e;
  const status = e.status;
  if (
    e.errorType !== "API_ERROR" || status === undefined || status < 400 || status >= 500 || status === 429
  ) {
    return e;
  }
  const known: Record<number, [string, string]> = {
    400: [
      "it could not read a parameter: usually a filter value or date",
      "Check dates (YYYY-MM-DD) and filter values (exact names from worldbank_explore_facets), then try again",
    ],
    404: [
      "the search endpoint was not found. WDS answers a search that matches nothing, and an id that does not " +
      "exist, with HTTP 200 and no documents, so a 404 means the API's address is wrong or the service has moved",
      `Check providers.worldbank.base_url (the default is ${WDS_BASE_URL}); the arguments are not at fault`,
    ],
    403: [
      "it refused access to this client",
      "The service may be blocking automated requests for now; try again later",
    ],
    414: [
      "the request address was too long",
      "Send fewer filter values or a shorter query",
    ],
  };
  const [why, hint] = known[status] ?? [
    "the request was refused",
    "Check the arguments against the tool's description, then try again",
  ];
  return new ToolError("API_ERROR", `The World Bank API rejected the request (HTTP ${status}): ${why}`, {
    status,
    retryable: false,
    hint,
    cause: e,
  });
}
