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
  return requestScope.run({
    fresh: scope?.fresh ?? false,
    ...(client === undefined ? {} : { client }),
    ...(requestId ? { requestId } : {}),
  }, fn);
}
