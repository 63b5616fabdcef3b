// Shared by the store interfaces (breaker.ts, cache.ts, rate_limiter.ts), which stores.ts lists.

/** A value or a promise of it: in-memory stores answer at once, shared ones (Redis) later. */
export type MaybePromise<T> = T | Promise<T>;
