import type { Clock } from "../clock.ts";

/** At most `requests` per `perMs` milliseconds, with bursts up to `requests`. */
export interface RateLimit {
  requests: number;
  perMs: number;
}

class TokenBucket {
  #capacity: number;
  #perMs: number;
  #tokens: number;
  #last: number;

  constructor(limit: RateLimit, now: number) {
    this.#capacity = limit.requests;
    this.#perMs = limit.requests / limit.perMs;
    this.#tokens = limit.requests;
    this.#last = now;
  }

  /** Milliseconds until one token is free (0 when one is free now). */
  wait(now: number): number {
    this.#refill(now);
    return this.#tokens >= 1 ? 0 : Math.ceil((1 - this.#tokens) / this.#perMs);
  }

  take(): void {
    this.#tokens -= 1;
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#last);
    this.#tokens = Math.min(this.#capacity, this.#tokens + elapsed * this.#perMs);
    this.#last = now;
  }
}

/** Thrown when waiting for a slot would pass the caller's deadline. */
export class RateLimitWaitError extends Error {
  /** How long the caller would have had to wait. */
  readonly waitMs: number;

  constructor(waitMs: number) {
    super(`Rate limit slot is ${waitMs} ms away, past the deadline`);
    this.name = "RateLimitWaitError";
    this.waitMs = waitMs;
  }
}

/** Token buckets that must all have a token before a request goes out (e.g. per minute and per second). */
export class RateLimiter {
  #clock: Clock;
  #buckets: TokenBucket[];

  constructor(limits: readonly RateLimit[], clock: Clock) {
    this.#clock = clock;
    this.#buckets = limits
      .filter((l) => l.requests > 0 && l.perMs > 0)
      .map((l) => new TokenBucket(l, clock.now()));
  }

  /** Waits for a slot in every bucket, or throws {@linkcode RateLimitWaitError} if it would pass `deadline`. */
  async acquire(deadline: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.#clock.now();
      const wait = Math.max(0, ...this.#buckets.map((b) => b.wait(now)));
      if (wait === 0) {
        for (const b of this.#buckets) b.take();
        return;
      }
      if (now + wait > deadline) throw new RateLimitWaitError(wait);
      await this.#clock.sleep(wait, signal);
    }
  }
}
