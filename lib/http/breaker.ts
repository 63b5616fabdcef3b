// Circuit breakers per upstream endpoint. HttpClient reports one verdict per *call* (after its
// retries), so a call retried three times counts once, and each endpoint family (provider, host
// and path family, see endpoint.ts) has its own breaker, so a failing FRED series endpoint
// does not pause FRED's categories. The breaker remembers the last failure so an open circuit
// can still say what the upstream answered (status, message id).
import type { MaybePromise } from "./maybe_promise.ts";

/** The three states of a circuit breaker. */
export type BreakerState = "closed" | "open" | "half_open";

/** Options for {@linkcode CircuitBreaker}. */
export interface BreakerOptions {
  /** Consecutive failed calls that open the circuit. */
  threshold: number;
  /** How long the circuit stays open before one trial call is let through. */
  cooldownMs: number;
}

/** What the last failed call met, kept so an open circuit can report it. */
export interface LastFailure {
  /** The error type the call failed with (`API_ERROR`, `TIMEOUT`, ...). */
  errorType: string;
  /** The upstream's HTTP status, when it answered. */
  status?: number;
  /** The upstream's own message id (e.g. the BOJ's `M181090S`), when the provider reads one. */
  messageId?: string;
}

/** A snapshot for `/health` and logs. */
export interface BreakerSnapshot {
  state: BreakerState;
  consecutive_failures: number;
  /** Seconds until a trial call is allowed, when open. */
  retry_in_s?: number;
  /** The last failure, while failures are being counted. */
  last_error?: { error_type: string; status?: number; message_id?: string };
}

/** The answer to "may this call go out?". */
export interface BreakerGate {
  /** 0 when the call may go out, else milliseconds until a trial call will be let through. */
  waitMs: number;
  /** The last failure, when the circuit is open. */
  last?: LastFailure;
  /** True when this call is the half-open trial (its verdict closes or reopens the circuit). */
  trial?: boolean;
}

/**
 * One circuit breaker, in memory: opens after `threshold` consecutive failed calls, lets one
 * trial through after the cooldown, closes on its success and reopens on its failure.
 */
export class CircuitBreaker {
  #options: BreakerOptions;
  #state: BreakerState = "closed";
  #failures = 0;
  #openedAt = 0;
  #trialSince: number | undefined;
  #last: LastFailure | undefined;

  constructor(options: BreakerOptions) {
    this.#options = options;
  }

  /** The state as of `now` (an open breaker past its cooldown reads as half-open). */
  state(now: number): BreakerState {
    if (this.#state === "open" && now - this.#openedAt >= this.#options.cooldownMs) {
      return "half_open";
    }
    return this.#state;
  }

  /** The last failure recorded since the breaker was last closed by a success. */
  get lastFailure(): LastFailure | undefined {
    return this.#last;
  }

  /** Whether the breaker holds nothing worth keeping (closed, no failures, no trial). */
  get idle(): boolean {
    return this.#state === "closed" && this.#failures === 0 && this.#trialSince === undefined;
  }

  /**
   * Asks to send a call. Returns 0 when allowed, else the milliseconds until a trial call
   * will be.
   */
  acquire(now: number): number {
    const state = this.state(now);
    if (state === "closed") return 0;
    if (state === "half_open") {
      // A trial whose verdict never came (its process died) stops blocking after a cooldown.
      if (this.#trialSince !== undefined && now - this.#trialSince < this.#options.cooldownMs) {
        return Math.max(1, this.#options.cooldownMs - (now - this.#trialSince));
      }
      this.#state = "half_open";
      this.#trialSince = now;
      return 0;
    }
    return this.#openedAt + this.#options.cooldownMs - now;
  }

  /** Records a healthy call. */
  success(): void {
    this.#state = "closed";
    this.#failures = 0;
    this.#trialSince = undefined;
    this.#last = undefined;
  }

  /**
   * Records a failed call (network error, upstream timeout, 5xx or 429 after its retries).
   * Returns true when this failure opened the circuit (or reopened it after a failed trial).
   */
  failure(now: number, last?: LastFailure): boolean {
    this.#trialSince = undefined;
    if (last) this.#last = last;
    this.#failures += 1;
    if (this.#state === "half_open") {
      this.#state = "open";
      this.#openedAt = now;
      return true;
    }
    if (this.#state !== "open" && this.#failures >= this.#options.threshold) {
      this.#state = "open";
      this.#openedAt = now;
      return true;
    }
    if (this.#failures >= this.#options.threshold) this.#openedAt = now;
    return false;
  }

  /** Releases a trial slot without a verdict (the caller cancelled, or the call never went out). */
  release(): void {
    this.#trialSince = undefined;
  }

  snapshot(now: number): BreakerSnapshot {
    const state = this.state(now);
    const snap: BreakerSnapshot = { state, consecutive_failures: this.#failures };
    if (state === "open") {
      snap.retry_in_s = Math.ceil((this.#openedAt + this.#options.cooldownMs - now) / 1000);
    }
    if (this.#last) {
      snap.last_error = {
        error_type: this.#last.errorType,
        ...(this.#last.status === undefined ? {} : { status: this.#last.status }),
        ...(this.#last.messageId === undefined ? {} : { message_id: this.#last.messageId }),
      };
    }
    return snap;
  }
}

/**
 * Where breaker state lives, one record per key. The in-memory store serves one process; a
 * shared store (Redis) implements the same operations atomically so replicas share breakers.
 */
export interface BreakerStore {
  /** May a call to `key` go out now? Counts as the half-open trial when it says yes. */
  acquire(key: string, options: BreakerOptions, now: number): MaybePromise<BreakerGate>;
  success(key: string): MaybePromise<void>;
  /** Records a failed call; resolves to true when it opened the circuit. */
  failure(key: string, options: BreakerOptions, now: number, last?: LastFailure): MaybePromise<boolean>;
  /** No verdict: frees a half-open trial slot. */
  release(key: string): MaybePromise<void>;
  /** Every breaker that holds state (failures counted, open, or on trial), for `/health`. */
  snapshots(now: number): MaybePromise<Record<string, BreakerSnapshot>>;
}

/** Breakers kept at most; the least recently touched go first (they start closed again). */
const DEFAULT_MAX_KEYS = 1000;

/**
 * Breakers in this process's memory. A breaker that is closed with no failures is not kept
 * (it is the same as a new one), so the store holds only endpoints that are failing, and at
 * most `maxKeys` of them, however many paths callers reach.
 */
export class MemoryBreakerStore implements BreakerStore {
  #breakers = new Map<string, CircuitBreaker>();
  #maxKeys: number;

  constructor(maxKeys = DEFAULT_MAX_KEYS) {
    this.#maxKeys = maxKeys;
  }

  acquire(key: string, _options: BreakerOptions, now: number): BreakerGate {
    const breaker = this.#breakers.get(key);
    if (!breaker) return { waitMs: 0 };
    const trial = breaker.state(now) === "half_open";
    const waitMs = breaker.acquire(now);
    const last = breaker.lastFailure;
    if (waitMs > 0) return last ? { waitMs, last } : { waitMs };
    return trial ? { waitMs, trial } : { waitMs };
  }

  success(key: string): void {
    this.#breakers.delete(key);
  }

  failure(key: string, options: BreakerOptions, now: number, last?: LastFailure): boolean {
    const breaker = this.#breakers.get(key) ?? new CircuitBreaker(options);
    const opened = breaker.failure(now, last);
    this.#touch(key, breaker);
    return opened;
  }

  release(key: string): void {
    const breaker = this.#breakers.get(key);
    breaker?.release();
    if (breaker?.idle) this.#breakers.delete(key);
  }

  snapshots(now: number): Record<string, BreakerSnapshot> {
    return Object.fromEntries([...this.#breakers].map(([key, b]) => [key, b.snapshot(now)]));
  }

  #touch(key: string, breaker: CircuitBreaker): void {
    this.#breakers.delete(key);
    this.#breakers.set(key, breaker);
    while (this.#breakers.size > this.#maxKeys) {
      this.#breakers.delete(this.#breakers.keys().next().value!);
    }
  }
}

/** The breaker of one endpoint key, as HttpClient and `/health` tests use it. */
export class EndpointBreaker {
  readonly key: string;
  #store: BreakerStore;
  #options: BreakerOptions;

  constructor(store: BreakerStore, key: string, options: BreakerOptions) {
    this.#store = store;
    this.key = key;
    this.#options = options;
  }

  /** May a call go out now? */
  acquire(now: number): MaybePromise<BreakerGate> {
    return this.#store.acquire(this.key, this.#options, now);
  }

  /** Records a healthy call. */
  success(): MaybePromise<void> {
    return this.#store.success(this.key);
  }

  /** Records a failed call; true when it opened the circuit. */
  failure(now: number, last?: LastFailure): MaybePromise<boolean> {
    return this.#store.failure(this.key, this.#options, now, last);
  }

  /** Records no verdict. */
  release(): MaybePromise<void> {
    return this.#store.release(this.key);
  }
}
