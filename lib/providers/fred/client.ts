// FRED and FRED Maps (GeoFRED) requests through the shared HTTP client, configured with FRED's
// rules (docs/apis/fred.md, "Upstream discipline"): 120 requests a minute and about 2 a second,
// HTTP 429 retried up to 3 times and 5xx up to 2 (never 4xx, never transport errors), exponential
// backoff with ±25 % jitter, and the circuit breaker. The API key rides in the query string, so it
// is declared a secret parameter (redacted from every logged or reported URL) and scrubbed from
// upstream messages.
import { clientSettings } from "../../http/settings.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient, QueryValue, RequestOptions } from "../../http/fetch_client.ts";
import type { RetryPolicy } from "../../http/retry.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import { type Logger, maskSecrets } from "../../log.ts";
import { SecretMasker } from "../../secrets.ts";
import type { FredSettings } from "./settings.ts";

import { KEY_URL } from "./key.ts";
import { NOTES_MAX } from "./parse.ts";

export { checkKeyFormat, DEMO_KEY, KEY_URL } from "./key.ts";

/** FRED's retry strategy (docs/apis/fred.md) as a {@linkcode RetryPolicy}. */
export function fredRetryPolicy(settings: FredSettings): RetryPolicy {
  const for5xx = Math.min(settings.server_error_max_retries, settings.max_retries);
  return {
    maxRetries: settings.max_retries,
    retryStatuses: [429, 500, 502, 503, 504],
    statusMaxRetries: { 429: settings.max_retries, 500: for5xx, 502: for5xx, 503: for5xx, 504: for5xx },
    retryNetworkErrors: false,
    baseDelayMs: settings.retry_backoff_ms,
    maxDelayMs: Math.max(settings.retry_backoff_ms, settings.rate_limit_retry_delay * 1000),
    jitter: 0.25,
  };
}

/** Options of one FRED request. */
export interface FredRequestOptions {
  signal?: AbortSignal;
  logger?: Logger;
  /** Skip the response cache (large pages would only evict useful entries). */
  noCache?: boolean;
  /** Bypass the cache for this request (the answer is still stored): the call's `fresh`. */
  fresh?: boolean;
  /**
   * Whether a decoded answer may be cached: an answer the caller cannot read (a decode error)
   * must not be served again from the cache.
   */
  cacheable?: (data: unknown) => boolean;
}

/** A decoded FRED answer and the public URL it came from (no key). */
export interface FredResponse {
  data: unknown;
  /** The request URL without `api_key`, for citations. */
  url: string;
}

/** Calls FRED endpoints (`fred/...`, `geofred/...`) with the key and `file_type=json`. */
export class FredClient {
  #http: HttpClient;
  #settings: FredSettings;

  constructor(settings: FredSettings, runtime: HttpRuntime) {
    this.#settings = settings;
    this.#http = runtime.client({
      provider: "fred",
      upstreamName: "FRED API",
      licence:
        "FRED terms of use; not endorsed by the Federal Reserve Bank of St. Louis; series may carry third-party copyright",
      ...clientSettings(settings),
      retry: fredRetryPolicy(settings),
      secretParams: ["api_key"],
      headers: { accept: "application/json" },
    });
  }

  /**
   * `value` with every form of the key masked (lib/secrets.ts): what FRED echoes of it is gone
   * before anything formats, cuts or stores the answer.
   */
  mask<T>(value: T): T {
    if (!this.#settings.api_key) return value;
    const masker = keyMasker(this.#settings.api_key);
    // A string far longer than anything kept of it (parse.ts cuts notes at NOTES_MAX) is cut first,
    // so masking costs what is kept, not what a hostile upstream sent; the kept head is masked before
    // the cut note goes on, so half a key at its end is masked as an edge.
    const cut = boundStrings(
      value,
      PRE_MASK_MAX,
      (s) =>
        `${masker.mask(s.slice(0, PRE_MASK_MAX))} [cut: ${
          s.length.toLocaleString("en-US")
        } characters in all]`,
    );
    return masker.maskDeep(cut);
  }

  /** Whether a key is configured. */
  get hasKey(): boolean {
    return this.#settings.api_key !== "";
  }

  /** Throws the configuration error a call gets when no key is set. */
  requireKey(): void {
    if (this.hasKey) return;
    throw new ToolError("CONFIGURATION_ERROR", "No FRED API key is configured, so FRED cannot be queried", {
      hint:
        `Get a free key at ${KEY_URL}, set it as FRED_API_KEY (or providers.fred.api_key in the config file), then restart the server`,
    });
  }

  /** The citation URL of a request: base URL, endpoint and parameters, without the key. */
  publicUrl(endpoint: string, params: Record<string, QueryValue>): string {
    return this.#http.url(endpoint, { ...params, file_type: "json" }).toString();
  }

  /** GETs an endpoint as JSON; failures become the error codes docs/apis/fred.md lists. */
  async get(
    endpoint: string,
    params: Record<string, QueryValue>,
    options: FredRequestOptions = {},
  ): Promise<FredResponse> {
    this.requireKey();
    try {
      const response = await this.#http.json(endpoint, this.#request(params, options));
      return { data: this.mask(response.data), url: this.publicUrl(endpoint, params) };
    } catch (e) {
      if (e instanceof UpstreamError) throw mapFredError(e, this.#settings);
      throw e;
    }
  }

  /**
   * GETs an endpoint's JSON body undecoded, never cached: large pages are scanned item by item
   * (lib/output/json_scan.ts) instead of being parsed whole.
   */
  async getBytes(
    endpoint: string,
    params: Record<string, QueryValue>,
    options: FredRequestOptions = {},
  ): Promise<{ body: Uint8Array; url: string }> {
    this.requireKey();
    try {
      const response = await this.#http.bytes(endpoint, this.#request(params, { ...options, noCache: true }));
      return { body: response.data, url: this.publicUrl(endpoint, params) };
    } catch (e) {
      if (e instanceof UpstreamError) throw mapFredError(e, this.#settings);
      throw e;
    }
  }

  #request(params: Record<string, QueryValue>, options: FredRequestOptions): RequestOptions {
    return {
      query: { ...params, api_key: this.#settings.api_key, file_type: "json" },
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.noCache ? { cacheTtlMs: 0 } : {}),
      ...(options.fresh ? { fresh: true } : {}),
      ...(options.cacheable ? { cacheable: options.cacheable } : {}),
    };
  }
}

/** FRED's own error text from a response body: v1 JSON, v2 JSON or XML. */
export function fredErrorMessage(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const json = JSON.parse(body) as Record<string, unknown>;
    const message = json["error_message"] ?? json["message"];
    if (typeof message === "string") return message;
  } catch {
    // Not JSON: FRED's XML errors look like <error code="400" message="..."/>.
  }
  const xml = /<error\b[^>]*\bmessage="([^"]*)"/i.exec(body);
  return xml?.[1];
}

/** The most characters of FRED's own error text repeated in an error (its real ones are short). */
const MAX_UPSTREAM_MESSAGE = 500;

/**
 * Tidies FRED's message: no "Bad Request." prefix, single spaces, no trailing period, at most
 * 500 characters (an error is not a channel for an unbounded upstream text).
 */
function tidy(message: string): string {
  const text = message
    .slice(0, MAX_UPSTREAM_MESSAGE * 4)
    .replace(/\s+/g, " ")
    .replace(/^(Bad Request|Not Found|Too Many Requests|Internal Server Error)\.\s*/i, "")
    .trim()
    .replace(/\.$/, "");
  return text.length > MAX_UPSTREAM_MESSAGE
    ? `${text.slice(0, MAX_UPSTREAM_MESSAGE)}... (FRED's message was cut; ${message.length} characters)`
    : text;
}

/** Longest string of a decoded answer masked whole: twice the longest field kept (NOTES_MAX). */
const PRE_MASK_MAX = 2 * NOTES_MAX;

/** `value` with every string longer than `max` replaced by `cut(s)`; a new value only where one was. */
function boundStrings<T>(value: T, max: number, cut: (s: string) => string, depth = 0): T {
  if (typeof value === "string") return (value.length > max ? cut(value) : value) as T;
  if (typeof value !== "object" || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((v, i) => {
      const next = boundStrings(v, max, cut, depth + 1);
      if (next !== v) (copy ??= [...value])[i] = next;
    });
    return (copy ?? value) as T;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const next = boundStrings(v, max, cut, depth + 1);
    if (next !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = next;
  }
  return (out ?? value) as T;
}

let lastMasker: { key: string; masker: SecretMasker } | undefined;

/** The masker of the key's other forms (split, base64, hex, a part of it), made once per key. */
function keyMasker(key: string): SecretMasker {
  if (lastMasker?.key !== key) lastMasker = { key, masker: new SecretMasker([key]) };
  return lastMasker.masker;
}

/** Maps a shared-client failure to FRED's error codes (docs/apis/fred.md), with FRED's own words when it sent some. */
export function mapFredError(e: UpstreamError, settings: FredSettings): ToolError {
  // Masked before anything is cut or tidied, in any case or encoding FRED might echo it.
  const masker = settings.api_key ? keyMasker(settings.api_key) : undefined;
  const scrub = (text: string): string => masker ? masker.mask(maskSecrets(text, [settings.api_key])) : text;
  const upstream = fredErrorMessage(e.body === undefined ? undefined : scrub(e.body));
  const said = upstream ? tidy(scrub(upstream)) : undefined;
  const status = e.status;
  const base = {
    ...(status === undefined ? {} : { status }),
    cause: e,
  };
  const because = said ? `: ${said}` : "";
  switch (e.errorType) {
    case "TIMEOUT":
      return new ToolError("TIMEOUT", scrub(e.message), {
        ...base,
        retryable: true,
        hint: e.hint ?? "Try again",
      });
    case "TRANSPORT_ERROR":
      return new ToolError("NETWORK_ERROR", scrub(e.message), {
        ...base,
        retryable: true,
        hint: "Check the network connection to api.stlouisfed.org, then try again",
      });
    case "RATE_LIMITED":
      return new ToolError(
        "RATE_LIMIT_EXCEEDED",
        status === 429
          ? `FRED API rate limit exceeded (FRED allows 120 requests per minute, about 2 per second)${because}`
          : scrub(e.message),
        {
          ...base,
          retryable: true,
          retryAfterS: e.retryAfterS ?? Math.ceil(settings.rate_limit_retry_delay),
          hint: `Wait ${
            e.retryAfterS ?? Math.ceil(settings.rate_limit_retry_delay)
          } seconds, or fetch large data with output "file" so a background job paces the requests`,
        },
      );
    case "API_ERROR":
      break;
    default:
      // CIRCUIT_OPEN, DECODE_ERROR, CANCELLED, VALIDATION_ERROR keep the shared client's words.
      return new ToolError(e.errorType, scrub(e.message), {
        ...base,
        retryable: e.retryable,
        ...(e.retryAfterS === undefined ? {} : { retryAfterS: e.retryAfterS }),
        ...(e.hint ? { hint: e.hint } : {}),
      });
  }
  if (status === 400 && said && /api_key/i.test(said)) {
    return new ToolError("INVALID_API_KEY", `FRED refused the API key${because}`, {
      ...base,
      hint:
        `Check FRED_API_KEY: it must be a registered key (32 lower-case letters and digits) from ${KEY_URL}`,
    });
  }
  if (status === 401 || status === 403) {
    return new ToolError("INVALID_API_KEY", `FRED API key is invalid or missing${because}`, {
      ...base,
      hint: `Check FRED_API_KEY; keys are issued at ${KEY_URL}`,
    });
  }
  if ((status === 400 || status === 404) && said && /does not exist/i.test(said)) {
    return new ToolError("NOT_FOUND", `FRED has no such resource${because}`, {
      ...base,
      hint: /alfred/i.test(said)
        ? "The real-time window predates the series' first vintage: drop realtime_start/realtime_end, or check get_vintage_dates"
        : 'Verify the id; find series with fred_series operation "search" and categories with fred_category',
    });
  }
  if (status === 404) {
    return new ToolError("NOT_FOUND", `FRED found nothing at this address${because}`, {
      ...base,
      hint: "Verify the id and the operation",
    });
  }
  if (status === 400) {
    return new ToolError("INVALID_REQUEST", `FRED rejected the request${because || " (HTTP 400)"}`, {
      ...base,
      hint: /vintage dates/i.test(said ?? "")
        ? "Ask for fewer vintage dates per call (FRED allows at most 2,000), e.g. in chunks"
        : "Check the parameters' formats and values against the tool's description",
    });
  }
  if (status !== undefined && status >= 500) {
    return new ToolError("SERVER_ERROR", `FRED API server error (HTTP ${status})${because}`, {
      ...base,
      retryable: true,
      hint: "FRED is having trouble; try again later",
    });
  }
  return new ToolError("HTTP_ERROR", `FRED API answered HTTP ${status ?? "error"}${because}`, {
    ...base,
    retryable: e.retryable,
    hint: "Try again later; if it persists, check the request",
  });
}
