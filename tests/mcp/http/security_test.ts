import assert from "node:assert/strict";
import { MAX_HEADER_BYTES } from "../../../lib/mcp/http/mod.ts";
import { MAX_URL_LENGTH } from "../../../lib/mcp/http/handler.ts";
import { forwardedRequest } from "../../../lib/mcp/http/_requests.ts";
import {
  BASE,
  initializeBody,
  jsonRpcMessages,
  openSession,
  POST_HEADERS,
  postMcp,
  startHarness,
} from "./_harness.ts";

const TOKEN = "s3cret-token-for-tests";

Deno.test("MCP endpoints answer 401 with WWW-Authenticate without the bearer token", async () => {
  await using h = await startHarness({ server: { auth_token: TOKEN } });
  for (const path of ["/mcp", "/sse", "/message?session_id=x"]) {
    const res = await h.fetch(`${BASE}${path}`, {
      method: path === "/sse" ? "GET" : "POST",
      headers: POST_HEADERS,
      body: path === "/sse" ? null : initializeBody(),
    });
    assert.equal(res.status, 401, path);
    assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="opendata-mcp"', path);
    assert.equal((await res.json()).error.code, -32000);
  }
  const wrong = await postMcp(h, initializeBody(), { Authorization: "Bearer not-the-token" });
  assert.equal(wrong.status, 401);
  assert.match(wrong.headers.get("www-authenticate")!, /error="invalid_token"/);
  assert.match((await wrong.json()).error.message, /not valid/);
  const basic = await postMcp(h, initializeBody(), { Authorization: `Basic ${btoa(`u:${TOKEN}`)}` });
  assert.equal(basic.status, 401, "only the Bearer scheme counts");
  await basic.body?.cancel();

  const health = await h.fetch(`${BASE}/health`);
  assert.equal(health.status, 200, "/health stays open");
  await health.body?.cancel();
  const session = await openSession(h, { Authorization: `Bearer ${TOKEN}` });
  assert.ok(session, "the right token opens a session");
  assert.ok(!JSON.stringify(h.logs).includes(TOKEN), "the token never reaches the logs");
});

Deno.test("a foreign Origin gets 403; loopback and listed origins pass", async () => {
  await using h = await startHarness({ server: { allowed_origins: ["https://agents.example.net"] } });
  const foreign = await postMcp(h, initializeBody(), { Origin: "http://evil.example.com" });
  assert.equal(foreign.status, 403);
  assert.match((await foreign.json()).error.message, /Origin "http:\/\/evil.example.com" is not allowed/);
  const opaque = await postMcp(h, initializeBody(), { Origin: "null" });
  assert.equal(opaque.status, 403, "an opaque origin is refused");
  await opaque.body?.cancel();
  for (const origin of ["http://localhost:6274", "http://127.0.0.1:8000", "https://agents.example.net"]) {
    const res = await postMcp(h, initializeBody(), { Origin: origin });
    assert.equal(res.status, 200, origin);
    await res.text();
  }
  const health = await h.fetch(`${BASE}/health`, { headers: { Origin: "http://evil.example.com" } });
  assert.equal(health.status, 403, "the check covers every path");
  await health.body?.cancel();
});

Deno.test("a foreign Host gets 403 when bound to loopback and passes when bound elsewhere", async () => {
  await using loopback = await startHarness();
  const evil = new Request(`${BASE}/mcp`, {
    method: "POST",
    headers: { ...POST_HEADERS, Host: "evil.example.com" },
    body: initializeBody(),
  });
  assert.equal(evil.headers.get("host"), "evil.example.com", "Request keeps a hand-set Host header");
  const res = await loopback.call(evil);
  assert.equal(res.status, 403);
  assert.match((await res.json()).error.message, /Host "evil.example.com" is not allowed/);
  for (const host of ["localhost:8000", "127.0.0.1:8000", "[::1]:8000"]) {
    const ok = await loopback.call(new Request(`${BASE}/health`, { headers: { Host: host } }));
    assert.equal(ok.status, 200, host);
    await ok.body?.cancel();
  }
  // Not what a browser sends, but a check against DNS rebinding must not take them for loopback.
  for (
    const host of [
      "localhost:8000@evil.example.com",
      "localhost:x",
      "[::1]evil.example.com",
      "localhost:8000:80",
    ]
  ) {
    const tricked = await loopback.call(new Request(`${BASE}/health`, { headers: { Host: host } }));
    assert.equal(tricked.status, 403, host);
    await tricked.body?.cancel();
  }

  await using listed = await startHarness({ server: { allowed_hosts: ["mcp.example.org"] } });
  const named = await listed.call(
    new Request(`${BASE}/health`, { headers: { Host: "mcp.example.org:8000" } }),
  );
  assert.equal(named.status, 200, "allowed_hosts extends the loopback names");
  await named.body?.cancel();

  await using open = await startHarness({ server: { http_host: "0.0.0.0" } });
  const public_ = await open.call(new Request(`${BASE}/health`, { headers: { Host: "mcp.example.org" } }));
  assert.equal(public_.status, 200, "no Host check by default on a public bind");
  await public_.body?.cancel();
});

Deno.test("a body over max_body_bytes gets 413, declared or streamed", async () => {
  await using h = await startHarness({ server: { max_body_bytes: 2048 } });
  const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(4096) } });
  const declared = await postMcp(h, big);
  assert.equal(declared.status, 413);
  assert.match((await declared.json()).error.message, /limit is 2048 bytes/);
  const streamed = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: POST_HEADERS,
    body: new Blob([big]).stream(),
  });
  assert.equal(streamed.status, 413, "a body without Content-Length is cut off at the cap too");
  await streamed.body?.cancel();
  const sse = await h.fetch(`${BASE}/sse`);
  const endpoint = (await sse.body!.pipeThrough(new TextDecoderStream()).getReader().read()).value!
    .split("data: ")[1]!.trim();
  const legacy = await h.fetch(`${BASE}${endpoint}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: big,
  });
  assert.equal(legacy.status, 413, "legacy /message has the same cap");
  await legacy.body?.cancel();
});

Deno.test("a burst over rate_limit_per_minute gets 429 with Retry-After, per client", async () => {
  await using h = await startHarness({ server: { rate_limit_enabled: true, rate_limit_per_minute: 3 } });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await h.fetch(`${BASE}/`);
    statuses.push(res.status);
    if (res.status === 429) {
      assert.equal(res.headers.get("retry-after"), "20", "one token comes back every 20 s at 3/min");
      assert.match((await res.json()).error.message, /limit is 3 per minute/);
    } else {
      await res.body?.cancel();
    }
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  const other = await h.call(new Request(`${BASE}/`), "198.51.100.7");
  assert.equal(other.status, 200, "another client has its own budget");
  await other.body?.cancel();
  const health = await h.fetch(`${BASE}/health`);
  assert.equal(health.status, 200, "/health is not rate limited");
  await health.body?.cancel();
  h.clock.advance(20_000);
  const later = await h.fetch(`${BASE}/`);
  assert.equal(later.status, 200, "a token is back after Retry-After");
  await later.body?.cancel();
});

Deno.test("without trust_proxy, forwarding headers do not buy a client a new rate-limit budget", async () => {
  await using h = await startHarness({ server: { rate_limit_enabled: true, rate_limit_per_minute: 1 } });
  const statuses: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const res = await h.fetch(`${BASE}/`, {
      headers: {
        "X-Forwarded-For": `203.0.113.${i}`,
        "X-Real-IP": `203.0.113.${i}`,
        "Forwarded": `for=203.0.113.${i}`,
        "CF-Connecting-IP": `203.0.113.${i}`,
        "True-Client-IP": `203.0.113.${i}`,
      },
    });
    statuses.push(res.status);
    await res.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 429, 429], "the peer address decides");
});

Deno.test("trust_proxy takes the rate-limit client from the last X-Forwarded-For entry", async () => {
  await using h = await startHarness({
    server: { rate_limit_enabled: true, rate_limit_per_minute: 1, trust_proxy: true },
  });
  const via = (chain: string) => h.fetch(`${BASE}/`, { headers: { "X-Forwarded-For": chain } });
  assert.equal((await via("203.0.113.9, 10.0.0.1")).status, 200);
  assert.equal(
    (await via("spoofed, 10.0.0.1")).status,
    429,
    "a forged first entry does not buy a new budget",
  );
  assert.equal((await via("10.0.0.2")).status, 200);
});

Deno.test("CORS: a configured origin gets preflight and exposed headers; others get none", async () => {
  await using h = await startHarness({ server: { cors_origins: ["http://localhost:6274"] } });
  const preflight = await h.fetch(`${BASE}/mcp`, {
    method: "OPTIONS",
    headers: { Origin: "http://localhost:6274", "Access-Control-Request-Method": "POST" },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), "http://localhost:6274");
  assert.match(preflight.headers.get("access-control-allow-headers")!, /Mcp-Session-Id/);
  assert.match(preflight.headers.get("access-control-allow-headers")!, /Authorization/);
  assert.match(preflight.headers.get("access-control-allow-methods")!, /DELETE/);
  const res = await postMcp(h, initializeBody(), { Origin: "http://localhost:6274" });
  assert.equal(res.headers.get("access-control-allow-origin"), "http://localhost:6274");
  assert.match(res.headers.get("access-control-expose-headers")!, /Mcp-Session-Id/);
  await res.text();
  const other = await postMcp(h, initializeBody(), { Origin: "http://127.0.0.1:3000" });
  assert.equal(other.status, 200, "a loopback origin passes the Origin check");
  assert.equal(other.headers.get("access-control-allow-origin"), null, "but gets no CORS grant");
  await other.text();
});

Deno.test("headers over the cap get 431", async () => {
  await using h = await startHarness();
  const res = await h.fetch(`${BASE}/health`, { headers: { "X-Padding": "y".repeat(MAX_HEADER_BYTES) } });
  assert.equal(res.status, 431);
  await res.body?.cancel();
});

Deno.test("POST /mcp refuses a non-JSON content type with 415", async () => {
  await using h = await startHarness();
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "text/plain", Accept: "application/json, text/event-stream" },
    body: initializeBody(),
  });
  assert.equal(res.status, 415);
  const [msg] = await jsonRpcMessages(res);
  assert.match((msg!["error"] as { message: string }).message, /Content-Type must be application\/json/);
});

Deno.test("forwardedRequest() drops credentials and a client's owner, client, toolsets and request id headers", () => {
  const fromClient = new Request("http://127.0.0.1:8000/mcp", {
    method: "POST",
    headers: {
      "x-opendata-owner": "session:someone-else",
      "x-opendata-toolsets": "fred-data",
      "x-request-id": "chosen-by-client",
      "x-opendata-client": "someone-else",
      "mcp-session-id": "abc",
      "authorization": "Bearer the-clients-token",
      "cookie": "a=b",
    },
  });
  const forwarded = forwardedRequest(fromClient);
  assert.equal(forwarded.headers.get("authorization"), null, "the client's token goes no further");
  assert.equal(forwarded.headers.get("cookie"), null);
  // Whose work a request is travels in its context now: a client's claims are not passed on.
  assert.equal(forwarded.headers.get("x-opendata-client"), null);
  assert.equal(forwarded.headers.get("x-opendata-owner"), null);
  assert.equal(forwarded.headers.get("x-opendata-toolsets"), null);
  assert.equal(forwarded.headers.get("x-request-id"), null);
  assert.equal(forwarded.headers.get("mcp-session-id"), "abc", "the client's own headers pass");
  assert.equal(forwarded.url, fromClient.url);
  assert.equal(forwarded.method, "POST");
  const plain = new Request("http://127.0.0.1:8000/mcp", { headers: { "mcp-session-id": "abc" } });
  assert.equal(forwardedRequest(plain), plain, "a request with nothing to drop is not copied");
  assert.equal(forwardedRequest(plain, "http://127.0.0.1:9000/mcp").url, "http://127.0.0.1:9000/mcp");
});

Deno.test("the handler routes by the client's URL from the connection info, not the private socket's", async () => {
  await using h = await startHarness();
  // As the guard hands a request over its Unix socket: Deno names the socket in the URL.
  const viaSocket = (path: string, init?: RequestInit): Promise<Response> =>
    h.handler(
      new Request(`http+unix://%2Ftmp%2Fguard.sock${path}`, {
        ...init,
        headers: { host: "127.0.0.1:8000", ...init?.headers },
      }),
      { remoteAddr: { hostname: "192.0.2.9" }, url: `http://127.0.0.1:8000${path}` },
    );
  const health = await viaSocket("/health");
  assert.equal(health.status, 200);
  assert.equal((await health.json()).status, "ok");
  const init = await viaSocket("/mcp", {
    method: "POST",
    headers: { ...POST_HEADERS },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    }),
  });
  assert.equal(init.status, 200);
  assert.ok(init.headers.get("mcp-session-id"), "a session opened at the client's /mcp");
  await init.body?.cancel();
  // A Host that makes no URL is refused as the client's mistake.
  const bad = await h.handler(new Request("http+unix://%2Ftmp%2Fguard.sock/health"), {
    remoteAddr: { hostname: "192.0.2.9" },
    url: "http://bad host/health",
  });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
});

Deno.test("the handler measures the 414 URL limit on the client's URL from the connection info, not the socket's", async () => {
  await using h = await startHarness();
  const socket = `http+unix://%2Ftmp%2F${"s".repeat(200)}.sock`;
  const viaSocket = (path: string): Promise<Response> =>
    h.handler(
      new Request(`${socket}${path}`, { headers: { host: "127.0.0.1:8000" } }),
      { remoteAddr: { hostname: "192.0.2.9" }, url: `http://127.0.0.1:8000${path}` },
    );
  const client = "http://127.0.0.1:8000".length;
  // Just under the limit as the client sent it, though the socket's URL is longer: answered.
  const fits = await viaSocket(`/health?pad=${"a".repeat(MAX_URL_LENGTH - client - "/health?pad=".length)}`);
  assert.equal(fits.status, 200);
  await fits.body?.cancel();
  // One character over, as the client sent it: refused.
  const over = await viaSocket(
    `/health?pad=${"a".repeat(MAX_URL_LENGTH - client - "/health?pad=".length + 1)}`,
  );
  assert.equal(over.status, 414);
  assert.match(await over.text(), new RegExp(`longer than ${MAX_URL_LENGTH} characters`));
});
