// The OAuth resource server in process, against a real authorization server on loopback
// (oidc-provider): what is refused and why, with which challenge; key rotation; the metadata.
import assert from "node:assert/strict";
import * as jose from "jose";
import { FakeClock } from "../../../lib/clock.ts";
import { SERVICE_CLIENT, startAuthServer } from "../../fakes/oidc.ts";
import type { AuthServer } from "../../fakes/oidc.ts";
import { BASE, initializeBody, POST_HEADERS, postMcp, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";

const RESOURCE = `${BASE}/mcp`;
const PRM = `${BASE}/.well-known/oauth-protected-resource/mcp`;

async function withServers(
  fn: (as: AuthServer, h: Harness, clock: FakeClock) => Promise<void>,
  server: Record<string, unknown> = {},
): Promise<void> {
  const as = await startAuthServer();
  try {
    const clock = new FakeClock(Date.now());
    await using h = await startHarness({
      clock,
      server: { oauth_issuer: as.issuer, oauth_scopes: ["mcp:tools"], ...server },
    });
    await h.handler.ready();
    await fn(as, h, clock);
  } finally {
    await as.close();
  }
}

function init(h: Harness, token?: string): Promise<Response> {
  return postMcp(h, initializeBody(), token ? { Authorization: `Bearer ${token}` } : {});
}

/** The parameters of a `Bearer` challenge. */
function challengeOf(res: Response): Record<string, string> {
  const value = res.headers.get("www-authenticate") ?? "";
  assert.match(value, /^Bearer /);
  const out: Record<string, string> = {};
  for (const m of value.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) out[m[1]!] = m[2]!.replace(/\\(.)/g, "$1");
  return out;
}

async function refused(
  res: Response,
  status: number,
  error: string | undefined,
  message: RegExp,
  metadata = PRM,
): Promise<void> {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  const c = challengeOf(res);
  assert.equal(c["resource_metadata"], metadata);
  assert.equal(c["scope"], "mcp:tools");
  assert.equal(c["error"], error);
  assert.match(body.error.message, message);
  if (error) {
    assert.equal(c["error_description"] && body.error.message.endsWith(c["error_description"]), true);
  }
}

async function forged(
  as: AuthServer,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const { key, kid } = as.signingKey();
  const now = Math.floor(Date.now() / 1000);
  return await new jose.SignJWT({
    iss: as.issuer,
    aud: RESOURCE,
    sub: "mallory",
    scope: "mcp:tools",
    iat: now,
    exp: now + 300,
    ...claims,
  }).setProtectedHeader({ alg: "RS256", kid, typ: "at+jwt", ...header }).sign(key);
}

Deno.test("createHttpHandler() with oauth_issuer serves RFC 9728 metadata and leaves /health open", async () => {
  await withServers(async (as, h) => {
    for (
      const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
    ) {
      const res = await h.fetch(`${BASE}${path}`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), {
        resource: RESOURCE,
        authorization_servers: [as.issuer],
        scopes_supported: ["mcp:tools"],
        bearer_methods_supported: ["header"],
        resource_name: "opendata-mcp",
        resource_documentation: "https://github.com/opendata-mcp/opendata-mcp/blob/main/docs/DEPLOYMENT.md",
      });
    }
    const health = await (await h.fetch(`${BASE}/health`)).json();
    assert.equal(health.auth, "oauth");
    assert.equal(health.writes, "on");
    const root = await (await h.fetch(`${BASE}/`)).json();
    assert.deepEqual([root.auth, root.oauth.issuer], ["oauth", as.issuer]);
  });
});

Deno.test("createHttpHandler() with oauth_issuer answers 401 with a challenge on every MCP endpoint", async () => {
  await withServers(async (_as, h) => {
    await refused(await init(h), 401, undefined, /send an OAuth access token/);
    await refused(
      await h.fetch(`${BASE}/mcp`, { headers: { Accept: "text/event-stream" } }),
      401,
      undefined,
      /OAuth/,
    );
    await refused(
      await h.fetch(`${BASE}/mcp/fred-data`, { method: "POST", headers: POST_HEADERS }),
      401,
      undefined,
      /OAuth/,
    );
    // Legacy SSE is its own resource: its challenge names the metadata for /sse (RFC 9728, one per path).
    const ssePrm = PRM.replace(/\/mcp$/, "/sse");
    await refused(await h.fetch(`${BASE}/sse`), 401, undefined, /OAuth/, ssePrm);
    await refused(
      await h.fetch(`${BASE}/message?session_id=x`, { method: "POST", headers: POST_HEADERS, body: "{}" }),
      401,
      undefined,
      /OAuth/,
      ssePrm,
    );
    await refused(await init(h, "not a token at all"), 401, "invalid_request", /Bearer <access token>/);
  });
});

Deno.test("createHttpHandler() with oauth_issuer accepts a token for this resource and refuses the rest", async (t) => {
  await withServers(async (as, h, clock) => {
    const good = await as.serviceToken(RESOURCE, "mcp:tools");
    const res = await init(h, good);
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();

    await t.step("a token for another audience", async () => {
      const other = await as.serviceToken("http://other.example/mcp", "mcp:tools");
      await refused(
        await init(h, other),
        401,
        "invalid_token",
        /not issued for this server.*http:\/\/127\.0\.0\.1:8000\/mcp/,
      );
    });
    await t.step("a token without the required scope: 403 insufficient_scope", async () => {
      const admin = await as.serviceToken(RESOURCE, "mcp:admin");
      await refused(await init(h, admin), 403, "insufficient_scope", /lacks the scope mcp:tools/);
    });
    await t.step("a token of another issuer (signed with the trusted key)", async () => {
      await refused(
        await init(h, await forged(as, { iss: "http://evil.example" })),
        401,
        "invalid_token",
        /not issued by the authorization server/,
      );
    });
    await t.step("a tampered payload", async () => {
      const [head, payload, sig] = good.split(".");
      const claims = JSON.parse(new TextDecoder().decode(jose.base64url.decode(payload!)));
      claims.sub = "someone-else";
      const tampered = `${head}.${jose.base64url.encode(JSON.stringify(claims))}.${sig}`;
      await refused(await init(h, tampered), 401, "invalid_token", /signature does not verify/);
    });
    await t.step("alg none, and an HMAC signature", async () => {
      const none = new jose.UnsecuredJWT({
        iss: as.issuer,
        aud: RESOURCE,
        sub: "mallory",
        scope: "mcp:tools",
      })
        .setIssuedAt().setExpirationTime("5m").encode();
      await refused(await init(h, none), 401, "invalid_token", /algorithm this server does not accept/);
      const hs = await new jose.SignJWT({ iss: as.issuer, aud: RESOURCE, sub: "mallory", scope: "mcp:tools" })
        .setProtectedHeader({ alg: "HS256", kid: as.signingKey().kid }).setIssuedAt().setExpirationTime("5m")
        .sign(new TextEncoder().encode("a-guessable-shared-secret-of-32-bytes!"));
      await refused(await init(h, hs), 401, "invalid_token", /algorithm this server does not accept/);
    });
    await t.step("a token without exp", async () => {
      await refused(await init(h, await forged(as, { exp: undefined })), 401, "invalid_token", /no expiry/);
    });
    await t.step("an expired token, past the clock skew", async () => {
      clock.advance(300_000 + 59_000);
      const still = await init(h, good);
      assert.equal(still.status, 200, "within the 60 s skew");
      await still.body?.cancel();
      clock.advance(2_000);
      await refused(await init(h, good), 401, "invalid_token", /expired/);
    });
  });
});

Deno.test("createHttpHandler() with oauth_issuer picks up rotated keys, refetching at most once per cooldown", async () => {
  await withServers(async (as, h, clock) => {
    const first = await as.serviceToken(RESOURCE, "mcp:tools");
    assert.equal((await init(h, first)).status, 200);
    const fetchesBefore = as.hits.get("/jwks") ?? 0;
    assert.equal(fetchesBefore, 1);

    // Made-up kids within the cooldown cause no fetch at all.
    for (let i = 0; i < 20; i++) {
      const fake = await forged(as, {}, { kid: crypto.randomUUID() });
      await refused(
        await init(h, fake),
        401,
        "invalid_token",
        /key the authorization server does not publish/,
      );
    }
    assert.equal(as.hits.get("/jwks"), fetchesBefore, "no key-set fetch within the cooldown");

    await as.rotateKeys();
    clock.advance(31_000);
    const rotated = await as.serviceToken(RESOURCE, "mcp:tools");
    const res = await init(h, rotated);
    assert.equal(res.status, 200, "a token signed with the new key is accepted");
    await res.body?.cancel();
    assert.equal(as.hits.get("/jwks"), fetchesBefore + 1, "one refetch");
    // The old key is gone from the issuer's set: tokens it signed are refused now.
    await refused(
      await init(h, first),
      401,
      "invalid_token",
      /key the authorization server does not publish/,
    );
  });
});

Deno.test("createHttpHandler() with oauth_issuer never passes the client's token on", async () => {
  await withServers(async (as, h) => {
    const token = await as.serviceToken(RESOURCE, "mcp:tools");
    const res = await init(h, token);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.ok(!JSON.stringify(h.logs).includes(token), "the token is never logged");
    const line = h.logs.find((l) => l["msg"] === "http request" && l["status"] === 200);
    assert.match(
      String(line?.["user"]),
      /^[0-9a-f]{32}$/,
      "the user appears as the hash their files are kept under",
    );
    assert.equal(line?.["oauth_client"], "svc");
    assert.ok(!JSON.stringify(h.logs).includes('"sub"'));
  });
});

Deno.test("createHttpHandler() refuses oauth_issuer with auth_token, or off loopback without public_url", async () => {
  await assert.rejects(
    startHarness({ server: { oauth_issuer: "http://127.0.0.1:9", auth_token: "x" } }),
    /Cannot use both MCP_AUTH_TOKEN and MCP_OAUTH_ISSUER/,
  );
  await assert.rejects(
    startHarness({ server: { oauth_issuer: "http://127.0.0.1:9", http_host: "0.0.0.0" } }),
    /set MCP_PUBLIC_URL/,
  );
});

Deno.test("createHttpHandler().ready() names the --allow-net fix for an issuer host outside the allowlist", async () => {
  await using h = await startHarness({
    server: { oauth_issuer: "https://login.example.com/realms/main" },
    isNetAllowed: (host) => host.startsWith("127.0.0.1"),
  });
  await assert.rejects(
    h.handler.ready(),
    /"login\.example\.com".*outside this process's network allowlist.*--allow-net=login\.example\.com,<the list>/,
  );
});

Deno.test("createHttpHandler() with oauth_issuer names the issuer its authorization server really has", async () => {
  const as = await startAuthServer();
  try {
    await using h = await startHarness({ server: { oauth_issuer: `${as.issuer}/` } });
    await assert.rejects(h.handler.ready(), /names the issuer "http:\/\/127\.0\.0\.1:\d+", not/);
  } finally {
    await as.close();
  }
});

Deno.test("createHttpHandler() with an introspection client accepts opaque tokens by RFC 7662, briefly cached", async () => {
  const as = await startAuthServer({ tokenFormat: "opaque" });
  try {
    const clock = new FakeClock(Date.now());
    await using h = await startHarness({
      clock,
      server: {
        oauth_issuer: as.issuer,
        oauth_scopes: ["mcp:tools"],
        oauth_client_id: SERVICE_CLIENT.id,
        oauth_client_secret: SERVICE_CLIENT.secret,
      },
    });
    await h.handler.ready();
    const opaque = await as.serviceToken(RESOURCE, "mcp:tools");
    assert.ok(!opaque.includes("."), "an opaque token");
    for (let i = 0; i < 3; i++) {
      const res = await init(h, opaque);
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
    }
    assert.equal(as.hits.get("/token/introspection"), 1, "asked once, then cached");
    const other = await as.serviceToken("http://other.example/mcp", "mcp:tools");
    await refused(await init(h, other), 401, "invalid_token", /not issued for this server/);
    await refused(await init(h, "made-up-opaque-token"), 401, "invalid_token", /not active/);
    // A token for legacy SSE's resource only: let in at /sse, never at /mcp by way of the cache.
    const sseOnly = await as.serviceToken(`${BASE}/sse`, "mcp:tools");
    const sse = await h.fetch(`${BASE}/sse`, {
      headers: { Accept: "text/event-stream", Authorization: `Bearer ${sseOnly}` },
    });
    assert.equal(sse.status, 200, "the /sse resource takes it");
    await sse.body?.cancel();
    await refused(await init(h, sseOnly), 401, "invalid_token", /not issued for this server/);
    assert.ok(!JSON.stringify(h.logs).includes(SERVICE_CLIENT.secret), "the client secret is never logged");
  } finally {
    await as.close();
  }
});

Deno.test("createHttpHandler().ready() finds metadata appended to the issuer's path (Keycloak's and Okta's form)", async () => {
  const asked: string[] = [];
  let issuer = "";
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    asked.push(path);
    return path === "/realms/main/.well-known/openid-configuration"
      ? Response.json({ issuer, jwks_uri: `${issuer}/protocol/openid-connect/certs` })
      : new Response("not here", { status: 404 });
  });
  issuer = `http://127.0.0.1:${server.addr.port}/realms/main`;
  await using h = await startHarness({ server: { oauth_issuer: issuer } });
  await h.handler.ready();
  assert.deepEqual(asked, [
    "/.well-known/oauth-authorization-server/realms/main",
    "/.well-known/openid-configuration/realms/main",
    "/realms/main/.well-known/openid-configuration",
  ]);
});

Deno.test("createHttpHandler() with an unreachable issuer: ready() says so; a request gets a retryable 401", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using h = await startHarness({
    server: { oauth_issuer: `http://127.0.0.1:${port}`, oauth_scopes: ["mcp:tools"] },
  });
  await assert.rejects(
    h.handler.ready(),
    /Cannot reach the authorization server at http:\/\/127\.0\.0\.1:\d+\/\.well-known/,
  );
  await refused(
    await init(h, "a.b.c"),
    401,
    "invalid_token",
    /cannot be reached to check the token now; retry/,
  );
});

Deno.test("createHttpHandler() with oauth_issuer refuses a token that is not valid yet, or names no subject", async () => {
  await withServers(async (as, h) => {
    const later = Math.floor(Date.now() / 1000) + 600;
    await refused(await init(h, await forged(as, { nbf: later })), 401, "invalid_token", /not valid yet/);
    await refused(
      await init(h, await forged(as, { sub: undefined })),
      401,
      "invalid_token",
      /names no subject/,
    );
  });
});

Deno.test("createHttpHandler() with an issuer whose metadata is missing names the URLs it tried", async () => {
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("no", { status: 404 }),
  );
  await using h = await startHarness({ server: { oauth_issuer: `http://127.0.0.1:${server.addr.port}` } });
  await assert.rejects(
    h.handler.ready(),
    /No authorization server metadata found .*oauth-authorization-server \(404\), .*openid-configuration \(404\)/,
  );
});

Deno.test("createHttpHandler().ready() refuses an issuer or jwks_uri over plain HTTP off loopback", async () => {
  // A key set or introspection answer fetched in clear text could be swapped on the way.
  await using h = await startHarness({ server: { oauth_issuer: "http://login.example.com/realms/main" } });
  await assert.rejects(
    h.handler.ready(),
    /"http:\/\/login\.example\.com\/realms\/main".*must use https:\/\//,
  );
  let issuer = "";
  await using as = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ issuer, jwks_uri: "http://keys.example.com/certs" }),
  );
  issuer = `http://127.0.0.1:${as.addr.port}`;
  await using h2 = await startHarness({ server: { oauth_issuer: issuer } });
  await assert.rejects(
    h2.handler.ready(),
    /jwks_uri "http:\/\/keys\.example\.com\/certs".*must use https:\/\//,
  );
});

Deno.test("createHttpHandler() with an introspection answer that is not an object refuses the token with a 401", async () => {
  let issuer = "";
  await using as = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) =>
      new URL(req.url).pathname === "/introspect"
        ? Response.json(null)
        : Response.json({ issuer, introspection_endpoint: `${issuer}/introspect` }),
  );
  issuer = `http://127.0.0.1:${as.addr.port}`;
  await using h = await startHarness({
    server: {
      oauth_issuer: issuer,
      oauth_client_id: "rs",
      oauth_client_secret: "s3cret",
      oauth_scopes: ["mcp:tools"],
    },
  });
  await h.handler.ready();
  await refused(await init(h, "opaque-token"), 401, "invalid_token", /did not answer the token check/);
});

Deno.test("createHttpHandler() with oauth_issuer on loopback does not take the audience's port from the Host header", async () => {
  // Another local server of the same issuer (here :9999) must not be able to replay the tokens
  // it receives to this one (:8000) by naming its own port in Host.
  await withServers(async (as, h) => {
    const elsewhere = await as.serviceToken("http://127.0.0.1:9999/mcp", "mcp:tools");
    const res = await h.fetch("http://127.0.0.1:9999/mcp", {
      method: "POST",
      headers: { ...POST_HEADERS, Authorization: `Bearer ${elsewhere}` },
      body: initializeBody(),
    });
    const body = await res.json();
    assert.equal(res.status, 401, JSON.stringify(body));
    assert.match(body.error.message, /not issued for this server.*http:\/\/127\.0\.0\.1:8000\/mcp/);
    assert.equal(challengeOf(res)["resource_metadata"], PRM);
  });
});

Deno.test("createHttpHandler() with oauth_issuer binds a legacy SSE session to its user", async () => {
  await withServers(async (as, h) => {
    const alice = await forged(as, { sub: "alice" });
    const bob = await forged(as, { sub: "bob" });
    const res = await h.fetch(`${BASE}/sse`, {
      headers: { Accept: "text/event-stream", Authorization: `Bearer ${alice}` },
    });
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
    const endpoint = /data: (\/message\?session_id=[0-9a-f-]{36})/.exec(text)?.[1];
    assert.ok(endpoint, text);
    const post = (token: string) =>
      h.fetch(`${BASE}${endpoint}`, {
        method: "POST",
        headers: { ...POST_HEADERS, Authorization: `Bearer ${token}` },
        body: initializeBody(),
      });
    const other = await post(bob);
    assert.equal(other.status, 404, "bob's token does not reach alice's stream");
    await other.body?.cancel();
    const own = await post(alice);
    assert.equal(own.status, 202);
    await own.body?.cancel();
    await reader.cancel();
  });
});
