import type { Random } from "../clock.ts";

/**
 * When and how a failed upstream call is tried again. The providers' documented policies (docs/apis/<id>.md) are configurations of
 * this one shape (see `docs/ARCHITECTURE.md`).
 */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = never retry). */
  maxRetries: number;
  /** HTTP statuses worth another try. */
  retryStatuses: readonly number[];
  /** Per-status retry counts that override `maxRetries` (FRED: 429 three times, 5xx twice). */
  statusMaxRetries?: Readonly<Record<number, number>>;
  /** Whether connection errors, resets and cut-off bodies are retried. */
  retryNetworkErrors: boolean;
  /** The first backoff; later ones double. */
  baseDelayMs: number;
  /** The longest single backoff. */
  maxDelayMs: number;
  /** Jitter as a fraction: 0.25 spreads each delay over ±25 %. */
  jitter: number;
}

/** The default: network errors, 429 and 500/502/503/504, three retries, 500 ms doubling, ±25 %. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  retryStatuses: [429, 500, 502, 503, 504],
  retryNetworkErrors: true,
  baseDelayMs: 500,
  maxDelayMs: 10_000,
  jitter: 0.25,
};

/** How many retries `status` gets under `policy` (0 when it is not retryable). */
export function retriesFor(policy: RetryPolicy, status: number): number {
  if (!policy.retryStatuses.includes(status)) return 0;
  return policy.statusMaxRetries?.[status] ?? policy.maxRetries;
}

/**
 * The wait before retry number `retry` (1-based): `baseDelayMs * 2^(retry-1)`, capped, then
 * spread by the jitter fraction using `random`.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: Random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  const spread = exp * policy.jitter;
  return Math.max(0, Math.round(exp - spread + random() * 2 * spread));
}

/**
 * Reads a `Retry-After` header (delta seconds or an HTTP date) as milliseconds from `now`.
 * Returns undefined for a missing or unreadable value.
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
