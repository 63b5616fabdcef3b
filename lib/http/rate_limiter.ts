// Client-side rate limits as exact sliding windows: a log of request start times per key, and
// every request reserves the earliest time that keeps each window under its limit. A pacing
// limit ("about 2 a second") is the same thing with one request per window (500 ms).
// Reservations are made at once, in arrival order, so a caller knows its real wait up front:
// when that wait would pass its deadline it fails at once instead of queueing.
import type { Clock } from "../clock.ts";
import type { MaybePromise } from "./maybe_promise.ts";

/** At most `requests` requests start in any window of `perMs` milliseconds. */
export interface RateLimit {
  requests: number;
  perMs: number;
}

/** What {@linkcode RateWindowStore.reserve} decided. */
export interface Reservation {
  /** When the request may start (ms of the runtime clock); `now` when it may start at once. */
  at: number;
  /** False when `at` is past the caller's latest start, so nothing was reserved. */
  reserved: boolean;
}

/**
 * Where the request logs live. The in-memory store serves one process; a shared store (Redis)
 * can implement the same two operations atomically so replicas share one budget.
 */
export interface RateWindowStore {
  /**
   * Reserves the earliest start at or after `now` that keeps every limit of `key`, unless that
   * start is later than `latest` (then nothing is reserved and `at` says when it would be).
   */
  reserve(key: string, limits: readonly RateLimit[], now: number, latest: number): MaybePromise<Reservation>;
  /** Gives back a reservation that was not used (the caller cancelled while waiting). */
  cancel(key: string, at: number): MaybePromise<void>;
}

interface Log {
  /** Request start times, oldest first (future ones are reservations). */
  starts: number[];
  /** The longest window of the limits last used with this key. */
  windowMs: number;
}

/** Keys kept before idle ones are swept. */
const SWEEP_AT = 256;

/** Sliding-window logs in this process's memory. */
export class MemoryRateWindowStore implements RateWindowStore {
  #logs = new Map<string, Log>();

  reserve(key: string, limits: readonly RateLimit[], now: number, latest: number): Reservation {
    const windowMs = Math.max(0, ...limits.map((l) => l.perMs));
    const log = this.#logs.get(key) ?? { starts: [], windowMs };
    log.windowMs = windowMs;
    prune(log, now);
    const { starts } = log;
    // In arrival order: never before a reservation already made.
    let at = Math.max(now, starts[starts.length - 1] ?? now);
    for (const limit of limits) {
      // The limit-th most recent start must have left the window that ends at `at`.
      const nth = starts[starts.length - limit.requests];
      if (nth !== undefined) at = Math.max(at, nth + limit.perMs);
    }
    if (at > latest) {
      if (starts.length === 0) this.#logs.delete(key);
      return { at, reserved: false };
    }
    starts.push(at);
    this.#logs.set(key, log);
    if (this.#logs.size > SWEEP_AT) this.#sweep(now);
    return { at, reserved: true };
  }

  cancel(key: string, at: number): void {
    const log = this.#logs.get(key);
    if (!log) return;
    const i = log.starts.lastIndexOf(at);
    if (i >= 0) log.starts.splice(i, 1);
    if (log.starts.length === 0) this.#logs.delete(key);
  }

  /** Requests counted for `key` in the window ending at `now` (reservations included), for tests. */
  count(key: string, now: number): number {
    const log = this.#logs.get(key);
    if (!log) return 0;
    prune(log, now);
    return log.starts.length;
  }

  #sweep(now: number): void {
    for (const [key, log] of this.#logs) {
      prune(log, now);
      if (log.starts.length === 0) this.#logs.delete(key);
    }
  }
}

/** Drops starts that no window ending at `now` or later can contain. */
function prune(log: Log, now: number): void {
  let drop = 0;
  while (drop < log.starts.length && log.starts[drop]! <= now - log.windowMs) drop++;
  if (drop > 0) log.starts.splice(0, drop);
}

/** Thrown when the earliest free slot is past the caller's deadline. */
export class RateLimitWaitError extends Error {
  /** How long the caller would have had to wait, in milliseconds. */
  readonly waitMs: number;

  constructor(waitMs: number) {
    super(`Rate limit slot is ${waitMs} ms away, past the deadline`);
    this.name = "RateLimitWaitError";
    this.waitMs = waitMs;
  }
}

/** Options for {@linkcode RateLimiter}. */
export interface RateLimiterOptions {
  /** Where the windows live; default: a store of this limiter's own. */
  store?: RateWindowStore;
  /** The budget's name in the store (requests under one key share it). Default `"default"`. */
  key?: string;
}

/** The limits one client keeps (e.g. per minute and a pacing interval), all at once. */
export class RateLimiter {
  #clock: Clock;
  #limits: RateLimit[];
  #store: RateWindowStore;
  #key: string;

  constructor(limits: readonly RateLimit[], clock: Clock, options: RateLimiterOptions = {}) {
    this.#clock = clock;
    this.#limits = limits.filter((l) => l.requests > 0 && l.perMs > 0);
    this.#store = options.store ?? new MemoryRateWindowStore();
    this.#key = options.key ?? "default";
  }

  /**
   * Waits for this request's slot. Throws {@linkcode RateLimitWaitError} at once, reserving
   * nothing, when the slot would start after `deadline`; rethrows the signal's reason (and
   * gives the slot back) when the caller cancels while waiting. Resolves to the milliseconds
   * waited (0 when the slot was free at once).
   */
  async acquire(deadline: number, signal?: AbortSignal): Promise<number> {
    if (this.#limits.length === 0) return 0;
    const now = this.#clock.now();
    // A slot that starts at the deadline leaves the request no time at all.
    const { at, reserved } = await this.#store.reserve(this.#key, this.#limits, now, deadline - 1);
    if (!reserved) throw new RateLimitWaitError(at - now);
    const wait = at - this.#clock.now();
    if (wait <= 0) return 0;
    try {
      await this.#clock.sleep(wait, signal);
    } catch (e) {
      await this.#store.cancel(this.#key, at);
      throw e;
    }
    return wait;
  }
}
