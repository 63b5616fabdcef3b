// The state HttpClient keeps between requests sits behind three small store interfaces, each
// with an in-memory implementation: the response cache (`CacheStore`, cache.ts), the rate-limit
// windows (`RateWindowStore`, rate_limiter.ts) and the circuit breakers (`BreakerStore`,
// breaker.ts). HttpRuntime takes any of them as options, so a shared implementation (Redis,
// when `REDIS_URL` is set) can replace the in-memory one without touching HttpClient.
export type { CacheEntry, CacheStore } from "./cache.ts";
export type { RateLimit, RateWindowStore, Reservation } from "./rate_limiter.ts";
export type { BreakerGate, BreakerOptions, BreakerSnapshot, BreakerStore, LastFailure } from "./breaker.ts";
export type { MaybePromise } from "./maybe_promise.ts";
