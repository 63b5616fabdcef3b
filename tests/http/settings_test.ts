import assert from "node:assert/strict";
import { defineProvider } from "../../lib/config/provider_spec.ts";
import { clientSettings, rateLimitsOf } from "../../lib/http/settings.ts";

Deno.test("clientSettings() converts every common setting into client options", () => {
  const spec = defineProvider({
    id: "x",
    title: "X",
    description: "x",
    common: {
      base_url: "https://x.example.org",
      timeout: 2.5,
      max_retries: 4,
      retry_backoff_ms: 250,
      cache_ttl: 60,
      rate_limit_per_minute: 120,
      rate_limit_per_second: 2,
      breaker_threshold: 7,
      breaker_cooldown: 30,
      max_body_mb: 2,
    },
    load: () => Promise.reject<never>(new Error("unused")),
  });
  const o = clientSettings(spec.schema.parse({}));
  assert.equal(o.baseUrl, "https://x.example.org");
  assert.equal(o.timeoutMs, 2500);
  assert.equal(o.retry.maxRetries, 4);
  assert.equal(o.retry.baseDelayMs, 250);
  assert.equal(o.cacheTtlMs, 60_000);
  assert.equal(o.maxBodyBytes, 2 * 1024 * 1024);
  assert.deepEqual(o.breaker, { threshold: 7, cooldownMs: 30_000 });
  assert.deepEqual(o.rateLimits, [{ requests: 120, perMs: 60_000 }, { requests: 1, perMs: 500 }]);
});

Deno.test("rateLimitsOf() paces any per-second rate as one request per interval", () => {
  assert.deepEqual(rateLimitsOf({ rate_limit_per_minute: 0, rate_limit_per_second: 5 }), [{
    requests: 1,
    perMs: 200,
  }]);
  assert.deepEqual(rateLimitsOf({ rate_limit_per_minute: 0, rate_limit_per_second: 0.5 }), [{
    requests: 1,
    perMs: 2000,
  }]);
  assert.deepEqual(rateLimitsOf({ rate_limit_per_minute: 0, rate_limit_per_second: 0 }), []);
});
