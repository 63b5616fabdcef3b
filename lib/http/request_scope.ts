import { AsyncLocalStorage } from "node:async_hooks";

/** What one tool call asks of every upstream request it makes. */
export interface RequestScope {
  /** Bypass the response cache (the `fresh` argument); answers are still stored. */
  fresh: boolean;
  /**
   * When the tool call must have answered, in milliseconds of the runtime clock. Every upstream
   * request the call makes ends by then, whatever the provider's own timeout. Absent for work
   * no caller waits for (background jobs).
   */
  deadline?: number;
  /**
   * Whom the call counts against for per-client limits over HTTP: the OAuth principal's id
   * (issuer and subject) when the request carried a valid access token, else the client
   * address. Absent over stdio. Set by the HTTP handler (`Caller.clientKey`) through the server.
   */
  client?: string;
  /** The tool call's request id, for the upstream spans it makes. */
  requestId?: string;
  /**
   * Where the upstream requests of this call are written down for its provenance (the core
   * renders them with the answer); absent: nothing is recorded (background jobs).
   */
  record?: CallRecord;
}

/** One upstream answer a tool call used, as the HTTP client recorded it. */
export interface UpstreamCall {
  /** Provider id of the client that made it. */
  provider: string;
  /** Human name of the upstream ("FRED API"). */
  source: string;
  method: string;
  /** The request URL, secret query values replaced by `***`. */
  url: string;
  /** The request body of a POST, when there was one. */
  body?: string;
  /** Names of the query parameters whose values were left out (secrets). */
  secrets: string[];
  /** SHA-256 (hex) of the body as received, after HTTP content decoding. */
  sha256: string;
  /** When the upstream answered (ms since the epoch); for a cached answer, when it was fetched. */
  retrievedAt: number;
  status: number;
  cache: "hit" | "miss" | "bypass" | "off";
  /** The licence the provider's client declares for this upstream's data. */
  licence?: string;
}

/** What a provider adds to its answer's provenance (see lib/output/provenance.ts `cite`). */
export interface ProvenanceNote {
  /** The upstream's name, when it should differ from its client's (`upstreamName`). */
  source?: string;
  /** The licence or terms of this answer's data. */
  licence?: string;
  /** A stable page for people (the record's page), instead of the API request URL. */
  permalink?: string;
  /** The upstream's own as-of, last-updated time or vintage of the data shown. */
  as_of?: string;
}

/** The upstream requests and the provider's notes of one tool call. */
export interface CallRecord {
  calls: UpstreamCall[];
  note: ProvenanceNote;
}

/**
 * The scope of the tool call in progress. The core sets it around each handler, so a caller's
 * `fresh: true` and the call's deadline reach every upstream request the call makes without
 * each provider passing them along.
 */
export const requestScope: AsyncLocalStorage<RequestScope> = new AsyncLocalStorage<RequestScope>();

/** Milliseconds left before the current tool call's deadline; `Infinity` outside a call or in a job. */
export function remainingMs(now: number): number {
  const deadline = requestScope.getStore()?.deadline;
  return deadline === undefined ? Infinity : deadline - now;
}

/**
 * Runs `fn` (typically a background job's work) with the caller's `fresh` choice but without
 * its deadline: the call that started the job answers at once, the job runs on.
 */
export function detachedFromDeadline<T>(fn: () => T): T {
  const scope = requestScope.getStore();
  const client = scope?.client;
  const requestId = scope?.requestId;
  // Nor its record: a job's requests outlive the answer that would name them.
  return requestScope.run({
    fresh: scope?.fresh ?? false,
    ...(client === undefined ? {} : { client }),
    ...(requestId ? { requestId } : {}),
  }, fn);
}

/**
 * What the HTTP edge knows of a request it serves, for the code that runs on its behalf:
 * the per-request servers of 2026-07-28 requests read whose work it is, and a tool call hands
 * its outcome to the request's one access line instead of writing a line of its own.
 */
export interface ExchangeScope {
  /** The id the HTTP edge gave the request (its `X-Request-Id`). */
  requestId: string;
  /** Whose work the request's calls do (jobs, projects, files). */
  owner: string;
  /** Whom per-client limits count the request against. */
  client: string;
  /** The toolsets the request's server lists, already checked. */
  toolsets: ReadonlySet<string>;
  /**
   * Adds a finished tool call's fields to the request's access line; false when that line is
   * already written or already holds a call (the call then writes its own line).
   */
  noteCall(fields: Record<string, unknown>): boolean;
}

/** The exchange of each request the HTTP edge hands on, by the request object handed on. */
const exchanges = new WeakMap<object, ExchangeScope>();

/** Ties `req`, the request the HTTP edge hands to the SDK, to the exchange it serves. */
export function bindExchange(req: object, exchange: ExchangeScope): void {
  exchanges.set(req, exchange);
}

/**
 * The exchange of `req`, the request a server factory or a tool call was handed (the SDK's
 * `requestInfo`, `http.req`); undefined for one the HTTP edge did not serve (stdio, tests).
 */
export function exchangeOf(req: object | undefined): ExchangeScope | undefined {
  return req === undefined ? undefined : exchanges.get(req);
}
