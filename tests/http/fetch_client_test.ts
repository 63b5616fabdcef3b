import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { UpstreamError } from "../../lib/errors.ts";
import type { RetryPolicy } from "../../lib/http/retry.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { networkReason } from "../../lib/http/fetch_client.ts";
import { requestScope } from "../../lib/http/request_scope.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import type { ClientOptions } from "../../lib/http/runtime.ts";
import { Logger } from "../../lib/log.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

interface Setup {
  fake: FakeUpstream;
  clock: FakeClock;
  runtime: HttpRuntime;
  lines: Record<string, unknown>[];
  client: ReturnType<HttpRuntime["client"]>;
}

function setup(
  fake: FakeUpstream,
  options: Partial<ClientOptions> = {},
  retry: Partial<RetryPolicy> = {},
): Setup {
  const clock = new FakeClock();
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({
    level: "debug",
    write: (l) => lines.push(JSON.parse(l)),
    now: () => clock.now(),
  });
  const runtime = new HttpRuntime({ clock, random: () => 0.5, logger });
  const client = runtime.client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5_000,
    retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, ...retry },
    ...options,
  });
  return { fake, clock, runtime, lines, client };
}

async function rejectsWith(p: Promise<unknown>, check: (e: UpstreamError) => void): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof UpstreamError, `expected UpstreamError, got ${e}`);
    check(e);
    return;
  }
  assert.fail("expected the call to fail");
}

Deno.test("HttpClient.json() retries after 503 and then succeeds", async () => {
  await using fake = FakeUpstream.start([{
    path: "/data",
    reply: [{ status: 503, body: "busy" }, { json: { ok: 1 } }],
  }]);
  const { client, clock, lines } = setup(fake);
  const res = await client.json<{ ok: number }>("/data");
  assert.deepEqual(res.data, { ok: 1 });
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(clock.sleeps, [100], "one backoff of baseDelayMs (jitter centred by random=0.5)");
  const upstream = lines.filter((l) => l["msg"] === "upstream");
  assert.deepEqual(upstream.map((l) => [l["status"], l["attempt"]]), [[503, 1], [200, 2]]);
  assert.ok(
    upstream.every((l) => typeof l["duration_ms"] === "number" && typeof l["upstream_url"] === "string"),
  );
});

Deno.test("HttpClient.json() does not retry a 404 and reports it with status and hint", async () => {
  await using fake = FakeUpstream.start([{
    path: "/missing",
    reply: { status: 404, json: { error: "nope" } },
  }]);
  const { client } = setup(fake);
  await rejectsWith(client.json("/missing"), (e) => {
    assert.equal(e.errorType, "API_ERROR");
    assert.equal(e.status, 404);
    assert.equal(e.retryable, false);
    assert.match(e.message, /HTTP 404/);
    assert.match(e.body ?? "", /nope/);
  });
  assert.equal(fake.requests.length, 1);
});

Deno.test("HttpClient.json() honours Retry-After on 429 within the deadline", async () => {
  await using fake = FakeUpstream.start([{
    path: "/limited",
    reply: [{ status: 429, headers: { "retry-after": "2" } }, { json: [1] }],
  }]);
  const { client, clock } = setup(fake);
  const res = await client.json("/limited");
  assert.deepEqual(res.data, [1]);
  assert.deepEqual(clock.sleeps, [2000]);
});

Deno.test("HttpClient.json() fails at once with retry_after_s when Retry-After passes the deadline", async () => {
  await using fake = FakeUpstream.start([{
    path: "/limited",
    reply: { status: 429, headers: { "retry-after": "120" } },
  }]);
  const { client, clock } = setup(fake);
  await rejectsWith(client.json("/limited"), (e) => {
    assert.equal(e.errorType, "RATE_LIMITED");
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterS, 120);
    assert.match(e.message, /past this call's deadline/);
  });
  assert.deepEqual(clock.sleeps, [], "never sleeps past the deadline");
  assert.equal(fake.requests.length, 1);
});

Deno.test("HttpClient honours per-status retry counts (FRED: 429 three times, 5xx twice)", async () => {
  await using fake = FakeUpstream.start([
    { path: "/429", reply: { status: 429 } },
    { path: "/500", reply: { status: 500 } },
  ]);
  const { client } = setup(
    fake,
    { timeoutMs: 60_000, breaker: { threshold: 100, cooldownMs: 1000 } },
    { maxRetries: 2, statusMaxRetries: { 429: 3 } },
  );
  await rejectsWith(client.json("/429"), (e) => assert.equal(e.status, 429));
  assert.equal(fake.requestsTo("/429").length, 4);
  await rejectsWith(client.json("/500"), (e) => assert.equal(e.status, 500));
  assert.equal(fake.requestsTo("/500").length, 3);
});

Deno.test("HttpClient opens the breaker after 5 failures, fails fast, and recovers after the cooldown", async () => {
  await using fake = FakeUpstream.start([{
    path: "/flaky",
    reply: (_r, n) => (n < 5 ? { status: 500 } : { json: { back: true } }),
  }]);
  const { client, clock, runtime } = setup(fake, { breaker: { threshold: 5, cooldownMs: 60_000 } }, {
    maxRetries: 0,
  });
  for (let i = 0; i < 5; i++) await rejectsWith(client.json("/flaky"), (e) => assert.equal(e.status, 500));
  await rejectsWith(client.json("/flaky"), (e) => {
    assert.equal(e.errorType, "CIRCUIT_OPEN");
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterS, 60);
  });
  assert.equal(fake.requests.length, 5, "the open breaker sent nothing");
  assert.equal(Object.values(await runtime.breakers())[0]?.state, "open");
  clock.advance(60_000);
  const res = await client.json("/flaky");
  assert.deepEqual(res.data, { back: true });
  assert.deepEqual(await runtime.breakers(), {}, "closed again, with nothing left to remember");
});

Deno.test("HttpClient reopens the breaker when the half-open trial fails", async () => {
  await using fake = FakeUpstream.start([{ path: "/down", reply: { status: 503 } }]);
  const { client, clock } = setup(fake, { breaker: { threshold: 2, cooldownMs: 1000 } }, { maxRetries: 0 });
  await rejectsWith(client.json("/down"), () => {});
  await rejectsWith(client.json("/down"), () => {});
  clock.advance(1000);
  await rejectsWith(client.json("/down"), (e) => assert.equal(e.status, 503));
  await rejectsWith(client.json("/down"), (e) => assert.equal(e.errorType, "CIRCUIT_OPEN"));
  assert.equal(fake.requests.length, 3);
});

Deno.test("HttpClient caches successes with their age and bypasses the cache with fresh", async () => {
  await using fake = FakeUpstream.start([{ path: "/c", reply: (_r, n) => ({ json: { n } }) }]);
  const { client, clock } = setup(fake, { cacheTtlMs: 60_000 });
  const first = await client.json<{ n: number }>("/c", { query: { q: "x" } });
  assert.equal(first.cache, "miss");
  clock.advance(5_000);
  const second = await client.json<{ n: number }>("/c", { query: { q: "x" } });
  assert.equal(second.cache, "hit");
  assert.equal(second.ageS, 5);
  assert.deepEqual(second.data, { n: 0 });
  const other = await client.json<{ n: number }>("/c", { query: { q: "y" } });
  assert.equal(other.cache, "miss", "the key is the full request");
  const fresh = await client.json<{ n: number }>("/c", { query: { q: "x" }, fresh: true });
  assert.equal(fresh.cache, "bypass");
  assert.deepEqual(fresh.data, { n: 2 });
  clock.advance(60_001);
  const expired = await client.json<{ n: number }>("/c", { query: { q: "x" } });
  assert.equal(expired.cache, "miss");
  assert.equal(fake.requests.length, 4);
});

Deno.test("HttpClient never caches errors or undecodable bodies", async () => {
  await using fake = FakeUpstream.start([
    { path: "/e", reply: [{ status: 400 }, { json: { ok: true } }] },
    { path: "/h", reply: [{ body: "<html>oops</html>", contentType: "text/html" }, { json: { ok: true } }] },
  ]);
  const { client } = setup(fake, { cacheTtlMs: 60_000 });
  await rejectsWith(client.json("/e"), (e) => assert.equal(e.status, 400));
  assert.deepEqual((await client.json("/e")).data, { ok: true });
  await rejectsWith(client.json("/h"), (e) => assert.equal(e.errorType, "DECODE_ERROR"));
  assert.deepEqual((await client.json("/h")).data, { ok: true });
});

Deno.test("HttpClient rate limit keeps a sliding window without real sleeping", async () => {
  await using fake = FakeUpstream.start([{ path: "/r", reply: { json: 1 } }]);
  const { client, clock } = setup(fake, { rateLimits: [{ requests: 2, perMs: 1000 }], timeoutMs: 60_000 });
  for (let i = 0; i < 5; i++) await client.json("/r");
  assert.equal(fake.requests.length, 5);
  assert.deepEqual(clock.sleeps, [1000, 1000], "two per window of 1 s, never three");
});

Deno.test("HttpClient rate limit paces one request per interval", async () => {
  await using fake = FakeUpstream.start([{ path: "/r", reply: { json: 1 } }]);
  const { client, clock } = setup(fake, { rateLimits: [{ requests: 1, perMs: 500 }], timeoutMs: 60_000 });
  for (let i = 0; i < 4; i++) await client.json("/r");
  assert.deepEqual(clock.sleeps, [500, 500, 500]);
});

Deno.test("HttpClient rate limit refuses a wait past the deadline with RATE_LIMITED", async () => {
  await using fake = FakeUpstream.start([{ path: "/r", reply: { json: 1 } }]);
  const { client } = setup(fake, { rateLimits: [{ requests: 1, perMs: 60_000 }], timeoutMs: 1000 });
  await client.json("/r");
  await rejectsWith(client.json("/r"), (e) => {
    assert.equal(e.errorType, "RATE_LIMITED");
    assert.equal(e.retryAfterS, 60);
  });
});

Deno.test("HttpClient.json() turns HTML and truncated bodies into clear DECODE_ERRORs", async () => {
  await using fake = FakeUpstream.start([
    { path: "/html", reply: { body: "<!DOCTYPE html><p>Maintenance</p>", contentType: "text/html" } },
    { path: "/sneaky", reply: { body: "<html><body>hi</body></html>", contentType: "application/json" } },
    { path: "/cut", reply: { json: { a: [1, 2, 3, 4, 5] }, truncateAt: 9 } },
    { path: "/empty", reply: { body: "", contentType: "application/json" } },
  ]);
  const { client } = setup(fake);
  await rejectsWith(client.json("/html"), (e) => {
    assert.equal(e.errorType, "DECODE_ERROR");
    assert.match(e.message, /HTML page instead of JSON/);
  });
  await rejectsWith(client.json("/sneaky"), (e) => assert.match(e.message, /HTML page/));
  await rejectsWith(client.json("/cut"), (e) => {
    assert.equal(e.errorType, "DECODE_ERROR");
    assert.match(e.message, /not valid JSON \(it may have been cut off\)/);
  });
  await rejectsWith(client.json("/empty"), (e) => assert.match(e.message, /empty body/));
});

Deno.test("HttpClient retries a connection reset mid-body as a transport error", async () => {
  await using fake = FakeUpstream.start([{
    path: "/reset",
    reply: [{ json: { big: "x".repeat(5000) }, resetAfterBytes: 100 }, { json: { ok: true } }],
  }]);
  const { client } = setup(fake);
  const res = await client.json("/reset");
  assert.deepEqual(res.data, { ok: true });
  assert.equal(fake.requests.length, 2);
});

Deno.test("HttpClient reports an unreachable upstream as a retryable TRANSPORT_ERROR", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const clock = new FakeClock();
  const runtime = new HttpRuntime({ clock, random: () => 0.5 });
  const client = runtime.client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: `http://127.0.0.1:${port}`,
    timeoutMs: 5000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 1, baseDelayMs: 10 },
  });
  await rejectsWith(client.json("/x"), (e) => {
    assert.equal(e.errorType, "TRANSPORT_ERROR");
    assert.equal(e.retryable, true);
    assert.match(e.message, /Could not reach Test API/);
  });
  assert.deepEqual(clock.sleeps, [10]);
});

Deno.test("HttpClient enforces the call deadline on a slow upstream", async () => {
  await using fake = FakeUpstream.start([{ path: "/slow", reply: { json: 1, delayMs: 2000 } }]);
  const { client } = setup(fake, { timeoutMs: 150 });
  const started = performance.now();
  await rejectsWith(client.json("/slow"), (e) => {
    assert.equal(e.errorType, "TIMEOUT");
    assert.equal(e.retryable, true);
  });
  assert.ok(performance.now() - started < 1500, "gave up at the deadline, not after the body");
});

Deno.test("HttpClient aborts the fetch in flight when the caller cancels", async () => {
  await using fake = FakeUpstream.start([{ path: "/slow", reply: { json: 1, delayMs: 2000 } }]);
  const { client } = setup(fake);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  await rejectsWith(client.json("/slow", { signal: controller.signal }), (e) => {
    assert.equal(e.errorType, "CANCELLED");
  });
});

Deno.test("HttpClient refuses bodies over the size cap", async () => {
  await using fake = FakeUpstream.start([{
    path: "/big",
    reply: { body: "x".repeat(5000), contentType: "text/plain" },
  }]);
  const { client } = setup(fake, { maxBodyBytes: 1024 });
  await rejectsWith(client.text("/big"), (e) => {
    assert.equal(e.errorType, "DECODE_ERROR");
    assert.match(e.message, /more than 1 KiB/);
  });
});

Deno.test("HttpClient keeps secret query values out of logs and errors", async () => {
  await using fake = FakeUpstream.start([{
    path: "/k",
    reply: { status: 400, json: { error_message: "bad" } },
  }]);
  const { client, lines } = setup(fake, { secretParams: ["api_key"] });
  await rejectsWith(client.json("/k", { query: { api_key: "abcdef0123456789abcdef0123456789" } }), (e) => {
    assert.ok(!JSON.stringify(e.toPayload()).includes("abcdef0123456789"));
    assert.ok(e.url?.includes("api_key=***"));
  });
  assert.equal(fake.requests[0]?.url.searchParams.get("api_key"), "abcdef0123456789abcdef0123456789");
  assert.ok(!JSON.stringify(lines).includes("abcdef0123456789"));
});

Deno.test("HttpClient follows redirects and checks every URL with checkUrl", async () => {
  await using fake = FakeUpstream.start([
    { path: "/old", reply: { status: 302, headers: { location: "/new" } } },
    { path: "/new", reply: { json: { moved: true } } },
    { path: "/evil", reply: { status: 302, headers: { location: "http://169.254.169.254/latest" } } },
  ]);
  const checked: string[] = [];
  const { client } = setup(fake, {
    checkUrl: (url) => {
      checked.push(url.pathname);
      if (url.hostname === "169.254.169.254") {
        const e = new Error(`Refusing "${url.host}": a link-local address`);
        e.name = "SsrfError";
        throw e;
      }
    },
  });
  assert.deepEqual((await client.json("/old")).data, { moved: true });
  assert.deepEqual(checked, ["/old", "/new"]);
  await rejectsWith(client.json("/evil"), (e) => {
    assert.equal(e.errorType, "UPSTREAM_REDIRECT_REFUSED");
    assert.match(e.message, /another host \("169\.254\.169\.254"\).*metadata/);
  });
  assert.deepEqual(checked, ["/old", "/new", "/evil"], "the refused target was never checked or fetched");
});

Deno.test("HttpClient.text() decodes Shift_JIS when asked and sends the User-Agent", async () => {
  const sjis = new Uint8Array([0x93, 0xfa, 0x96, 0x7b]); // 日本 in Shift_JIS
  await using fake = FakeUpstream.start([{ path: "/t", reply: { body: sjis, contentType: "text/csv" } }]);
  const { client } = setup(fake);
  const res = await client.text("/t", { encoding: "shift_jis" });
  assert.equal(res.data, "日本");
  assert.match(fake.requests[0]!.headers.get("user-agent") ?? "", /^opendata-mcp\/\d+\.\d+\.\d+ \(\+https:/);
});

Deno.test("HttpClient caps the total retries of a call across different failures", async () => {
  await using fake = FakeUpstream.start([{
    path: "/mixed",
    reply: [{ status: 500 }, { status: 503 }, { status: 502 }, { status: 504 }, { json: { late: true } }],
  }]);
  const { client, clock } = setup(fake, { timeoutMs: 60_000, breaker: { threshold: 100, cooldownMs: 1 } }, {
    maxRetries: 2,
  });
  await rejectsWith(client.json("/mixed"), (e) => assert.equal(e.status, 502));
  assert.equal(fake.requests.length, 3, "one attempt and two retries in all, not two per status");
  assert.deepEqual(clock.sleeps, [100, 200], "backoff keeps doubling across kinds");
});

Deno.test("networkReason() reads the innermost cause and says what failed, without URLs", () => {
  const dns = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (https://no.wikipedia.org/w/api.php?api_key=s3cret): client error (Connect): dns error: failed to lookup address information: Name or service not known",
    ),
  });
  assert.equal(
    networkReason(dns, "no.wikipedia.org"),
    'the name "no.wikipedia.org" could not be resolved (no network, or a DNS problem)',
  );
  assert.equal(
    networkReason(
      new Error("x", { cause: new Error("tcp connect error: Connection refused (os error 111)") }),
      "h",
    ),
    'the connection to "h" was refused',
  );
  const other = networkReason(new Error("odd failure at https://x.example/?api_key=s3cret"), "x.example");
  assert.equal(other, "odd failure at <url>");
});

Deno.test("HttpClient.json() decodes a big cached body under the call's cancellation and deadline", async () => {
  const big = { items: Array.from({ length: 120_000 }, (_, i) => ({ i, name: `item ${i}` })) };
  await using fake = FakeUpstream.start([{ path: "/big", reply: { json: big } }]);
  const { client, clock } = setup(fake, { cacheTtlMs: 60_000 });
  const first = await client.json<typeof big>("/big");
  assert.equal(first.cache, "miss");
  assert.deepEqual(first.data, big);
  const controller = new AbortController();
  controller.abort();
  await rejectsWith(client.json("/big", { signal: controller.signal }), (e) => {
    assert.equal(e.errorType, "CANCELLED");
  });
  await rejectsWith(
    requestScope.run({ fresh: false, deadline: clock.now() }, () => client.json("/big")),
    (e) => {
      assert.equal(e.errorType, "TIMEOUT");
      assert.match(
        e.message,
        /Test API's answer \(\d+ MiB\) was still being read at this tool call's deadline/,
      );
    },
  );
  const hit = await client.json<typeof big>("/big");
  assert.equal(hit.cache, "hit");
  assert.deepEqual(hit.data, big);
  assert.equal(fake.requests.length, 1);
});
