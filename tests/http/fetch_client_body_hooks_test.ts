// The two hooks providers use for upstreams that report errors inside HTTP 200 bodies:
// `UpstreamResponse.headers` (e.g. MediaWiki's Retry-After on a maxlag error) and
// `RequestOptions.cacheable` (such bodies must not be served again from the cache).
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

function clientFor(fake: FakeUpstream) {
  const runtime = new HttpRuntime({ clock: new FakeClock(), random: () => 0.5 });
  return runtime.client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5_000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    cacheTtlMs: 60_000,
  });
}

Deno.test("HttpClient.json() exposes the response headers of a live answer and none on a cache hit", async () => {
  await using fake = FakeUpstream.start([{
    path: "/api",
    reply: { json: { ok: true }, headers: { "retry-after": "7", "x-database-lag": "9" } },
  }]);
  const client = clientFor(fake);
  const live = await client.json("/api");
  assert.equal(live.cache, "miss");
  assert.equal(live.headers?.get("retry-after"), "7");
  assert.equal(live.headers?.get("x-database-lag"), "9");
  const hit = await client.json("/api");
  assert.equal(hit.cache, "hit");
  assert.equal(hit.headers, undefined);
});

Deno.test("HttpClient.json() does not cache a 2xx body that cacheable() refuses", async () => {
  await using fake = FakeUpstream.start([{
    path: "/api",
    reply: [{ json: { error: { code: "maxlag" } } }, { json: { ok: true } }],
  }]);
  const client = clientFor(fake);
  const isOk = (data: unknown) => !(data as Record<string, unknown>)["error"];
  const first = await client.json<Record<string, unknown>>("/api", { cacheable: isOk });
  assert.deepEqual(first.data, { error: { code: "maxlag" } });
  const second = await client.json<Record<string, unknown>>("/api", { cacheable: isOk });
  assert.equal(second.cache, "miss", "the refused body was not stored");
  assert.deepEqual(second.data, { ok: true });
  const third = await client.json<Record<string, unknown>>("/api", { cacheable: isOk });
  assert.equal(third.cache, "hit", "an accepted body is stored as before");
  assert.equal(fake.requests.length, 2);
});
