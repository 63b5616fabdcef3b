import type { Clock, Random } from "../clock.ts";
import { UpstreamError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { CircuitBreaker } from "./breaker.ts";
import type { ResponseCache } from "./cache.ts";
import { RateLimiter, RateLimitWaitError } from "./rate_limiter.ts";
import { remainingMs, requestScope } from "./request_scope.ts";
import type { RateLimit } from "./rate_limiter.ts";
import { backoffDelay, parseRetryAfter, retriesFor } from "./retry.ts";
import type { RetryPolicy } from "./retry.ts";

/** Query parameter values; `undefined` and `null` are left out, arrays repeat the key. */
export type QueryValue = string | number | boolean | undefined | null | readonly (string | number)[];

/** Checks a URL before it is fetched (the SSRF guard plugs in here); throws to refuse. */
export type UrlCheck = (url: URL) => void | Promise<void>;

/** Everything one provider's client needs. */
export interface HttpClientOptions {
  /** Provider id, used in errors and logs. */
  provider: string;
  /** Human name of the upstream, used in messages ("FRED API"). */
  upstreamName: string;
  /** Base URL that relative paths resolve against. */
  baseUrl: string;
  /** The deadline of one call, covering every retry. */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Shared clock, randomness, logger, breakers and cache. */
  runtime: HttpRuntimeParts;
  /** Client-side request rate limits. */
  rateLimits?: readonly RateLimit[];
  /** How long a successful answer is reused; 0 disables the cache. */
  cacheTtlMs?: number;
  /** The largest body accepted. */
  maxBodyBytes?: number;
  /** Query parameters whose values never reach a log or an error (e.g. `api_key`). */
  secretParams?: readonly string[];
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  /** Called for every URL before it is fetched, redirects included. */
  checkUrl?: UrlCheck;
  /** Redirects followed at most. */
  maxRedirects?: number;
}

/** The parts every client of a process shares. */
export interface HttpRuntimeParts {
  clock: Clock;
  random: Random;
  logger: Logger;
  cache: ResponseCache;
  userAgent: string;
  breakerFor(host: string): CircuitBreaker;
  fetch: typeof fetch;
}

/** Options for one request. */
export interface RequestOptions {
  query?: Record<string, QueryValue>;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Aborts the call (the MCP client's cancellation). */
  signal?: AbortSignal;
  /** Bypass the cache for this call (the result is still stored); default: the tool call's `fresh`. */
  fresh?: boolean;
  /** Overrides the provider's cache TTL for this call. */
  cacheTtlMs?: number;
  /** Overrides the provider's deadline for this call. */
  timeoutMs?: number;
  /** Logger carrying the tool call's `request_id` and `tool_name`. */
  logger?: Logger;
  /** Fallback text encoding when the response names no charset (e.g. `shift_jis`). */
  encoding?: string;
  /**
   * Whether a decoded 2xx answer may be stored in the cache (default: yes). Upstreams that
   * report errors inside HTTP 200 bodies (MediaWiki, ArcGIS) say no for those bodies.
   */
  cacheable?: (data: unknown) => boolean;
}

/** A decoded upstream answer. */
export interface UpstreamResponse<T> {
  status: number;
  contentType: string;
  data: T;
  /** The final URL, with secrets removed. */
  url: string;
  cache: "hit" | "miss" | "bypass" | "off";
  /** Seconds since the answer was fetched, on a cache hit. */
  ageS?: number;
  /** The response headers of a live answer (absent on a cache hit). */
  headers?: Headers;
}

interface RawResponse {
  status: number;
  contentType: string;
  body: Uint8Array;
  url: string;
  headers?: Headers;
}

const DEFAULT_MAX_BODY = 32 * 1024 * 1024;
const SNIPPET_BYTES = 4096;

/**
 * The one HTTP client every provider uses: deadline, retries with backoff and `Retry-After`,
 * circuit breaker, rate limit, response cache, size cap, decoding and one log line per attempt.
 */
export class HttpClient {
  #o: HttpClientOptions;
  #limiter: RateLimiter;

  constructor(options: HttpClientOptions) {
    this.#o = options;
    this.#limiter = new RateLimiter(options.rateLimits ?? [], options.runtime.clock);
  }

  /** The provider id this client serves. */
  get provider(): string {
    return this.#o.provider;
  }

  /** Resolves `path` against the base URL (an absolute URL is kept) and adds `query`. */
  url(path: string, query?: Record<string, QueryValue>): URL {
    const base = this.#o.baseUrl.endsWith("/") ? this.#o.baseUrl : `${this.#o.baseUrl}/`;
    const url = /^[a-z][a-z0-9+.-]*:/i.test(path) ? new URL(path) : new URL(path.replace(/^\/+/, ""), base);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) {
        for (const v of value) url.searchParams.append(key, String(v));
      } else {
        url.searchParams.set(key, String(value));
      }
    }
    return url;
  }

  /** Removes secret query values from a URL for logs and messages. */
  redact(url: URL | string): string {
    const u = new URL(String(url));
    for (const name of this.#o.secretParams ?? []) {
      if (u.searchParams.has(name)) u.searchParams.set(name, "***");
    }
    return u.toString();
  }

  /** GETs (or POSTs) and parses JSON; HTML or broken bodies become a `DECODE_ERROR`. */
  json<T = unknown>(path: string, options: RequestOptions = {}): Promise<UpstreamResponse<T>> {
    return this.#cached(path, options, (raw) => decodeJson<T>(raw, this.#o));
  }

  /** Fetches text, decoded by the response's charset, else `options.encoding`, else UTF-8. */
  text(path: string, options: RequestOptions = {}): Promise<UpstreamResponse<string>> {
    return this.#cached(path, options, (raw) => decodeText(raw, options.encoding, this.#o));
  }

  /** Fetches the raw bytes. */
  bytes(path: string, options: RequestOptions = {}): Promise<UpstreamResponse<Uint8Array>> {
    return this.#cached(path, options, (raw) => raw.body);
  }

  async #cached<T>(
    path: string,
    options: RequestOptions,
    decode: (raw: RawResponse) => T,
  ): Promise<UpstreamResponse<T>> {
    const url = this.url(path, options.query);
    const ttl = options.cacheTtlMs ?? this.#o.cacheTtlMs ?? 0;
    const { clock, cache } = this.#o.runtime;
    const key = `${options.method ?? "GET"} ${url} ${options.body ?? ""}`;
    const logger = options.logger ?? this.#o.runtime.logger;
    const fresh = options.fresh ?? requestScope.getStore()?.fresh ?? false;
    if (ttl > 0 && !fresh) {
      const hit = cache.get(key, clock.now());
      if (hit) {
        const ageS = Math.round((clock.now() - hit.storedAt) / 1000);
        logger.info("upstream", {
          provider: this.#o.provider,
          upstream_url: this.redact(url),
          status: hit.status,
          duration_ms: 0,
          attempt: 0,
          cache: "hit",
          age_s: ageS,
        });
        const raw = { ...hit, url: this.redact(url) };
        return {
          status: hit.status,
          contentType: hit.contentType,
          data: decode(raw),
          url: raw.url,
          cache: "hit",
          ageS,
        };
      }
    }
    const cacheState = ttl > 0 ? (fresh ? "bypass" : "miss") : "off";
    const raw = await this.#send(url, options, logger, cacheState);
    const data = decode(raw);
    if (ttl > 0 && (options.cacheable?.(data) ?? true)) {
      const now = clock.now();
      cache.set(key, {
        status: raw.status,
        contentType: raw.contentType,
        body: raw.body,
        storedAt: now,
        expiresAt: now + ttl,
      });
    }
    const out: UpstreamResponse<T> = {
      status: raw.status,
      contentType: raw.contentType,
      data,
      url: raw.url,
      cache: cacheState,
    };
    if (raw.headers) out.headers = raw.headers;
    return out;
  }

  async #send(
    url: URL,
    options: RequestOptions,
    logger: Logger,
    cacheState: string,
  ): Promise<RawResponse> {
    const { clock, random } = this.#o.runtime;
    const now = clock.now();
    const own = options.timeoutMs ?? this.#o.timeoutMs;
    // The tool call's deadline bounds every request it makes, retries and waits included.
    const callLeft = remainingMs(now);
    const deadline = now + Math.min(own, Math.max(0, callLeft));
    const timeoutError = (u: URL): UpstreamError => callLeft < own ? this.#callDeadline(u) : this.#timeout(u);
    const retriesUsed = new Map<string, number>();
    for (let attempt = 1;; attempt++) {
      const outcome = await this.#attempt(url, options, deadline, attempt, logger, cacheState, timeoutError);
      if (outcome.ok) return outcome.response;
      const { error, retryKey, retryAfterMs } = outcome;
      const used = retriesUsed.get(retryKey) ?? 0;
      const allowed = retryKey === "network"
        ? (this.#o.retry.retryNetworkErrors ? this.#o.retry.maxRetries : 0)
        : retriesFor(this.#o.retry, Number(retryKey));
      // Per-kind counts, and one total so a mix of 500s, 503s and resets cannot add up past it.
      if (!error.retryable || used >= allowed || attempt - 1 >= totalRetries(this.#o.retry)) throw error;
      retriesUsed.set(retryKey, used + 1);
      const wait = retryAfterMs ?? backoffDelay(this.#o.retry, attempt, random);
      if (clock.now() + wait >= deadline) {
        if (retryAfterMs !== undefined) {
          throw new UpstreamError(
            error.errorType,
            `${error.message}; it asked to retry after ${
              Math.ceil(wait / 1000)
            } s, past this call's deadline`,
            {
              provider: this.#o.provider,
              url: this.redact(url),
              retryable: true,
              retryAfterS: Math.ceil(wait / 1000),
              ...(error.status === undefined ? {} : { status: error.status }),
              hint: `Wait ${Math.ceil(wait / 1000)} seconds, then call again`,
            },
          );
        }
        throw error;
      }
      logger.debug("upstream retry", {
        provider: this.#o.provider,
        upstream_url: this.redact(url),
        attempt,
        wait_ms: wait,
      });
      try {
        await clock.sleep(wait, options.signal);
      } catch {
        throw this.#cancelled(url);
      }
    }
  }

  async #attempt(
    url: URL,
    options: RequestOptions,
    deadline: number,
    attempt: number,
    logger: Logger,
    cacheState: string,
    timeoutError: (url: URL) => UpstreamError,
  ): Promise<
    | { ok: true; response: RawResponse }
    | { ok: false; error: UpstreamError; retryKey: string; retryAfterMs?: number }
  > {
    const { clock, runtime } = { clock: this.#o.runtime.clock, runtime: this.#o.runtime };
    const safeUrl = this.redact(url);
    const fail = (error: UpstreamError, retryKey: string, retryAfterMs?: number) =>
      retryAfterMs === undefined
        ? { ok: false as const, error, retryKey }
        : { ok: false as const, error, retryKey, retryAfterMs };
    if (options.signal?.aborted) throw this.#cancelled(url);

    const breaker = runtime.breakerFor(url.host);
    const openFor = breaker.acquire(clock.now());
    if (openFor > 0) {
      const s = Math.ceil(openFor / 1000);
      throw new UpstreamError(
        "CIRCUIT_OPEN",
        `${this.#o.upstreamName} is failing repeatedly, so calls to ${url.host} are paused for ${s} s`,
        {
          provider: this.#o.provider,
          url: safeUrl,
          retryable: true,
          retryAfterS: s,
          hint: `Try again in ${s} seconds; the server checks the upstream again then`,
        },
      );
    }

    try {
      await this.#limiter.acquire(deadline, options.signal);
    } catch (e) {
      breaker.release();
      if (e instanceof RateLimitWaitError) {
        const s = Math.ceil(e.waitMs / 1000);
        throw new UpstreamError(
          "RATE_LIMITED",
          `The server's own request limit for ${this.#o.upstreamName} is reached`,
          {
            provider: this.#o.provider,
            url: safeUrl,
            retryable: true,
            retryAfterS: s,
            hint: `Wait ${s} seconds, then call again`,
          },
        );
      }
      throw this.#cancelled(url);
    }

    const remaining = deadline - clock.now();
    if (remaining <= 0) {
      breaker.release();
      throw timeoutError(url);
    }
    const timeout = AbortSignal.timeout(remaining);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const started = performance.now();
    const log = (fields: Record<string, unknown>): void => {
      const line = {
        provider: this.#o.provider,
        upstream_url: safeUrl,
        method: options.method ?? "GET",
        duration_ms: Math.round(performance.now() - started),
        attempt,
        cache: cacheState,
        ...fields,
      };
      if (fields["error"]) logger.warn("upstream", line);
      else logger.info("upstream", line);
    };

    let response: Response;
    let current = url;
    try {
      for (let redirects = 0;; redirects++) {
        await this.#o.checkUrl?.(current);
        response = await runtime.fetch(current, {
          method: options.method ?? "GET",
          headers: {
            "user-agent": runtime.userAgent,
            accept: "application/json, text/csv;q=0.9, */*;q=0.8",
            ...this.#o.headers,
            ...options.headers,
          },
          ...(options.body === undefined ? {} : { body: options.body }),
          redirect: "manual",
          signal,
        });
        const location = response.headers.get("location");
        if (response.status >= 300 && response.status < 400 && location) {
          await response.body?.cancel();
          if (redirects >= (this.#o.maxRedirects ?? 5)) {
            throw new UpstreamError("API_ERROR", `${this.#o.upstreamName} redirected too many times`, {
              provider: this.#o.provider,
              url: safeUrl,
            });
          }
          current = new URL(location, current);
          continue;
        }
        break;
      }
    } catch (e) {
      if (e instanceof UpstreamError) {
        breaker.release();
        log({ error: e.errorType });
        throw e;
      }
      if (options.signal?.aborted) {
        breaker.release();
        log({ error: "CANCELLED" });
        throw this.#cancelled(url);
      }
      // A URL refused by checkUrl surfaces as an SsrfError from the guard: the upstream did
      // nothing wrong, so it is not a breaker failure.
      if (e instanceof Error && e.name === "SsrfError") {
        breaker.release();
        log({ error: "URL_REFUSED" });
        throw new UpstreamError("VALIDATION_ERROR", e.message, {
          provider: this.#o.provider,
          url: safeUrl,
          cause: e,
        });
      }
      breaker.failure(clock.now());
      if (timeout.aborted) {
        log({ error: "TIMEOUT" });
        throw timeoutError(url);
      }
      log({ error: "TRANSPORT_ERROR" });
      return fail(this.#transport(url, e), "network");
    }

    const status = response.status;
    const contentType = response.headers.get("content-type") ?? "";
    const finalUrl = this.redact(current);

    if (status < 200 || status >= 300) {
      const snippet = await readSnippet(response);
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), clock.now());
      if (status === 429 || status >= 500) breaker.failure(clock.now());
      else breaker.success();
      log({ status, error: status === 429 ? "RATE_LIMITED" : "API_ERROR" });
      const retryable = this.#o.retry.retryStatuses.includes(status);
      const error = new UpstreamError(
        status === 429 ? "RATE_LIMITED" : "API_ERROR",
        `${this.#o.upstreamName} answered HTTP ${status}${reason(status)}`,
        {
          provider: this.#o.provider,
          url: finalUrl,
          status,
          retryable,
          body: snippet,
          contentType,
          ...(retryAfterMs === undefined ? {} : { retryAfterS: Math.ceil(retryAfterMs / 1000) }),
          hint: hintForStatus(status),
        },
      );
      return fail(error, String(status), retryAfterMs);
    }

    const max = this.#o.maxBodyBytes ?? DEFAULT_MAX_BODY;
    let body: Uint8Array;
    try {
      body = await readCapped(response, max);
    } catch (e) {
      if (e instanceof BodyTooLargeError) {
        breaker.success();
        log({ status, error: "DECODE_ERROR" });
        throw new UpstreamError(
          "DECODE_ERROR",
          `${this.#o.upstreamName} sent more than ${formatBytes(max)}, the most this server reads`,
          {
            provider: this.#o.provider,
            url: finalUrl,
            status,
            hint: "Ask for less: a smaller limit, a narrower filter or a shorter date range",
          },
        );
      }
      if (options.signal?.aborted) {
        breaker.release();
        throw this.#cancelled(url);
      }
      breaker.failure(clock.now());
      if (timeout.aborted) {
        log({ status, error: "TIMEOUT" });
        throw timeoutError(url);
      }
      log({ status, error: "TRANSPORT_ERROR" });
      return fail(this.#transport(url, e, "while the body was being read"), "network");
    }
    breaker.success();
    log({ status, bytes: body.byteLength });
    return { ok: true, response: { status, contentType, body, url: finalUrl, headers: response.headers } };
  }

  #cancelled(url: URL): UpstreamError {
    return new UpstreamError("CANCELLED", "The call was cancelled by the client", {
      provider: this.#o.provider,
      url: this.redact(url),
    });
  }

  #timeout(url: URL): UpstreamError {
    const s = Math.round(this.#o.timeoutMs / 100) / 10;
    return new UpstreamError(
      "TIMEOUT",
      `${this.#o.upstreamName} did not answer within the ${s} s deadline`,
      {
        provider: this.#o.provider,
        url: this.redact(url),
        retryable: true,
        hint: "Try again, perhaps with a smaller request; the upstream may be slow right now",
      },
    );
  }

  #callDeadline(url: URL): UpstreamError {
    return new UpstreamError(
      "TIMEOUT",
      `${this.#o.upstreamName} did not answer before this tool call's deadline`,
      {
        provider: this.#o.provider,
        url: this.redact(url),
        retryable: true,
        hint:
          "Ask for less in one call (a smaller limit, a narrower area or date range) or continue from the " +
          "last cursor or offset",
      },
    );
  }

  #transport(url: URL, cause: unknown, when = ""): UpstreamError {
    return new UpstreamError(
      "TRANSPORT_ERROR",
      `Could not reach ${this.#o.upstreamName}${when ? ` (${when})` : ""}: ${
        networkReason(cause, url.hostname)
      }`,
      {
        provider: this.#o.provider,
        url: this.redact(url),
        retryable: true,
        cause,
        hint: "This is usually temporary: try again in a moment",
      },
    );
  }
}

class BodyTooLargeError extends Error {}

/**
 * A short reason for a network failure, read from the innermost cause (Deno's fetch says only
 * "fetch failed" and keeps the detail in `cause`), without URLs.
 */
export function networkReason(error: unknown, host: string): string {
  const messages: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    messages.push(e.message);
  }
  const all = messages.join(" | ").toLowerCase();
  if (/dns error|failed to lookup|name or service not known|nodename nor servname/.test(all)) {
    return `the name "${host}" could not be resolved (no network, or a DNS problem)`;
  }
  if (/connection refused/.test(all)) return `the connection to "${host}" was refused`;
  if (/connection reset|broken pipe|unexpected eof|connection closed/.test(all)) {
    return "the connection was closed unexpectedly";
  }
  if (/certificate|tls|ssl/.test(all)) return `the TLS handshake with "${host}" failed`;
  if (/timed out|timeout/.test(all)) return "the connection timed out";
  const last = messages[messages.length - 1] ?? String(error);
  return last.replace(/https?:\/\/\S+/g, "<url>").replace(/\s+/g, " ").slice(0, 200);
}

/** The most retries one call makes, whatever mix of failures it meets. */
function totalRetries(policy: RetryPolicy): number {
  return Math.max(policy.maxRetries, ...Object.values(policy.statusMaxRetries ?? {}));
}

async function readCapped(response: Response, max: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared > max) {
    await response.body?.cancel();
    throw new BodyTooLargeError();
  }
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new BodyTooLargeError();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

async function readSnippet(response: Response): Promise<string> {
  try {
    const bytes = await readCapped(response, SNIPPET_BYTES);
    return new TextDecoder().decode(bytes);
  } catch {
    await response.body?.cancel().catch(() => {});
    return "";
  }
}

function decodeText(raw: RawResponse, fallback: string | undefined, o: HttpClientOptions): string {
  const charset = /charset=["']?([\w-]+)/i.exec(raw.contentType)?.[1] ?? fallback ?? "utf-8";
  try {
    return new TextDecoder(charset, { fatal: true }).decode(raw.body);
  } catch {
    throw new UpstreamError(
      "DECODE_ERROR",
      `${o.upstreamName} sent text that is not valid ${charset}`,
      { provider: o.provider, url: raw.url, status: raw.status },
    );
  }
}

function decodeJson<T>(raw: RawResponse, o: HttpClientOptions): T {
  const text = new TextDecoder().decode(raw.body);
  const ct = raw.contentType.toLowerCase();
  const looksHtml = ct.includes("html") || /^\s*<(!doctype|html)/i.test(text);
  if (looksHtml) {
    throw new UpstreamError(
      "DECODE_ERROR",
      `${o.upstreamName} returned an HTML page instead of JSON (HTTP ${raw.status})`,
      {
        provider: o.provider,
        url: raw.url,
        status: raw.status,
        retryable: false,
        hint: "The upstream may be down for maintenance or behind a captive page; try again later",
      },
    );
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, "")) as T;
  } catch {
    throw new UpstreamError(
      "DECODE_ERROR",
      text.trim() === ""
        ? `${o.upstreamName} returned an empty body where JSON was expected`
        : `${o.upstreamName} returned a body that is not valid JSON (it may have been cut off)`,
      {
        provider: o.provider,
        url: raw.url,
        status: raw.status,
        retryable: false,
        hint: "Try again; if it persists the upstream is sending broken data",
      },
    );
  }
}

function reason(status: number): string {
  const reasons: Record<number, string> = {
    400: " Bad Request",
    401: " Unauthorized",
    403: " Forbidden",
    404: " Not Found",
    429: " Too Many Requests",
    500: " Internal Server Error",
    502: " Bad Gateway",
    503: " Service Unavailable",
    504: " Gateway Timeout",
  };
  return reasons[status] ?? "";
}

function hintForStatus(status: number): string {
  if (status === 429) return "The upstream is rate limiting: wait, then call again";
  if (status >= 500) return "The upstream is having trouble: try again in a moment";
  if (status === 404) return "Check the identifier; search first to find a valid one";
  if (status === 401 || status === 403) return "The upstream refused access; check credentials";
  return "Check the arguments against the tool's description";
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MiB` : `${Math.round(n / 1024)} KiB`;
}
