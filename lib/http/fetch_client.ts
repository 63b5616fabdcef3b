// HttpClient, the one HTTP client every provider uses (docs/ARCHITECTURE.md has its behaviour).
// Longer than the 500 lines the house keeps to, on purpose: one call's path (cache, rate limit,
// breaker, attempts with retries and backoff, redirects hop by hop under the SSRF guard, the body
// cap, logs, metrics and traces) is one sequence over the client's private options and state, and
// split across modules it would have to hand that state around. The parts that stand alone are
// apart: decoding (decode.ts), failure verdicts and wording (failures.ts), retry policy (retry.ts),
// breakers, rate limits and cache (breaker.ts, rate_limiter.ts, cache.ts).
import type { Clock, Random } from "../clock.ts";
import { UpstreamError } from "../errors.ts";
import { BodyTooLargeError, readCapped } from "./_body.ts";
import type { Logger } from "../log.ts";
import type { BreakerGate, BreakerOptions, EndpointBreaker } from "./breaker.ts";
import type { CacheStore } from "./cache.ts";
import { declaredEndpoint, endpointFamily } from "./endpoint.ts";
import { RateLimiter, RateLimitWaitError } from "./rate_limiter.ts";
import type { RateLimit, RateWindowStore } from "./rate_limiter.ts";
import { remainingMs, requestScope } from "./request_scope.ts";
import type { UpstreamCall } from "./request_scope.ts";
import { backoffDelay, parseRetryAfter, retriesFor } from "./retry.ts";
import type { RetryPolicy } from "./retry.ts";
import { addressReason, ssrfGuard } from "./ssrf.ts";
import type { HostResolver, UrlCheck } from "./ssrf.ts";
import { metrics } from "../metrics/mod.ts";
import type { RawResponse } from "./decode.ts";
import { decodeJson, decodeText, formatBytes, readSnippet } from "./decode.ts";
import { describeFailure, hintForStatus, networkReason, reason, verdictOf } from "./failures.ts";
import type { Verdict } from "./failures.ts";
import { tracing } from "../metrics/tracing.ts";
import type { UpstreamSpan } from "../metrics/tracing.ts";

/** Query parameter values; `undefined` and `null` are left out, arrays repeat the key. */
export type QueryValue = string | number | boolean | undefined | null | readonly (string | number)[];

export type { UrlCheck } from "./ssrf.ts";
export { networkReason } from "./failures.ts";

/** Everything one provider's client needs. */
export interface HttpClientOptions {
  /** Provider id, used in errors, logs and breaker keys. */
  provider: string;
  /** Human name of the upstream, used in messages ("FRED API"). */
  upstreamName: string;
  /** Base URL that relative paths resolve against; its origin is the one redirects may stay on. */
  baseUrl: string;
  /**
   * The endpoint families the metrics name, below the base URL (`*` matches one segment): any
   * other family counts as `other`, so a caller-chosen path segment never becomes a label.
   * Absent: each family is its own label, up to a fixed number per provider (lib/metrics).
   */
  endpoints?: readonly string[];
  /** The deadline of one call, covering every retry. */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Shared clock, randomness, logger, breakers, rate windows and cache. */
  runtime: HttpRuntimeParts;
  /** Client-side request rate limits (sliding windows, see rate_limiter.ts). */
  rateLimits?: readonly RateLimit[];
  /** How long a successful answer is reused; 0 disables the cache. */
  cacheTtlMs?: number;
  /** The largest body accepted, counted after decompression. */
  maxBodyBytes?: number;
  /** The circuit breaker of each endpoint family; default: the runtime's. */
  breaker?: BreakerOptions;
  /** Query parameters whose values never reach a log, an error or another origin (e.g. `api_key`). */
  secretParams?: readonly string[];
  /** Request headers never sent to another origin (`authorization`, `proxy-authorization` and `cookie` always). */
  secretHeaders?: readonly string[];
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  /**
   * Called for every URL before it is fetched, redirect targets included, after the built-in
   * SSRF guard and redirect policy. A provider's own rule (e.g. "stay on this host").
   */
  checkUrl?: UrlCheck;
  /**
   * Origins besides the base URL's that redirects may lead to (e.g. sister sites). Secret
   * parameters and headers are removed before such a hop.
   */
  redirectOrigins?: readonly string[];
  /** Redirects followed at most. */
  maxRedirects?: number;
  /**
   * Reads the upstream's own message id from an error body (the BOJ's `MESSAGEID`), so the
   * error, and the circuit breaker's memory of it, carry it.
   */
  messageIdOf?: (body: string) => string | undefined;
  /** The licence of this upstream's data, named in the provenance of every answer that used it. */
  licence?: string;
}

/** The parts every client of a process shares (see HttpRuntime). */
export interface HttpRuntimeParts {
  clock: Clock;
  random: Random;
  logger: Logger;
  cache: CacheStore;
  rateWindows: RateWindowStore;
  userAgent: string;
  /** Name resolution for the SSRF guard; undefined: the system's. */
  resolve?: HostResolver | undefined;
  breakerFor(key: string, options?: BreakerOptions): EndpointBreaker;
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

const DEFAULT_MAX_BODY = 16 * 1024 * 1024;
/** Statuses whose `Location` is followed (fetch's own list). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: never sent to another origin. */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];

/** What became of one attempt. */
type Attempt =
  | { ok: true; response: RawResponse }
  | { ok: false; error: UpstreamError; retryKey: string; retryAfterMs?: number };

/** A failed attempt the retry loop may retry, counted under `retryKey` (a status, or "network"). */
function failed(error: UpstreamError, retryKey: string, retryAfterMs?: number): Attempt {
  return retryAfterMs === undefined
    ? { ok: false as const, error, retryKey }
    : { ok: false as const, error, retryKey, retryAfterMs };
}

/** What classifying how an attempt ended needs: its URL and options, its timeout, its log line. */
interface AttemptEnding {
  url: URL;
  options: RequestOptions;
  /** Aborts when the attempt's share of the deadline is used up. */
  timeout: AbortSignal;
  timeoutError: (url: URL) => UpstreamError;
  log: (fields: Record<string, unknown>) => void;
}

/**
 * The one HTTP client every provider uses: deadline, retries with backoff and `Retry-After`,
 * a circuit breaker per endpoint, sliding-window rate limits, response cache, a body cap
 * counted after decompression, the SSRF guard and redirect policy on every hop, decoding and
 * one log line per attempt.
 */
export class HttpClient {
  #o: HttpClientOptions;
  #limiter: RateLimiter;
  /** Origins this client may fetch without the SSRF checks and redirect to: configuration. */
  #configured: Set<string>;
  #guard: UrlCheck;

  constructor(options: HttpClientOptions) {
    this.#o = options;
    const base = originOrUndefined(options.baseUrl);
    this.#configured = new Set(
      [base, ...(options.redirectOrigins ?? []).map(originOrUndefined)].filter((o): o is string =>
        o !== undefined
      ),
    );
    this.#limiter = new RateLimiter(options.rateLimits ?? [], options.runtime.clock, {
      store: options.runtime.rateWindows,
      key: `${options.provider} ${base ?? options.baseUrl}`,
    });
    const resolve = options.runtime.resolve;
    this.#guard = ssrfGuard({ trustedOrigins: [...this.#configured], ...(resolve ? { resolve } : {}) });
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

  /** The circuit-breaker key of a URL: provider, host and path family. */
  breakerKey(url: URL): string {
    return `${this.#o.provider} ${endpointFamily(url, this.#o.baseUrl)}`;
  }

  /** GETs (or POSTs) and parses JSON; HTML or broken bodies become a `DECODE_ERROR`. */
  json<T = unknown>(path: string, options: RequestOptions = {}): Promise<UpstreamResponse<T>> {
    const clock = this.#o.runtime.clock;
    // A big body is decoded in slices; the call's cancellation and deadline stop it in between.
    const deadline = requestScope.getStore()?.deadline;
    return this.#cached(path, options, (raw) =>
      decodeJson<T>(raw, this.#o, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(deadline === undefined ? {} : { deadline }),
        now: () => clock.now(),
      }));
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
    decode: (raw: RawResponse) => T | Promise<T>,
  ): Promise<UpstreamResponse<T>> {
    const url = this.url(path, options.query);
    const ttl = options.cacheTtlMs ?? this.#o.cacheTtlMs ?? 0;
    const { clock, cache } = this.#o.runtime;
    const key = `${options.method ?? "GET"} ${url} ${options.body ?? ""}`;
    const logger = options.logger ?? this.#o.runtime.logger;
    const fresh = options.fresh ?? requestScope.getStore()?.fresh ?? false;
    if (ttl > 0 && !fresh) {
      const hit = await cache.get(key, clock.now());
      metrics?.cacheLookups.inc(1, this.#o.provider, hit ? "hit" : "miss");
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
        await this.#recordCall(url, options, raw.body, hit.storedAt, hit.status, "hit");
        return {
          status: hit.status,
          contentType: hit.contentType,
          data: await decode(raw),
          url: raw.url,
          cache: "hit",
          ageS,
        };
      }
    }
    const cacheState = ttl > 0 ? (fresh ? "bypass" : "miss") : "off";
    if (cacheState === "bypass") metrics?.cacheLookups.inc(1, this.#o.provider, "bypass");
    const raw = await this.#send(url, options, logger, cacheState);
    const retrievedAt = clock.now();
    const data = await decode(raw);
    await this.#recordCall(url, options, raw.body, retrievedAt, raw.status, cacheState);
    if (ttl > 0 && (options.cacheable?.(data) ?? true)) {
      const now = clock.now();
      await cache.set(key, {
        status: raw.status,
        contentType: raw.contentType,
        body: raw.body,
        storedAt: now,
        expiresAt: now + ttl,
      });
      metrics?.cacheStoredBytes.inc(raw.body.byteLength, this.#o.provider);
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

  /**
   * Writes the answer down in the tool call's record (when the call keeps one), for the
   * provenance the core adds to the answer: the request with secrets left out, and the SHA-256
   * of the body received.
   */
  async #recordCall(
    url: URL,
    options: RequestOptions,
    body: Uint8Array,
    retrievedAt: number,
    status: number,
    cache: UpstreamCall["cache"],
  ): Promise<void> {
    const record = requestScope.getStore()?.record;
    if (!record) return;
    const digest = await crypto.subtle.digest("SHA-256", body as Uint8Array<ArrayBuffer>);
    const secrets = (this.#o.secretParams ?? []).filter((name) => url.searchParams.has(name));
    const call: UpstreamCall = {
      provider: this.#o.provider,
      source: this.#o.upstreamName,
      method: options.method ?? "GET",
      url: this.redact(url),
      secrets,
      sha256: [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join(""),
      retrievedAt,
      status,
      cache,
    };
    if (options.body !== undefined) call.body = options.body;
    if (this.#o.licence !== undefined) call.licence = this.#o.licence;
    record.calls.push(call);
  }

  /** The metrics label of an endpoint family: declared, or bounded per provider (lib/metrics). */
  #label(endpoint: string): string {
    const declared = this.#o.endpoints;
    const label = declared ? declaredEndpoint(endpoint, this.#o.baseUrl, declared) : endpoint;
    return metrics?.endpointLabel(this.#o.provider, label, endpoint) ?? label;
  }

  /**
   * One call: asks the endpoint's breaker once, makes the attempts, and tells the breaker one
   * verdict for the whole call (retries are not separate failures).
   */
  async #send(
    url: URL,
    options: RequestOptions,
    logger: Logger,
    cacheState: string,
  ): Promise<RawResponse> {
    const { clock, runtime } = { clock: this.#o.runtime.clock, runtime: this.#o.runtime };
    const now = clock.now();
    const own = options.timeoutMs ?? this.#o.timeoutMs;
    // The tool call's deadline bounds every request it makes, retries and waits included.
    const callLeft = remainingMs(now);
    const deadline = now + Math.min(own, Math.max(0, callLeft));
    const callBound = callLeft < own;
    if (options.signal?.aborted) throw this.#cancelled(url);

    const endpoint = endpointFamily(url, this.#o.baseUrl);
    const breaker = runtime.breakerFor(`${this.#o.provider} ${endpoint}`, this.#o.breaker);
    const gate = await breaker.acquire(now);
    if (gate.waitMs > 0) {
      metrics?.breakerRejections.inc(1, this.#o.provider, this.#label(endpoint));
      throw this.#circuitOpen(url, breaker.key, gate);
    }
    if (gate.trial) {
      metrics?.breakerTransitions.inc(1, this.#o.provider, this.#label(endpoint), "half_open");
      logger.info("circuit breaker half-open: one trial call goes out", {
        provider: this.#o.provider,
        endpoint,
      });
    }

    let verdict: Verdict = { kind: "none" };
    try {
      const response = await this.#attempts(url, options, deadline, callBound, logger, cacheState, endpoint);
      verdict = { kind: "success" };
      return response;
    } catch (e) {
      verdict = verdictOf(e, callBound);
      throw e;
    } finally {
      await this.#record(breaker, verdict, logger, endpoint, gate.trial === true);
    }
  }

  async #record(
    breaker: EndpointBreaker,
    verdict: Verdict,
    logger: Logger,
    endpoint: string,
    trial: boolean,
  ): Promise<void> {
    const provider = this.#o.provider;
    try {
      if (verdict.kind === "success") {
        await breaker.success();
        if (trial) {
          metrics?.breakerTransitions.inc(1, provider, this.#label(endpoint), "closed");
          logger.warn("circuit breaker closed: the upstream answers again", { provider, endpoint });
        }
      } else if (verdict.kind === "failure") {
        const opened = await breaker.failure(this.#o.runtime.clock.now(), verdict.last);
        if (opened) {
          const options = this.#o.breaker;
          metrics?.breakerTransitions.inc(1, provider, this.#label(endpoint), "open");
          logger.warn("circuit breaker opened: calls to this endpoint are paused", {
            provider,
            endpoint,
            error_type: verdict.last.errorType,
            ...(verdict.last.status === undefined ? {} : { status: verdict.last.status }),
            ...(options ? { threshold: options.threshold, cooldown_s: options.cooldownMs / 1000 } : {}),
            trial_failed: trial,
          });
        }
      } else await breaker.release();
    } catch (e) {
      // A breaker store that fails (a shared one out of reach) must not fail the call itself.
      logger.warn("circuit breaker store failed", { provider: this.#o.provider, error: String(e) });
    }
  }

  async #attempts(
    url: URL,
    options: RequestOptions,
    deadline: number,
    callBound: boolean,
    logger: Logger,
    cacheState: string,
    endpoint: string,
  ): Promise<RawResponse> {
    const { clock, random } = this.#o.runtime;
    const timeoutError = (u: URL): UpstreamError => callBound ? this.#callDeadline(u) : this.#timeout(u);
    const retriesUsed = new Map<string, number>();
    for (let attempt = 1;; attempt++) {
      const outcome = tracing
        ? await this.#tracedAttempt(
          url,
          options,
          deadline,
          attempt,
          logger,
          cacheState,
          timeoutError,
          endpoint,
        )
        : await this.#attempt(url, options, deadline, attempt, logger, cacheState, timeoutError, endpoint);
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
              ...(error.messageId === undefined ? {} : { messageId: error.messageId }),
              ...(error.body === undefined ? {} : { body: error.body }),
              hint: `Wait ${Math.ceil(wait / 1000)} seconds, then call again`,
            },
          );
        }
        throw error;
      }
      metrics?.upstreamRetries.inc(1, this.#o.provider, this.#label(endpoint), retryKey);
      logger.info("upstream retry", {
        provider: this.#o.provider,
        upstream_url: this.redact(url),
        attempt,
        next_attempt: attempt + 1,
        ...(error.status === undefined ? {} : { status: error.status }),
        error_type: error.errorType,
        wait_ms: wait,
        backoff_from: retryAfterMs === undefined ? "policy" : "retry-after",
      });
      try {
        await clock.sleep(wait, options.signal);
      } catch {
        throw this.#cancelled(url);
      }
    }
  }

  /** One attempt inside an OpenTelemetry client span (only when tracing is on). */
  #tracedAttempt(
    url: URL,
    options: RequestOptions,
    deadline: number,
    attempt: number,
    logger: Logger,
    cacheState: string,
    timeoutError: (url: URL) => UpstreamError,
    endpoint: string,
  ): Promise<Attempt> {
    const requestId = requestScope.getStore()?.requestId;
    return tracing!.upstream(`${options.method ?? "GET"} ${this.#o.provider}`, {
      "http.request.method": options.method ?? "GET",
      "url.full": this.redact(url),
      "server.address": url.hostname,
      "opendata.provider": this.#o.provider,
      "opendata.endpoint": endpoint,
      "opendata.attempt": attempt,
      ...(requestId ? { "opendata.request_id": requestId } : {}),
    }, async (span) => {
      const outcome = await this.#attempt(
        url,
        options,
        deadline,
        attempt,
        logger,
        cacheState,
        timeoutError,
        endpoint,
        span,
      );
      if (outcome.ok) span.set("http.response.status_code", outcome.response.status);
      else {
        if (outcome.error.status !== undefined) span.set("http.response.status_code", outcome.error.status);
        span.fail(outcome.error.errorType);
      }
      return outcome;
    });
  }

  /**
   * One request and its answer: a rate-limit slot, the request (redirects followed hop by hop),
   * then the status and the body, each failure classified for the retry loop; one log line.
   */
  async #attempt(
    url: URL,
    options: RequestOptions,
    deadline: number,
    attempt: number,
    logger: Logger,
    cacheState: string,
    timeoutError: (url: URL) => UpstreamError,
    endpoint: string,
    span?: UpstreamSpan,
  ): Promise<Attempt> {
    if (options.signal?.aborted) throw this.#cancelled(url);
    await this.#reserveSlot(url, deadline, { signal: options.signal, logger, endpoint, span });
    const remaining = deadline - this.#o.runtime.clock.now();
    if (remaining <= 0) throw timeoutError(url);
    const timeout = AbortSignal.timeout(remaining);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const log = this.#attemptLog(url, options, { attempt, cacheState, endpoint, logger });
    const ending: AttemptEnding = { url, options, timeout, timeoutError, log };
    let sent: { response: Response; current: URL };
    try {
      sent = await this.#fetchFollowing(url, options, signal, logger);
    } catch (e) {
      return this.#requestFailure(e, ending);
    }
    const { response, current } = sent;
    if (response.status < 200 || response.status >= 300) {
      return await this.#statusFailure(response, current, log);
    }
    return await this.#readAnswer(response, current, ending);
  }

  /** Waits for this provider's rate-limit slot; a slot past the deadline is refused at once (RATE_LIMITED). */
  async #reserveSlot(
    url: URL,
    deadline: number,
    at: { signal: AbortSignal | undefined; logger: Logger; endpoint: string; span: UpstreamSpan | undefined },
  ): Promise<void> {
    try {
      const waited = await this.#limiter.acquire(deadline, at.signal);
      if (waited > 0 && metrics) {
        metrics.rateLimitWaits.inc(1, this.#o.provider);
        metrics.rateLimitWaitSeconds.inc(waited / 1000, this.#o.provider);
      }
    } catch (e) {
      if (e instanceof RateLimitWaitError) {
        metrics?.rateLimitRefusals.inc(1, this.#o.provider);
        at.span?.fail("RATE_LIMITED");
        at.logger.warn("rate limit refused an upstream request: its slot is past the call's deadline", {
          provider: this.#o.provider,
          endpoint: at.endpoint,
          wait_ms: e.waitMs,
        });
        throw this.#rateLimited(url, e.waitMs);
      }
      throw this.#cancelled(url);
    }
  }

  /** The attempt's one log line (and its metrics), timed from now: `fields` say how it ended. */
  #attemptLog(
    url: URL,
    options: RequestOptions,
    at: { attempt: number; cacheState: string; endpoint: string; logger: Logger },
  ): (fields: Record<string, unknown>) => void {
    const safeUrl = this.redact(url);
    const started = performance.now();
    return (fields) => {
      if (metrics) {
        const outcome = fields["status"] ?? fields["error"];
        const label = this.#label(at.endpoint);
        metrics.upstreamRequests.inc(1, this.#o.provider, label, String(outcome));
        metrics.upstreamDuration.observe((performance.now() - started) / 1000, this.#o.provider, label);
      }
      const line = {
        provider: this.#o.provider,
        upstream_url: safeUrl,
        method: options.method ?? "GET",
        duration_ms: Math.round(performance.now() - started),
        attempt: at.attempt,
        cache: at.cacheState,
        ...fields,
      };
      if (fields["error"]) at.logger.warn("upstream", line);
      else at.logger.info("upstream", line);
    };
  }

  /**
   * Sends the request and follows redirects by hand: each hop vetted (#checkHop), secrets kept
   * from other origins, a 303 (or a 301/302 after POST) turned into a GET without the body.
   */
  async #fetchFollowing(
    url: URL,
    options: RequestOptions,
    signal: AbortSignal,
    logger: Logger,
  ): Promise<{ response: Response; current: URL }> {
    let response: Response;
    let current = url;
    await this.#checkFirst(url);
    let method: string = options.method ?? "GET";
    let body = options.body;
    let headers: Record<string, string> = {
      "user-agent": this.#o.runtime.userAgent,
      accept: "application/json, text/csv;q=0.9, */*;q=0.8",
      ...this.#o.headers,
      ...options.headers,
    };
    for (let redirects = 0;; redirects++) {
      const init: RequestInit = {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: "manual",
        signal,
      };
      const target = current;
      response = await (tracing
        ? tracing.quiet(() =>
          this.#o.runtime.fetch(target, init)
        )
        : this.#o.runtime.fetch(current, init));
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || location === null) break;
      await response.body?.cancel().catch(() => {});
      if (redirects >= (this.#o.maxRedirects ?? 5)) {
        throw new UpstreamError("API_ERROR", `${this.#o.upstreamName} redirected too many times`, {
          provider: this.#o.provider,
          url: this.redact(url),
          status: response.status,
        });
      }
      const next = await this.#checkHop(url, current, location, response.status);
      if (next.origin !== current.origin) {
        // Allowed, but elsewhere: secrets stay with the origin they were meant for.
        for (const name of this.#o.secretParams ?? []) next.searchParams.delete(name);
        headers = withoutHeaders(headers, [...CREDENTIAL_HEADERS, ...(this.#o.secretHeaders ?? [])]);
      }
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === "POST")
      ) {
        // As browsers and fetch do: the redirected request is a GET without the body.
        method = "GET";
        body = undefined;
        headers = withoutHeaders(headers, ["content-type"]);
      }
      logger.debug("upstream redirect", {
        provider: this.#o.provider,
        upstream_url: this.redact(current),
        status: response.status,
        location: this.redact(next),
      });
      current = next;
    }
    return { response, current };
  }

  /** A request that got no answer: thrown where no retry can help, else a network failure to retry. */
  #requestFailure(e: unknown, ending: AttemptEnding): Attempt {
    const { url, options, timeout, timeoutError, log } = ending;
    if (e instanceof UpstreamError) {
      log({ error: e.errorType });
      throw e;
    }
    if (options.signal?.aborted) {
      log({ error: "CANCELLED" });
      throw this.#cancelled(url);
    }
    // A URL refused by the SSRF guard or checkUrl: the upstream did nothing wrong, the URL did.
    if (e instanceof Error && e.name === "SsrfError") {
      log({ error: "URL_REFUSED" });
      throw new UpstreamError("VALIDATION_ERROR", e.message, {
        provider: this.#o.provider,
        url: this.redact(url),
        cause: e,
      });
    }
    if (timeout.aborted) {
      log({ error: "TIMEOUT" });
      throw timeoutError(url);
    }
    log({ error: "TRANSPORT_ERROR" });
    return failed(this.#transport(url, e), "network");
  }

  /** An answer with a status outside 2xx: RATE_LIMITED (429) or API_ERROR, retryable as the policy says. */
  async #statusFailure(
    response: Response,
    current: URL,
    log: (fields: Record<string, unknown>) => void,
  ): Promise<Attempt> {
    const status = response.status;
    const contentType = response.headers.get("content-type") ?? "";
    const snippet = await readSnippet(response);
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), this.#o.runtime.clock.now());
    log({ status, error: status === 429 ? "RATE_LIMITED" : "API_ERROR" });
    const retryable = this.#o.retry.retryStatuses.includes(status);
    const messageId = snippet ? this.#messageId(snippet) : undefined;
    const error = new UpstreamError(
      status === 429 ? "RATE_LIMITED" : "API_ERROR",
      `${this.#o.upstreamName} answered HTTP ${status}${reason(status)}`,
      {
        provider: this.#o.provider,
        url: this.redact(current),
        status,
        retryable,
        body: snippet,
        contentType,
        ...(messageId === undefined ? {} : { messageId }),
        ...(retryAfterMs === undefined ? {} : { retryAfterS: Math.ceil(retryAfterMs / 1000) }),
        hint: hintForStatus(status),
      },
    );
    return failed(error, String(status), retryAfterMs);
  }

  /** A 2xx answer's body, read up to the cap (counted after decompression). */
  async #readAnswer(response: Response, current: URL, ending: AttemptEnding): Promise<Attempt> {
    const { url, options, timeout, timeoutError, log } = ending;
    const status = response.status;
    const contentType = response.headers.get("content-type") ?? "";
    const finalUrl = this.redact(current);
    const max = this.#o.maxBodyBytes ?? DEFAULT_MAX_BODY;
    let body: Uint8Array;
    try {
      body = await readCapped(response, max);
    } catch (e) {
      if (e instanceof BodyTooLargeError) {
        log({ status, error: "DECODE_ERROR", body_cap_bytes: max });
        throw new UpstreamError(
          "DECODE_ERROR",
          `${this.#o.upstreamName} sent more than ${
            formatBytes(max)
          } (counted after decompression), the most this server reads from it`,
          {
            provider: this.#o.provider,
            url: finalUrl,
            status,
            hint: "Ask for less: a smaller limit, a narrower filter or a shorter date range " +
              `(the operator can raise providers.${this.#o.provider}.max_body_mb)`,
          },
        );
      }
      if (options.signal?.aborted) throw this.#cancelled(url);
      if (timeout.aborted) {
        log({ status, error: "TIMEOUT" });
        throw timeoutError(url);
      }
      log({ status, error: "TRANSPORT_ERROR" });
      return failed(this.#transport(url, e, "while the body was being read"), "network");
    }
    log({ status, bytes: body.byteLength });
    return { ok: true, response: { status, contentType, body, url: finalUrl, headers: response.headers } };
  }

  /** The first URL of an attempt: the SSRF guard (configured origins pass), then the provider's check. */
  async #checkFirst(url: URL): Promise<void> {
    await this.#guard(url);
    await this.#o.checkUrl?.(url);
  }

  /**
   * Vets a redirect and returns its target. Only configured origins (the base URL's, and those
   * the provider lists) are followed; anything else is refused before it is contacted.
   */
  async #checkHop(url: URL, from: URL, location: string, status: number): Promise<URL> {
    const refuse = (why: string): UpstreamError =>
      new UpstreamError(
        "UPSTREAM_REDIRECT_REFUSED",
        `${this.#o.upstreamName} redirected to ${why}, which this server does not follow`,
        {
          provider: this.#o.provider,
          url: this.redact(url),
          status,
          retryable: false,
          hint: "The upstream sent the request somewhere this server does not go: only its configured " +
            `base URL's origin is followed. If the service has moved, set providers.${this.#o.provider}.base_url ` +
            "to its new address; otherwise try again later",
        },
      );
    let next: URL;
    try {
      next = new URL(location, from);
    } catch {
      throw refuse("an address that is not a valid URL");
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") {
      throw refuse(`a "${next.protocol.replace(/:$/, "")}" URL`);
    }
    if (!this.#configured.has(next.origin)) {
      const literal = addressReason(next.hostname);
      const where = next.host === from.host
        ? `another origin ("${next.origin}")`
        : `another host ("${next.host}")`;
      throw refuse(literal ? `${where}: "${next.hostname}" is ${literal}` : where);
    }
    try {
      await this.#guard(next);
      await this.#o.checkUrl?.(next);
    } catch (e) {
      if (e instanceof Error && e.name === "SsrfError") throw refuse(`a refused address (${e.message})`);
      throw e;
    }
    return next;
  }

  #messageId(body: string): string | undefined {
    try {
      return this.#o.messageIdOf?.(body) || undefined;
    } catch {
      return undefined;
    }
  }

  #circuitOpen(url: URL, key: string, gate: BreakerGate): UpstreamError {
    const s = Math.max(1, Math.ceil(gate.waitMs / 1000));
    const last = gate.last;
    const endpoint = key.slice(this.#o.provider.length + 1);
    const lastText = last ? ` (last failure: ${describeFailure(last)})` : "";
    return new UpstreamError(
      "CIRCUIT_OPEN",
      `${this.#o.upstreamName} is failing repeatedly${lastText}, so calls to "${endpoint}" are paused for ${s} s`,
      {
        provider: this.#o.provider,
        url: this.redact(url),
        retryable: true,
        retryAfterS: s,
        ...(last?.status === undefined ? {} : { status: last.status }),
        ...(last?.messageId === undefined ? {} : { messageId: last.messageId }),
        ...(last ? { lastErrorType: last.errorType } : {}),
        hint: `Try again in ${s} seconds; the server checks the upstream again then`,
      },
    );
  }

  #rateLimited(url: URL, waitMs: number): UpstreamError {
    const s = Math.max(1, Math.ceil(waitMs / 1000));
    return new UpstreamError(
      "RATE_LIMITED",
      `The server's own request limit for ${this.#o.upstreamName} is reached: the next free slot is in ${s} s, ` +
        "past this call's deadline",
      {
        provider: this.#o.provider,
        url: this.redact(url),
        retryable: true,
        retryAfterS: s,
        hint: `Wait ${s} seconds, then call again`,
      },
    );
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

function withoutHeaders(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop.has(k.toLowerCase())));
}

function originOrUndefined(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    // A base URL template such as https://{lang}.wikipedia.org names no single origin.
    return undefined;
  }
}

/** The most retries one call makes, whatever mix of failures it meets. */
function totalRetries(policy: RetryPolicy): number {
  return Math.max(policy.maxRetries, ...Object.values(policy.statusMaxRetries ?? {}));
}
