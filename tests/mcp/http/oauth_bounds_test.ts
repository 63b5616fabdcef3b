// What the OAuth resource server spends on made-up tokens and on a hostile authorization server
// (docs/SECURITY.md, "OAuth"): refusals remembered, introspection limited in flight, every answer
// read with a size cap, and a subject that is not a string refused. Against the real
// authorization server (oidc-provider, tests/fakes/oidc.ts) and a hostile one on loopback.
import assert from "node:assert/strict";
import * as jose from "jose";
import { FakeClock } from "../../../lib/clock.ts";
import { Logger } from "../../../lib/log.ts";
import { OAuthResourceServer } from "../../../lib/mcp/http/oauth.ts";
import type { OAuthOptions } from "../../../lib/mcp/http/oauth.ts";
import { AUTH_BODY_MAX_BYTES } from "../../../lib/mcp/http/_oauth_limits.ts";
import { SERVICE_CLIENT, startAuthServer } from "../../fakes/oidc.ts";
import { BASE, initializeBody, postMcp, startHarness } from "./_harness.ts";

const RESOURCE = `${BASE}/mcp`;

/** A hostile authorization server on loopback: `routes` answer by path; the metadata is served. */
function hostileServer(
  routes: Record<string, (req: Request) => Response | Promise<Response>>,
): { issuer: string; server: Deno.HttpServer } {
  let issuer = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    const route = routes[path];
    if (route) return route(req);
    return Response.json({
      issuer,
      jwks_uri: `${issuer}/jwks`,
      introspection_endpoint: `${issuer}/introspect`,
    });
  });
  issuer = `http://127.0.0.1:${server.addr.port}`;
  return { issuer, server };
}

/** A resource server for `issuer` whose log lines go to `lines`. */
function resourceServer(
  issuer: string,
  lines: string[],
  options: Partial<OAuthOptions> = {},
): OAuthResourceServer {
  return new OAuthResourceServer({
    issuer,
    audiences: [RESOURCE],
    scopes: [],
    clockSkewS: 30,
    clock: new FakeClock(Date.now()),
    introspection: { clientId: "rs", clientSecret: "s3cret" },
    logger: new Logger({ write: (line) => lines.push(line) }),
    ...options,
  });
}

/** A body of `total` bytes streamed in 64 KiB chunks as it is read; `pulled()` says how far it got. */
function endlessJson(total: number): { body: ReadableStream<Uint8Array>; pulled(): number } {
  const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"keys":['));
    },
    pull(controller) {
      if (pulled >= total) {
        controller.enqueue(new TextEncoder().encode("]}"));
        controller.close();
        return;
      }
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
  }, { highWaterMark: 0 });
  return { body, pulled: () => pulled };
}

/** A fetch that counts the response bytes its caller read. */
function countingFetch(): { fetch: typeof fetch; read(): number } {
  let read = 0;
  const counting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body) return res;
    const counter = new TransformStream<Uint8Array, Uint8Array>(
      {
        transform(chunk, controller) {
          read += chunk.length;
          controller.enqueue(chunk);
        },
      },
    );
    return new Response(res.body.pipeThrough(counter), { status: res.status, headers: res.headers });
  };
  return { fetch: counting, read: () => read };
}

const EIGHT_MB = 8 * 1024 * 1024;
/** What the streams in between may have read ahead of the cap (a few chunks). */
const SLACK = 256 * 1024;

Deno.test("OAuthResourceServer.verify() reads at most 1 MiB of an 8 MB key set, refuses the token with a 401 and logs why", async () => {
  const jwks = endlessJson(EIGHT_MB);
  const { issuer, server } = hostileServer({ "/jwks": () => new Response(jwks.body) });
  await using _ = server;
  const lines: string[] = [];
  const counted = countingFetch();
  const rs = resourceServer(issuer, lines, { fetch: counted.fetch });
  const verdict = await rs.verify("Bearer a.b.c", RESOURCE);
  assert.equal(verdict.ok, false);
  assert.equal(!verdict.ok && verdict.status, 401);
  assert.match(!verdict.ok ? verdict.description : "", /keys cannot be fetched/);
  assert.ok(counted.read() <= AUTH_BODY_MAX_BYTES + SLACK, `read ${counted.read()} bytes`);
  assert.ok(jwks.pulled() < EIGHT_MB, "the rest was never sent");
  const line = lines.find((l) => l.includes("cut off at the size cap"));
  assert.ok(line, lines.join("\n"));
  assert.equal(JSON.parse(line)["max_bytes"], AUTH_BODY_MAX_BYTES);
});

Deno.test("OAuthResourceServer.verify() refuses an 8 MB introspection answer, declared or streamed, at the cap", async () => {
  for (const declared of [true, false]) {
    const answer = endlessJson(EIGHT_MB);
    const { issuer, server } = hostileServer({
      "/introspect": () =>
        declared
          ? new Response(" ".repeat(EIGHT_MB), { headers: { "content-type": "application/json" } })
          : new Response(answer.body),
    });
    await using _ = server;
    const lines: string[] = [];
    const counted = countingFetch();
    const rs = resourceServer(issuer, lines, { fetch: counted.fetch });
    const verdict = await rs.verify("Bearer opaque-token", RESOURCE);
    assert.equal(!verdict.ok && verdict.status, 401, `declared: ${declared}`);
    assert.match(!verdict.ok ? verdict.description : "", /retry shortly/);
    assert.ok(
      counted.read() <= AUTH_BODY_MAX_BYTES + SLACK,
      `declared ${declared}: read ${counted.read()}`,
    );
    assert.ok(lines.some((l) => l.includes("cut off at the size cap")), lines.join("\n"));
  }
});

Deno.test("OAuthResourceServer.discover() refuses authorization server metadata larger than the cap", async () => {
  const meta = endlessJson(EIGHT_MB);
  let issuer = "";
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(meta.body),
  );
  issuer = `http://127.0.0.1:${server.addr.port}`;
  const rs = resourceServer(issuer, []);
  await assert.rejects(rs.discover(), /larger than 1048576 bytes/);
  assert.ok(meta.pulled() < EIGHT_MB);
});

Deno.test("OAuthResourceServer.verify() keeps at most 4 introspections in flight and refuses past its queue at once", async () => {
  let inFlight = 0;
  let most = 0;
  let asked = 0;
  const release = Promise.withResolvers<void>();
  const fourth = Promise.withResolvers<void>();
  const fifth = Promise.withResolvers<void>();
  const { issuer, server } = hostileServer({
    "/introspect": async () => {
      asked++;
      inFlight++;
      most = Math.max(most, inFlight);
      if (asked === 4) fourth.resolve();
      if (asked === 5) fifth.resolve();
      await release.promise;
      inFlight--;
      return Response.json({ active: false });
    },
  });
  await using _ = server;
  const rs = resourceServer(issuer, []);
  await rs.discover();
  let refusedAtOnce = 0;
  const busy = Promise.withResolvers<void>();
  const verdicts = Array.from(
    { length: 60 },
    (_, i) =>
      rs.verify(`Bearer made-up-${i}`, RESOURCE).then((v) => {
        if (!v.ok && /busy/.test(v.description) && ++refusedAtOnce === 24) busy.resolve();
        return v;
      }),
  );
  await fourth.promise;
  // Either the 24 past the queue are refused, or (before the limit) a fifth request went out.
  await Promise.race([busy.promise, fifth.promise]);
  release.resolve();
  const all = await Promise.all(verdicts);
  assert.equal(most, 4, "introspection requests in flight at once");
  assert.equal(asked, 36, "4 in flight + 32 queued; the rest refused without a request");
  assert.equal(
    all.filter((v) => !v.ok && /busy checking other tokens; retry shortly/.test(v.description)).length,
    24,
  );
  assert.equal(all.filter((v) => !v.ok && /not active/.test(v.description)).length, 36);
});

Deno.test("OAuthResourceServer.verify() asks once for a made-up opaque token sent 20 times at once, and remembers the refusal 30 s", async () => {
  const as = await startAuthServer({ tokenFormat: "opaque" });
  try {
    const clock = new FakeClock(Date.now());
    const rs = resourceServer(as.issuer, [], {
      clock,
      introspection: { clientId: SERVICE_CLIENT.id, clientSecret: SERVICE_CLIENT.secret },
    });
    const verdicts = await Promise.all(
      Array.from({ length: 20 }, () => rs.verify("Bearer made-up-opaque-token", RESOURCE)),
    );
    assert.ok(verdicts.every((v) => !v.ok && /not active/.test(v.description)));
    assert.equal(as.hits.get("/token/introspection"), 1, "one request for 20 at once");
    clock.advance(20_000);
    await rs.verify("Bearer made-up-opaque-token", RESOURCE);
    assert.equal(as.hits.get("/token/introspection"), 1, "still remembered after 20 s");
    clock.advance(15_000);
    await rs.verify("Bearer made-up-opaque-token", RESOURCE);
    assert.equal(as.hits.get("/token/introspection"), 2, "asked again once the refusal expired");
  } finally {
    await as.close();
  }
});

Deno.test("createHttpHandler() with oauth_issuer refuses a JWT whose sub is an object or a number with 401 invalid_token", async () => {
  const as = await startAuthServer();
  try {
    await using h = await startHarness({
      clock: new FakeClock(Date.now()),
      server: { oauth_issuer: as.issuer, oauth_scopes: ["mcp:tools"] },
    });
    await h.handler.ready();
    const { key, kid } = as.signingKey();
    const now = Math.floor(Date.now() / 1000);
    for (const sub of [{ id: "anyone" }, 42]) {
      const token = await new jose.SignJWT({
        iss: as.issuer,
        aud: RESOURCE,
        sub: sub as unknown as string,
        scope: "mcp:tools",
        iat: now,
        exp: now + 300,
      }).setProtectedHeader({ alg: "RS256", kid, typ: "at+jwt" }).sign(key);
      const res = await postMcp(h, initializeBody(), { Authorization: `Bearer ${token}` });
      const body = await res.json();
      assert.equal(res.status, 401, JSON.stringify(body));
      assert.match(res.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
      assert.match(body.error.message, /subject \(sub\) is not a non-empty string/);
    }
  } finally {
    await as.close();
  }
});

Deno.test("OAuthResourceServer.verify() refuses an introspection answer whose sub is not a string", async () => {
  const { issuer, server } = hostileServer({
    "/introspect": () => Response.json({ active: true, sub: { id: "anyone" }, aud: RESOURCE, iss: issuer }),
  });
  await using _ = server;
  const verdict = await resourceServer(issuer, []).verify("Bearer opaque-token", RESOURCE);
  assert.equal(!verdict.ok && verdict.status, 401);
  assert.match(!verdict.ok ? verdict.description : "", /sub that is not a string/);
});
