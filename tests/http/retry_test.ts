import assert from "node:assert/strict";
import { CircuitBreaker } from "../../lib/http/breaker.ts";
import { ResponseCache } from "../../lib/http/cache.ts";
import { backoffDelay, DEFAULT_RETRY_POLICY, parseRetryAfter, retriesFor } from "../../lib/http/retry.ts";

Deno.test("backoffDelay() doubles from the base, caps, and spreads by ±jitter", () => {
  const p = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 200, maxDelayMs: 1000, jitter: 0.25 };
  assert.deepEqual([1, 2, 3, 4].map((n) => backoffDelay(p, n, () => 0.5)), [200, 400, 800, 1000]);
  assert.equal(backoffDelay(p, 1, () => 0), 150);
  assert.equal(backoffDelay(p, 1, () => 0.999999), 250);
  assert.equal(
    backoffDelay({ ...p, jitter: 0 }, 3, () => 0),
    800,
    "BOJ: initial_backoff_ms * 2^n exactly",
  );
});

Deno.test("retriesFor() reads per-status overrides", () => {
  const p = { ...DEFAULT_RETRY_POLICY, maxRetries: 2, statusMaxRetries: { 429: 3 } };
  assert.equal(retriesFor(p, 429), 3);
  assert.equal(retriesFor(p, 503), 2);
  assert.equal(retriesFor(p, 404), 0);
});

Deno.test("parseRetryAfter() reads seconds and HTTP dates", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  assert.equal(parseRetryAfter("30", now), 30_000);
  assert.equal(parseRetryAfter("Wed, 25 Nov 2026 12:01:00 GMT", now), 60_000);
  assert.equal(parseRetryAfter("Wed, 25 Nov 2026 11:00:00 GMT", now), 0);
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});

Deno.test("CircuitBreaker lets exactly one trial through when half-open", () => {
  const b = new CircuitBreaker({ threshold: 1, cooldownMs: 100 });
  b.failure(0);
  assert.equal(b.state(50), "open");
  assert.equal(b.acquire(50), 50);
  assert.equal(b.acquire(100), 0, "the trial");
  assert.ok(b.acquire(100) > 0, "a second caller waits for the trial");
  b.success();
  assert.deepEqual(b.snapshot(100), { state: "closed", consecutive_failures: 0 });
});

Deno.test("ResponseCache evicts the least recently used entry to stay within its byte budget", () => {
  const cache = new ResponseCache(3000);
  const entry = (n: number) => ({
    status: 200,
    contentType: "x",
    body: new Uint8Array(n),
    storedAt: 0,
    expiresAt: 1000,
  });
  cache.set("a", entry(1000));
  cache.set("b", entry(1000));
  cache.get("a", 0);
  cache.set("c", entry(1000));
  assert.ok(cache.get("a", 0), "recently used survives");
  assert.equal(cache.get("b", 0), undefined, "least recently used is evicted");
  assert.ok(cache.bytes <= 3000);
  cache.set("huge", entry(10_000));
  assert.equal(cache.get("huge", 0), undefined, "an entry larger than the budget is not stored");
  assert.equal(cache.get("c", 1000), undefined, "expired");
});
