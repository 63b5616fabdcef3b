// The shared client's redirect policy in process: which hops are followed, what crosses to
// another origin, and the SSRF guard on the first URL of every client.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import type { ClientOptions } from "../../lib/http/runtime.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { upstreamFailure } from "../fakes/upstream_failure.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

const KEY = "0123456789abcdef0fedcba987654321";

function clientFor(fake: FakeUpstream, options: Partial<ClientOptions> = {}, runtime?: HttpRuntime) {
  return (runtime ?? new HttpRuntime({ clock: new FakeClock() })).client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5_000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 2 },
    secretParams: ["api_key"],
    ...options,
  });
}

Deno.test("HttpClient follows a redirect to a listed origin without the secret parameter or credential headers", async () => {
  await using sister = FakeUpstream.start([{ path: "/moved", reply: { json: { here: true } } }]);
  await using fake = FakeUpstream.start([{
    path: "/start",
    reply: (r) => ({ status: 302, headers: { location: `${sister.origin}/moved${r.url.search}` } }),
  }]);
  const client = clientFor(fake, {
    redirectOrigins: [sister.origin],
    headers: { authorization: "Bearer s3cret", "x-api-key": "s3cret-too" },
    secretHeaders: ["x-api-key"],
  });
  const r = await client.json("/start", { query: { api_key: KEY, q: "x" }, headers: { cookie: "a=b" } });
  assert.deepEqual(r.data, { here: true });
  const sent = fake.requests[0]!;
  assert.equal(sent.url.searchParams.get("api_key"), KEY, "the configured origin gets the key");
  assert.equal(sent.headers.get("authorization"), "Bearer s3cret");
  const moved = sister.requests[0]!;
  assert.equal(moved.url.searchParams.get("api_key"), null, "the other origin does not");
  assert.equal(moved.url.searchParams.get("q"), "x");
  for (const h of ["authorization", "cookie", "x-api-key"]) assert.equal(moved.headers.get(h), null, h);
  assert.equal(r.url, `${sister.origin}/moved?q=x`);
});

Deno.test("HttpClient refuses a redirect to an unlisted origin before contacting it, and does not retry", async () => {
  await using other = FakeUpstream.start([{ path: /.*/, reply: { json: 1 } }]);
  await using fake = FakeUpstream.start([
    {
      path: "/a",
      reply: (r) => ({ status: 307, headers: { location: `${other.origin}/a${r.url.search}` } }),
    },
    { path: "/b", reply: (r) => ({ status: 301, headers: { location: `https://${r.url.host}/b` } }) },
    { path: "/c", reply: { status: 302, headers: { location: "file:///etc/passwd" } } },
    { path: "/d", reply: { status: 302, headers: { location: "//10.1.2.3/d" } } },
  ]);
  const client = clientFor(fake);
  const a = await upstreamFailure(client.json("/a", { query: { api_key: KEY } }));
  assert.equal(a.errorType, "UPSTREAM_REDIRECT_REFUSED");
  assert.equal(a.status, 307);
  assert.equal(a.retryable, false);
  assert.match(
    a.message,
    /^Test API redirected to another host \("127\.0\.0\.1:\d+"\): "127\.0\.0\.1" is a loopback/,
  );
  assert.ok(!JSON.stringify(a.toPayload()).includes(KEY));
  assert.equal(fake.requestsTo("/a").length, 1);
  assert.equal(other.requests.length, 0);
  const b = await upstreamFailure(client.json("/b"));
  assert.match(
    b.message,
    /another origin \("https:\/\/127\.0\.0\.1:\d+"\)/,
    "a scheme change is another origin",
  );
  assert.match((await upstreamFailure(client.json("/c"))).message, /redirected to a "file" URL/);
  assert.match((await upstreamFailure(client.json("/d"))).message, /"10\.1\.2\.3" is a private address/);
});

Deno.test("HttpClient turns a POST into a GET without its body on 303, and keeps it on 307", async () => {
  await using fake = FakeUpstream.start([
    { method: "POST", path: "/see-other", reply: { status: 303, headers: { location: "/result" } } },
    { method: "POST", path: "/temporary", reply: { status: 307, headers: { location: "/again" } } },
    { path: "/result", reply: { json: { got: true } } },
    { method: "POST", path: "/again", reply: (r) => ({ json: { body: r.body } }) },
  ]);
  const client = clientFor(fake);
  const post = { method: "POST" as const, body: "where=1", headers: { "content-type": "text/plain" } };
  assert.deepEqual((await client.json("/see-other", post)).data, { got: true });
  const result = fake.requestsTo("/result")[0]!;
  assert.equal(result.method, "GET");
  assert.equal(result.body, "");
  assert.equal(result.headers.get("content-type"), null);
  assert.deepEqual((await client.json("/temporary", post)).data, { body: "where=1" });
});

Deno.test("HttpClient gives up after maxRedirects hops on its own origin", async () => {
  await using fake = FakeUpstream.start([{
    path: /^\/loop/,
    reply: (_r, n) => ({ status: 302, headers: { location: `/loop${n + 1}` } }),
  }]);
  const e = await upstreamFailure(clientFor(fake, { maxRedirects: 3 }).json("/loop"));
  assert.equal(e.errorType, "API_ERROR");
  assert.match(e.message, /redirected too many times/);
  assert.equal(fake.requests.length, 4);
});

Deno.test("HttpClient checks a first URL off the configured origin with the SSRF guard, for every provider", async () => {
  await using fake = FakeUpstream.start([{ path: "/x", reply: { json: 1 } }]);
  const resolve = (host: string) =>
    host === "internal.example.com" ? Promise.resolve(["10.0.0.5"]) : Promise.reject(new Error("NXDOMAIN"));
  const client = clientFor(fake, {}, new HttpRuntime({ clock: new FakeClock(), resolve }));
  for (
    const url of ["http://10.0.0.7/x", "http://169.254.169.254/latest", "https://internal.example.com/x"]
  ) {
    const e = await upstreamFailure(client.json(url));
    assert.equal(e.errorType, "VALIDATION_ERROR", url);
  }
  assert.deepEqual(
    (await client.json(`${fake.origin}/x`)).data,
    1,
    "the configured origin itself is trusted",
  );
});
