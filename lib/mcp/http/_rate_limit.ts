import type { Clock } from "../../clock.ts";

interface Bucket {
  tokens: number;
  last: number;
}

/**
 * Per-client token buckets: `perMinute` requests per minute with bursts up to `perMinute`.
 * Memory is bounded: buckets that have refilled are dropped, and past `maxClients` the fullest
 * are dropped first (a client that has refilled loses nothing by being forgotten), then the
 * earliest seen.
 */
export class IpRateLimiter {
  #perMs: number;
  #capacity: number;
  #clock: Clock;
  #buckets = new Map<string, Bucket>();
  #maxClients: number;

  constructor(perMinute: number, clock: Clock, maxClients = 10_000) {
    this.#capacity = perMinute;
    this.#perMs = perMinute / 60_000;
    this.#clock = clock;
    this.#maxClients = maxClients;
  }

  /** Takes a token for `client`: 0 when allowed, else the seconds until one is free. */
  take(client: string): number {
    const now = this.#clock.now();
    let bucket = this.#buckets.get(client);
    if (!bucket) {
      if (this.#buckets.size >= this.#maxClients) this.#prune(now);
      bucket = { tokens: this.#capacity, last: now };
      this.#buckets.set(client, bucket);
    }
    bucket.tokens = Math.min(this.#capacity, bucket.tokens + Math.max(0, now - bucket.last) * this.#perMs);
    bucket.last = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perMs / 1000));
  }

  /** How many clients are tracked (for tests and /health). */
  get size(): number {
    return this.#buckets.size;
  }

  #prune(now: number): void {
    for (const [client, b] of this.#buckets) {
      if (b.tokens + (now - b.last) * this.#perMs >= this.#capacity) this.#buckets.delete(client);
    }
    // Still full: forget the earliest seen (a Map iterates in insertion order).
    for (const client of this.#buckets.keys()) {
      if (this.#buckets.size < this.#maxClients) break;
      this.#buckets.delete(client);
    }
  }
}
