// Circuit breakers per endpoint family that count failed calls, not attempts (FRED's design:
// "Track consecutive failures per endpoint. Open circuit after 5 consecutive failures"), and keep the
// last failure so an open circuit still says what the upstream answered.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { CircuitBreaker, MemoryBreakerStore } from "../../lib/http/breaker.ts";
import { endpointFamily } from "../../lib/http/endpoint.ts";
import { requestScope } from "../../lib/http/request_scope.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import type { ClientOptions } from "../../lib/http/runtime.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { upstreamFailure } from "../fakes/upstream_failure.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

function setup(fake: FakeUpstream, options: Partial<ClientOptions> = {}) {
  const clock = new FakeClock();
  const runtime = new HttpRuntime({ clock, random: () => 0.5 });
  const client = runtime.client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5_000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 2, baseDelayMs: 10 },
    breaker: { threshold: 2, cooldownMs: 60_000 },
    ...options,
  });
  const key = (path: string) => `test ${fake.host}${path}`;
  return { clock, runtime, client, key };
}

Deno.test("HttpClient breaker counts a call retried twice as one failure, and opens after threshold calls", async () => {
  await using fake = FakeUpstream.start([{ path: "/fred/series/observations", reply: { status: 500 } }]);
  const { client, runtime, key } = setup(fake);
  await upstreamFailure(client.json("/fred/series/observations"));
  assert.equal(fake.requests.length, 3);
  assert.deepEqual((await runtime.breakers())[key("/fred/series")], {
    state: "closed",
    consecutive_failures: 1,
    last_error: { error_type: "API_ERROR", status: 500 },
  });
  await upstreamFailure(client.json("/fred/series/observations"));
  assert.equal((await runtime.breakers())[key("/fred/series")]?.state, "open");
  const open = await upstreamFailure(client.json("/fred/series/observations"));
  assert.equal(open.errorType, "CIRCUIT_OPEN");
  assert.equal(open.status, 500, "the last upstream status");
  assert.equal(open.lastErrorType, "API_ERROR");
  assert.equal(open.retryAfterS, 60);
  assert.equal(
    open.message,
    `Test API is failing repeatedly (last failure: HTTP 500), so calls to "${fake.host}/fred/series" are paused for 60 s`,
  );
  assert.equal(fake.requests.length, 6, "nothing sent while open");
});

Deno.test("HttpClient breakers are per endpoint family: a failing series endpoint leaves categories alone", async () => {
  await using fake = FakeUpstream.start([
    { path: "/fred/series/observations", reply: { status: 503 } },
    { path: "/fred/category", reply: { json: { ok: true } } },
  ]);
  const { client, runtime, key } = setup(fake, { retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 } });
  for (let i = 0; i < 2; i++) await upstreamFailure(client.json("/fred/series/observations"));
  assert.equal((await upstreamFailure(client.json("/fred/series"))).errorType, "CIRCUIT_OPEN", "same family");
  assert.deepEqual((await client.json("/fred/category")).data, { ok: true });
  assert.deepEqual(
    Object.keys(await runtime.breakers()),
    [key("/fred/series")],
    "only the failing one is kept",
  );
});

Deno.test("HttpClient breaker: a 4xx answer closes it; refusals of our own and a short call deadline count nothing", async () => {
  await using fake = FakeUpstream.start([
    { path: "/a", reply: [{ status: 500 }, { status: 404 }] },
    { path: "/slow", reply: { json: 1, delayMs: 1000 } },
  ]);
  const { client, runtime, clock } = setup(fake, { retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 } });
  await upstreamFailure(client.json("/a"));
  assert.equal(Object.keys(await runtime.breakers()).length, 1);
  assert.equal((await upstreamFailure(client.json("/a"))).status, 404);
  assert.deepEqual(await runtime.breakers(), {}, "the upstream answered: healthy");

  // The tool call had 30 ms left: the upstream was not given its own timeout, so it is not blamed.
  const timeout = await upstreamFailure(
    requestScope.run({ fresh: false, deadline: clock.now() + 30 }, () => client.json("/slow")),
  );
  assert.equal(timeout.errorType, "TIMEOUT");
  assert.deepEqual(await runtime.breakers(), {});
  // Its own timeout passed: that counts.
  await upstreamFailure(client.json("/slow", { timeoutMs: 30 }));
  assert.equal(Object.values(await runtime.breakers())[0]?.consecutive_failures, 1);
});

Deno.test("HttpClient breaker remembers the upstream's message id for an open circuit", async () => {
  const body = JSON.stringify({ STATUS: 500, MESSAGEID: "M181090S", MESSAGE: "x" });
  await using fake = FakeUpstream.start([{ path: "/api/v1/getDataCode", reply: { status: 500, body } }]);
  const { client } = setup(fake, {
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    messageIdOf: (text) => (JSON.parse(text) as { MESSAGEID?: string }).MESSAGEID,
  });
  const first = await upstreamFailure(client.json("/api/v1/getDataCode"));
  assert.equal(first.messageId, "M181090S");
  await upstreamFailure(client.json("/api/v1/getDataCode"));
  const open = await upstreamFailure(client.json("/api/v1/getDataCode"));
  assert.deepEqual([open.errorType, open.status, open.messageId], ["CIRCUIT_OPEN", 500, "M181090S"]);
  assert.deepEqual(open.toPayload().message_id, "M181090S");
  assert.match(open.message, /last failure: HTTP 500 M181090S/);
});

Deno.test("CircuitBreaker lets a new trial through when a trial's verdict never came", () => {
  const b = new CircuitBreaker({ threshold: 1, cooldownMs: 100 });
  b.failure(0, { errorType: "TIMEOUT" });
  assert.equal(b.acquire(100), 0, "the trial");
  assert.equal(b.acquire(150), 50, "another caller waits for it");
  assert.equal(b.acquire(200), 0, "a trial silent for a whole cooldown no longer blocks");
  b.failure(210);
  assert.equal(b.state(210), "open");
  assert.deepEqual(b.snapshot(210).last_error, { error_type: "TIMEOUT" });
});

Deno.test("MemoryBreakerStore forgets healthy endpoints and keeps at most maxKeys", () => {
  const store = new MemoryBreakerStore(3);
  const options = { threshold: 5, cooldownMs: 1000 };
  for (const key of ["a", "b", "c", "d"]) store.failure(key, options, 0);
  assert.deepEqual(Object.keys(store.snapshots(0)), ["b", "c", "d"], "the least recently touched went");
  store.success("c");
  assert.deepEqual(Object.keys(store.snapshots(0)), ["b", "d"]);
  assert.deepEqual(store.acquire("never-failed", options, 0), { waitMs: 0 });
  store.release("never-failed");
  assert.deepEqual(Object.keys(store.snapshots(0)), ["b", "d"], "asking creates nothing");
});

Deno.test("endpointFamily() keys each provider's endpoints without one key per record", () => {
  const cases: [string, string, string][] = [
    [
      "https://api.stlouisfed.org",
      "https://api.stlouisfed.org/fred/series/observations?x=1",
      "api.stlouisfed.org/fred/series",
    ],
    [
      "https://api.stlouisfed.org",
      "https://api.stlouisfed.org/fred/category/children",
      "api.stlouisfed.org/fred/category",
    ],
    [
      "https://api.stlouisfed.org",
      "https://api.stlouisfed.org/geofred/series/data",
      "api.stlouisfed.org/geofred/series",
    ],
    [
      "https://www.stat-search.boj.or.jp",
      "https://www.stat-search.boj.or.jp/api/v1/getDataCode?db=FM01",
      "www.stat-search.boj.or.jp/api/v1/getDataCode",
    ],
    [
      "https://search.worldbank.org/api/v3/wds",
      "https://search.worldbank.org/api/v3/wds?qterm=x",
      "search.worldbank.org/api/v3/wds",
    ],
    [
      "https://no.wikipedia.org/",
      "https://no.wikipedia.org/w/api.php?action=query",
      "no.wikipedia.org/w/api.php",
    ],
    ["https://snl.no/", "https://snl.no/bergen.json", "snl.no"],
    ["https://snl.no/", "https://snl.no/api/v1/search?query=x", "snl.no/api/v1/search"],
    [
      "https://api.ra.no",
      "https://api.ra.no/brukerminner/collections/x/items/123",
      "api.ra.no/brukerminner/collections",
    ],
    [
      "https://kart.ra.no/arcgis/rest/services/Distribusjon",
      "https://kart.ra.no/arcgis/rest/services/Distribusjon/Kulturminner/MapServer/0/query",
      "kart.ra.no/arcgis/rest/services/Distribusjon/Kulturminner/MapServer",
    ],
    ["https://api.ra.no", "https://api.ra.no/items/42", "api.ra.no/items"],
  ];
  for (const [base, url, family] of cases) assert.equal(endpointFamily(new URL(url), base), family, url);
  assert.ok(endpointFamily(new URL(`https://x.org/${"a".repeat(500)}`), "https://x.org").length <= 200);
});
