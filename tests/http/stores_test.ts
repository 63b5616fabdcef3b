// HttpRuntime takes its cache, rate windows and breakers through store interfaces whose methods
// may answer with promises (as a Redis store will): the client behaves the same.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { UpstreamError } from "../../lib/errors.ts";
import { MemoryBreakerStore } from "../../lib/http/breaker.ts";
import { ResponseCache } from "../../lib/http/cache.ts";
import { MemoryRateWindowStore } from "../../lib/http/rate_limiter.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import type { BreakerStore, CacheStore, RateWindowStore } from "../../lib/http/stores.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

/** Wraps every method of `store` so it answers later, with a promise, and counts the calls. */
function asynchronous<T extends object>(store: T, calls: string[]): T {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        calls.push(String(name));
        await Promise.resolve();
        return value.apply(target, args);
      };
    },
  });
}

Deno.test("HttpRuntime uses asynchronous cache, rate-window and breaker stores like the in-memory ones", async () => {
  await using fake = FakeUpstream.start([
    { path: "/c", reply: (_r, n) => ({ json: { n } }) },
    { path: "/down", reply: { status: 503 } },
  ]);
  const calls: string[] = [];
  const clock = new FakeClock();
  const runtime = new HttpRuntime({
    clock,
    cacheStore: asynchronous<CacheStore>(new ResponseCache(1 << 20), calls),
    rateStore: asynchronous<RateWindowStore>(new MemoryRateWindowStore(), calls),
    breakerStore: asynchronous<BreakerStore>(new MemoryBreakerStore(), calls),
  });
  const client = runtime.client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 60_000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    cacheTtlMs: 10_000,
    rateLimits: [{ requests: 1, perMs: 1000 }],
    breaker: { threshold: 1, cooldownMs: 30_000 },
  });
  assert.equal((await client.json("/c")).cache, "miss");
  const hit = await client.json<{ n: number }>("/c");
  assert.equal(hit.cache, "hit");
  assert.deepEqual(hit.data, { n: 0 });
  await assert.rejects(client.json("/down"), (e: unknown) => e instanceof UpstreamError && e.status === 503);
  assert.deepEqual(clock.sleeps, [1000], "the second request waited for its slot");
  await assert.rejects(
    client.json("/down"),
    (e: unknown) => e instanceof UpstreamError && e.errorType === "CIRCUIT_OPEN",
  );
  assert.equal(Object.values(await runtime.breakers())[0]?.state, "open");
  for (const name of ["get", "set", "reserve", "acquire", "success", "failure", "snapshots"]) {
    assert.ok(calls.includes(name), `${name} went through the store`);
  }
});
