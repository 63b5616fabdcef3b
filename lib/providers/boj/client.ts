// Calls the three BOJ endpoints through the shared HTTP client and maps every failure onto the four
// error classes docs/apis/boj.md lists: VALIDATION_ERROR, TRANSPORT_ERROR, DECODE_ERROR and
// API_ERROR.
import { clientSettings } from "../../http/settings.ts";
import type { CommonSettings } from "../../config/provider_spec.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient } from "../../http/fetch_client.ts";
import { backoffDelay } from "../../http/retry.ts";
import type { RetryPolicy } from "../../http/retry.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import type { ProviderContext } from "../../mcp/provider.ts";
import { findMessage, TERMS_URL } from "./catalog.ts";
import type { Frequency } from "./catalog.ts";
import {
  decodeText,
  isErrorMessageId,
  isSuccess,
  parseDataBody,
  parseErrorMeta,
  parseMetadataBody,
  sniffStatus,
} from "./decode.ts";
import type { DataResponse, Meta, MetadataResponse } from "./decode.ts";

/** BOJ statuses worth another try (docs/apis/boj.md, "Retries"). */
export const RETRY_STATUSES: readonly number[] = [500, 503];

/** The BOJ's retry policy (docs/apis/boj.md) as a configuration of the shared one: no jitter, doubling backoff. */
export function bojRetryPolicy(
  settings: Pick<CommonSettings, "max_retries" | "retry_backoff_ms">,
): RetryPolicy {
  return {
    maxRetries: settings.max_retries,
    retryStatuses: RETRY_STATUSES,
    retryNetworkErrors: true,
    baseDelayMs: settings.retry_backoff_ms,
    maxDelayMs: 60_000,
    jitter: 0,
  };
}

/** Per-call options: the tool call's cancellation and logger. */
export interface CallOptions {
  signal?: AbortSignal;
  logger?: Logger;
}

/** Arguments shared by the three endpoints, already normalised to BOJ notation. */
export interface BaseQuery {
  db: string;
  format: "JSON" | "CSV";
  lang?: "JP" | "EN";
}

/** A getDataCode request. */
export interface CodeQuery extends BaseQuery {
  codes: string[];
  startDate?: string;
  endDate?: string;
  startPosition?: number;
}

/** A getDataLayer request. */
export interface LayerQuery extends BaseQuery {
  frequency: Frequency;
  layers: string[];
  startDate?: string;
  endDate?: string;
  startPosition?: number;
}

/** A decoded answer with the decoded body text and where it came from. */
export interface Fetched<T> {
  data: T;
  /** The decoded body, for `include_raw`. */
  raw: string;
  /** The request URL. */
  url: string;
}

/** The BOJ API client. */
export class BojClient {
  #http: HttpClient;
  #clock: Clock;
  #logger: Logger;
  #retry: RetryPolicy;
  #timeoutMs: number;

  constructor(context: ProviderContext<CommonSettings>) {
    const s = context.settings;
    const options = {
      provider: "boj",
      upstreamName: "BOJ API",
      licence: `BOJ terms of use, credit "Source: Bank of Japan" (${TERMS_URL})`,
      ...clientSettings(s),
      retry: bojRetryPolicy(s),
      // The BOJ names its errors (M181090S, ...) in the body; an open breaker then still says which.
      messageIdOf: (body: string) => parseErrorMeta(body)?.message_id || undefined,
    };
    this.#http = context.http.client(options);
    this.#clock = context.clock;
    this.#logger = context.logger;
    this.#retry = options.retry;
    this.#timeoutMs = options.timeoutMs;
  }

  /** getDataCode: observations of the given series. */
  async getDataCode(q: CodeQuery, options: CallOptions = {}): Promise<Fetched<DataResponse>> {
    const path = buildPath("getDataCode", [
      ...baseParams(q),
      ["code", q.codes.join(",")],
      ["startDate", q.startDate],
      ["endDate", q.endDate],
      ["startPosition", q.startPosition],
    ]);
    return await this.#call(path, options, { endpoint: "getDataCode", codes: q.codes }, parseDataBody);
  }

  /** getDataLayer: observations of the series below a position of the hierarchy. */
  async getDataLayer(q: LayerQuery, options: CallOptions = {}): Promise<Fetched<DataResponse>> {
    const path = buildPath("getDataLayer", [
      ...baseParams(q),
      ["frequency", q.frequency],
      ["layer", q.layers.join(",")],
      ["startDate", q.startDate],
      ["endDate", q.endDate],
      ["startPosition", q.startPosition],
    ]);
    return await this.#call(path, options, { endpoint: "getDataLayer" }, parseDataBody);
  }

  /** getMetadata: every series and heading of a database. */
  async getMetadata(q: BaseQuery, options: CallOptions = {}): Promise<Fetched<MetadataResponse>> {
    const path = buildPath("getMetadata", baseParams(q));
    return await this.#call(path, options, { endpoint: "getMetadata" }, parseMetadataBody);
  }

  /**
   * Fetches and decodes one answer. The shared client retries HTTP 500/503 and transport
   * errors; a 500/503 STATUS the BOJ states inside an HTTP 200 body is retried here the same
   * way (the API error's status decides, docs/apis/boj.md), within the same deadline.
   */
  async #call<T extends { meta: Meta }>(
    path: string,
    options: CallOptions,
    context: ErrorContext,
    parse: (body: string) => T,
  ): Promise<Fetched<T>> {
    const deadline = this.#clock.now() + this.#timeoutMs;
    for (let retry = 0;; retry++) {
      const fetched = await this.#fetch(path, options, context, deadline - this.#clock.now(), parse);
      const data = parse(fetched.raw);
      // STATUS 200 with an error MESSAGEID (…E, …S) is still an error, never an empty result.
      if (isSuccess(data.meta)) return { ...fetched, data };
      const error = apiError(data.meta, context);
      if (!error.retryable || retry >= this.#retry.maxRetries) throw error;
      const wait = backoffDelay(this.#retry, retry + 1, () => 0.5);
      if (this.#clock.now() + wait >= deadline) throw error;
      (options.logger ?? this.#logger).info("upstream retry", {
        provider: "boj",
        upstream_url: fetched.url,
        attempt: retry + 1,
        wait_ms: wait,
        status: data.meta.status,
      });
      try {
        await this.#clock.sleep(wait, options.signal);
      } catch {
        throw new ToolError("CANCELLED", "The call was cancelled by the client");
      }
    }
  }

  async #fetch(
    path: string,
    options: CallOptions,
    context: ErrorContext,
    timeoutMs: number,
    parse: (body: string) => { meta: Meta },
  ): Promise<Omit<Fetched<never>, "data">> {
    try {
      const response = await this.#http.bytes(path, {
        timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
        // The BOJ can state an error (or serve a maintenance page) in an HTTP 200 answer: only
        // a body that decodes as a success may be reused, or the error would stick for cache_ttl.
        cacheable: (bytes) =>
          bytes instanceof Uint8Array && sniffStatus(bytes) === 200 && decodesAsSuccess(bytes, parse),
      });
      return { raw: decodeText(response.data, response.contentType), url: response.url };
    } catch (e) {
      throw toBojError(e, context);
    }
  }
}

function decodesAsSuccess(bytes: Uint8Array, parse: (body: string) => { meta: Meta }): boolean {
  try {
    return isSuccess(parse(decodeText(bytes)).meta);
  } catch {
    return false;
  }
}

type Param = readonly [string, string | number | undefined];

function baseParams(q: BaseQuery): Param[] {
  return [["format", q.format], ["lang", q.lang], ["db", q.db]];
}

// Commas stay literal (as in the manual's examples: code=A,B and layer=1,1,1); everything
// else is percent-encoded.
function buildPath(endpoint: string, params: readonly Param[]): string {
  const query = params
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v)).replace(/%2C/gi, ",").replace(/%40/g, "@")}`)
    .join("&");
  return `api/v1/${endpoint}?${query}`;
}

/** What the error mapping knows about the request. */
export interface ErrorContext {
  endpoint: "getDataCode" | "getDataLayer" | "getMetadata";
  /** The codes sent, to name the one a M181013E/M181014E points at. */
  codes?: readonly string[];
}

/**
 * The API_ERROR for a BOJ answer that is not a success: a STATUS other than 200, or STATUS 200
 * with an error MESSAGEID (…E, …S), which is an error all the same.
 */
export function apiError(meta: Meta, context: ErrorContext, retryAfterS?: number): ToolError {
  const known = meta.message_id ? findMessage(meta.message_id) : undefined;
  const text = meta.message.trim().replace(/[。.]+$/, "");
  let english = known && known.message_en !== text ? ` (${known.message_en})` : "";
  // M181013E/M181014E end with ":N番目のコード", the position of the code at fault.
  const position = /[:：]\s*(\d+)\s*番目/.exec(meta.message)?.[1] ?? /:\s*(\d+)/.exec(meta.message)?.[1];
  if (position && (meta.message_id === "M181013E" || meta.message_id === "M181014E")) {
    const code = context.codes?.[Number(position) - 1];
    const which = `Series code ${position} of the request${code === undefined ? "" : `, "${code}",`}`;
    english = meta.message_id === "M181013E"
      ? ` (${which} does not exist)`
      : ` (${which} is not of the same frequency as the others)`;
  }
  const id = meta.message_id ? ` ${meta.message_id}` : "";
  const failed = meta.status >= 500 || (known !== undefined && known.status >= 500);
  const message = meta.status === 200
    ? `The BOJ API answered STATUS 200 but with error${id}: "${text}"${english}`
    : failed
    ? `The BOJ API failed with status ${meta.status}${id}: "${text}"${english}`
    : `The BOJ API refused the request with status ${meta.status}${id}: "${text}"${english}`;
  let hint = known?.hint ??
    (failed
      ? "The BOJ API is having trouble: wait a little, then call again"
      : "Check the arguments against boj_get_parameter_catalog");
  if (
    context.endpoint === "getDataLayer" && meta.status === 400 && (!known || meta.message_id === "M181020E")
  ) {
    hint += "; a layer query matching more than 1,250 series is refused too, so give deeper layers";
  }
  // The catalog's status decides for an error id sent with STATUS 200 (a M18109xS is retryable).
  const retryable = RETRY_STATUSES.includes(meta.status) ||
    (meta.status === 200 && isErrorMessageId(meta.message_id) && known !== undefined &&
      RETRY_STATUSES.includes(known.status));
  return new ToolError("API_ERROR", message, {
    status: meta.status,
    retryable,
    ...(meta.message_id ? { messageId: meta.message_id } : {}),
    ...(retryAfterS === undefined ? {} : { retryAfterS }),
    hint,
  });
}

/**
 * Maps a failure of the shared client onto the BOJ's error classes: an HTTP error with a BOJ body
 * becomes API_ERROR with its MESSAGEID; timeouts, an open breaker and the client-side rate limit
 * count as TRANSPORT_ERROR (retryable), except a breaker opened by HTTP errors, which stays an
 * API_ERROR with the last status and MESSAGEID; decode errors stay DECODE_ERROR.
 */
export function toBojError(e: unknown, context: ErrorContext): unknown {
  if (!(e instanceof UpstreamError)) return e;
  const carry = {
    ...(e.retryAfterS === undefined ? {} : { retryAfterS: e.retryAfterS }),
    ...(e.hint === undefined ? {} : { hint: e.hint }),
    cause: e,
  };
  switch (e.errorType) {
    case "API_ERROR":
    case "RATE_LIMITED": {
      if (e.status === undefined) {
        return new ToolError("TRANSPORT_ERROR", e.message, { ...carry, retryable: true });
      }
      const meta = parseErrorMeta(e.body);
      if (meta && meta.status !== 200) return apiError(meta, context, e.retryAfterS);
      // Too many requests: the call itself was fine and will work later, which is what the
      // hint says, so the payload says retryable too (with Retry-After when BOJ sent one).
      if (e.status === 429) {
        return new ToolError("API_ERROR", `${e.message}: the BOJ API is limiting how often it is called`, {
          cause: e,
          status: 429,
          retryable: true,
          ...(e.retryAfterS === undefined ? {} : { retryAfterS: e.retryAfterS }),
          hint: e.retryAfterS === undefined
            ? "Wait a minute, then call again; the BOJ asks clients to avoid high-frequency access"
            : `Wait ${e.retryAfterS} seconds, then call again`,
        });
      }
      const retryable = RETRY_STATUSES.includes(e.status);
      return new ToolError("API_ERROR", e.message, {
        ...carry,
        status: e.status,
        retryable,
        ...(e.status >= 500 && !retryable
          ? {
            hint:
              "Something in front of the BOJ API failed; try again later, the site may be under maintenance",
          }
          : {}),
      });
    }
    case "CIRCUIT_OPEN":
      if (e.status !== undefined) {
        return new ToolError("API_ERROR", e.message, {
          ...carry,
          status: e.status,
          retryable: true,
          ...(e.messageId === undefined ? {} : { messageId: e.messageId }),
        });
      }
      return new ToolError("TRANSPORT_ERROR", e.message, { ...carry, retryable: true });
    case "TIMEOUT":
    case "TRANSPORT_ERROR":
      return new ToolError("TRANSPORT_ERROR", e.message, { ...carry, retryable: true });
    case "DECODE_ERROR":
      return new ToolError("DECODE_ERROR", e.message, {
        ...carry,
        retryable: false,
        ...(e.status === undefined ? {} : { status: e.status }),
      });
    default:
      return e;
  }
}
