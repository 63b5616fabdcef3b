// OAuth end to end: the real server (in process; two spawned replicas, and a spawned process for
// the start task's permissions) as a resource server of a real authorization server on loopback
// (oidc-provider), reached by the MCP SDK's own OAuth clients (v1 and v2). Each client starts
// from the 401: WWW-Authenticate -> protected resource metadata -> authorization server metadata
// -> authorize (PKCE, the user played over HTTP) -> token -> calls. Jobs, projects and files then belong to the user: in both protocol eras, in
// stateless mode and across two replicas sharing Redis, and never to another user.
import assert from "node:assert/strict";
import { startHttpServer } from "../../harness/spawn_http.ts";
import type { HttpServerProcess } from "../../harness/spawn_http.ts";
import { startHttpInProcess } from "../../harness/in_process.ts";
import type { InProcessHttpServer } from "../../harness/in_process.ts";
import { childEnv, removeHome, scratchHome, startArgs } from "../../harness/spawn.ts";
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "../../harness/sdk_client.ts";
import type { OAuthClientProvider } from "../../harness/sdk_client.ts";
import {
  Client as Client2,
  MODERN,
  StreamableHTTPClientTransport as Http2,
  UnauthorizedError as Unauthorized2,
} from "../../harness/sdk2_client.ts";
import type { OAuthClientProvider as OAuthClientProvider2 } from "../../harness/sdk2_client.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { PlayedUserProvider, startAuthServer } from "../../fakes/oidc.ts";
import { auth as aiSdkAuth, createMCPClient, UnauthorizedError as AiSdkUnauthorized } from "@ai-sdk/mcp";
import type { OAuthClientProvider as AiSdkProvider } from "@ai-sdk/mcp";
import { fredConfig, routeStuckSeries, startFakeFred } from "../../providers/fred/fake_fred.ts";
import { startRedis } from "../../redis/_redis_server.ts";

type Result = Parameters<typeof ok>[0];

const MAIN = new URL("../../../main.ts", import.meta.url).pathname;

/** A FRED fake whose STUCK series keeps a job running until `release()`. */
function stuckFred() {
  const fake = startFakeFred();
  return { fake, ...routeStuckSeries(fake, 50_000) };
}

/** SDK v1, 2025-era session: connect, meet the 401, authorize as the provider's user, connect again. */
async function connectV1(url: URL, provider: PlayedUserProvider): Promise<Client> {
  const auth = provider as unknown as OAuthClientProvider;
  const first = new StreamableHTTPClientTransport(url, { authProvider: auth });
  const client = new Client({ name: "oauth-e2e", version: "0" }, { capabilities: {} });
  if (!provider.tokens()) {
    await assert.rejects(client.connect(first), UnauthorizedError);
    await first.finishAuth(provider.code);
  }
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: auth }));
  return client;
}

/** SDK v2, pinned to 2026-07-28 (no session): the same dance with the other generation's client. */
async function connectV2(url: URL, provider: PlayedUserProvider): Promise<Client2> {
  const auth = provider as unknown as OAuthClientProvider2;
  const options = { versionNegotiation: { mode: { pin: MODERN } } } as const;
  if (!provider.tokens()) {
    const first = new Http2(url, { authProvider: auth });
    await assert.rejects(
      new Client2({ name: "oauth-e2e-v2", version: "0" }, options).connect(first),
      Unauthorized2,
    );
    await first.finishAuth(provider.callback!);
  }
  const client = new Client2({ name: "oauth-e2e-v2", version: "0" }, options);
  await client.connect(new Http2(url, { authProvider: auth }));
  return client;
}

const call = async (c: Client | Client2, name: string, args: Record<string, unknown>): Promise<Result> =>
  await c.callTool({ name, arguments: args }) as Result;

Deno.test("serve with MCP_OAUTH_ISSUER: SDK v1 and v2 authorize from the 401; work is owned per user", async (t) => {
  const as = await startAuthServer();
  const { fake, release } = stuckFred();
  const home = scratchHome(fredConfig(fake.origin));
  let server: InProcessHttpServer | undefined;
  const clients: { close(): Promise<void> }[] = [];
  try {
    server = await startHttpInProcess({
      args: ["--providers", "fred"],
      home,
      env: { MCP_OAUTH_ISSUER: as.issuer, MCP_OAUTH_SCOPES: "mcp:tools" },
    });
    const url = new URL(`${server.origin}/mcp`);
    const alice = new PlayedUserProvider("alice");
    const bob = new PlayedUserProvider("bob");

    let jobId = "";
    let fileUri = "";
    await t.step("alice (SDK v1, a 2025-era session) authorizes from the 401 and starts a job", async () => {
      const a1 = await connectV1(url, alice);
      clients.push(a1);
      const opened = alice.opened[0]!;
      assert.equal(opened.searchParams.get("resource"), url.href, "RFC 8707 resource from the metadata");
      assert.equal(opened.searchParams.get("scope"), "mcp:tools", "the scope the challenge named");
      assert.equal(opened.searchParams.get("code_challenge_method"), "S256");
      const accepted = ok(
        await call(a1, "fred_series", { operation: "get_observations", series_id: "STUCK" }),
      );
      jobId = String(accepted["job_id"]);
      ok(await call(a1, "fred_project_create", { project_name: "alpha" }));
      const written = ok(
        await call(a1, "fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          project: "alpha",
        }),
      );
      fileUri = String(written["resource_uri"]);
      assert.ok((await a1.listResources()).resources.some((r) => r.uri === fileUri));
    });

    await t.step("bob (SDK v2, 2026-07-28) cannot see, read or cancel alice's job or projects", async () => {
      const b2 = await connectV2(url, bob);
      clients.push(b2);
      for (
        const [name, args] of [["fred_job_status", { job_id: jobId }], ["fred_job_cancel", {
          job_id: jobId,
        }]] as const
      ) {
        assert.equal(errorOf(await call(b2, name, args))["error_type"], "JOB_NOT_FOUND", name);
      }
      assert.equal(ok(await call(b2, "fred_job_list", {}))["total"], 0);
      assert.deepEqual(ok(await call(b2, "fred_project_list", {}))["projects"], []);
      assert.ok(!(await b2.listResources()).resources.some((r) => r.uri.startsWith("fred://")));
      await assert.rejects(b2.readResource({ uri: fileUri }), /There is no file/);
    });

    await t.step(
      "alice in the other era (SDK v2, no session) and over legacy SSE sees her own work",
      async () => {
        const a2 = await connectV2(url, alice);
        clients.push(a2);
        assert.equal(ok(await call(a2, "fred_job_list", {}))["total"], 1, "the session's job is hers");
        const names = (ok(await call(a2, "fred_project_list", {}))["projects"] as Record<string, unknown>[])
          .map((p) => p["name"]);
        assert.ok(names.includes("alpha"), JSON.stringify(names));
        const sse = new SSEClientTransport(new URL(`${server!.origin}/sse`), {
          authProvider: alice as unknown as OAuthClientProvider,
        });
        const a3 = new Client({ name: "oauth-e2e-sse", version: "0" }, { capabilities: {} });
        await a3.connect(sse);
        clients.push(a3);
        assert.equal(ok(await call(a3, "fred_job_list", {}))["total"], 1);
        const read = await a3.readResource({ uri: fileUri });
        assert.match((read.contents[0] as { text: string }).text, /^date,value/);
      },
    );

    await t.step(
      "dave starts over legacy SSE with no token: the 401 leads to metadata for /sse, and he gets in",
      async () => {
        const dave = new PlayedUserProvider("dave");
        const sseUrl = new URL(`${server!.origin}/sse`);
        const auth = dave as unknown as OAuthClientProvider;
        const first = new SSEClientTransport(sseUrl, { authProvider: auth });
        await assert.rejects(
          new Client({ name: "oauth-sse", version: "0" }, { capabilities: {} }).connect(first),
          UnauthorizedError,
          "the SDK accepts the metadata it is led to (before, /sse named /mcp's and the SDK stopped)",
        );
        assert.equal(dave.opened[0]!.searchParams.get("resource"), sseUrl.href, "RFC 8707 resource: /sse");
        await first.finishAuth(dave.code);
        const d = new Client({ name: "oauth-sse", version: "0" }, { capabilities: {} });
        await d.connect(new SSEClientTransport(sseUrl, { authProvider: auth }));
        clients.push(d);
        assert.equal(ok(await call(d, "fred_job_list", {}))["total"], 0, "dave sees none of alice's work");
        const meta = await (await fetch(`${server!.origin}/.well-known/oauth-protected-resource/sse`)).json();
        assert.equal(meta.resource, sseUrl.href);
      },
    );

    await t.step(
      "bob's token does not reach alice's session; a raw call without a token gets the challenge",
      async () => {
        const init = {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "raw", version: "0" },
          },
        };
        const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
        const opened = await fetch(url, {
          method: "POST",
          headers: { ...headers, authorization: `Bearer ${alice.accessToken}` },
          body: JSON.stringify(init),
        });
        await opened.body?.cancel();
        const session = opened.headers.get("mcp-session-id")!;
        const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
        const stolen = await fetch(url, {
          method: "POST",
          headers: { ...headers, authorization: `Bearer ${bob.accessToken}`, "mcp-session-id": session },
          body: JSON.stringify(list),
        });
        assert.equal(stolen.status, 404, "another user's session is not found");
        await stolen.body?.cancel();
        const anonymous = await fetch(url, { method: "POST", headers, body: JSON.stringify(init) });
        assert.equal(anonymous.status, 401);
        assert.match(
          anonymous.headers.get("www-authenticate") ?? "",
          new RegExp(`resource_metadata="${server!.origin}/\\.well-known/oauth-protected-resource/mcp"`),
        );
        await anonymous.body?.cancel();
      },
    );

    await t.step(
      "carol (@ai-sdk/mcp 2.x, its own OAuth client) authorizes from the 401 and sees none of it",
      async () => {
        const carol = new PlayedUserProvider("carol");
        const transport = {
          type: "http" as const,
          url: url.href,
          authProvider: carol as unknown as AiSdkProvider,
        };
        await assert.rejects(createMCPClient({ transport }), AiSdkUnauthorized);
        assert.equal(carol.opened[0]?.searchParams.get("resource"), url.href);
        assert.equal(
          await aiSdkAuth(carol as unknown as AiSdkProvider, {
            serverUrl: url,
            authorizationCode: carol.code,
            callbackIssuer: carol.callback!.get("iss") ?? "",
          }),
          "AUTHORIZED",
        );
        const client = await createMCPClient({ transport });
        try {
          const tools = await client.tools();
          const list = await tools["fred_job_list"]!.execute!({}, {
            toolCallId: "1",
            messages: [],
            context: {},
          });
          assert.equal((list as { structuredContent: { total: number } }).structuredContent.total, 0);
        } finally {
          await client.close();
        }
      },
    );

    await t.step("alice cancels her job", async () => {
      const a2 = clients[2] as Client2;
      assert.equal(ok(await call(a2, "fred_job_cancel", { job_id: jobId }))["status"], "cancelled");
    });
  } finally {
    release();
    for (const c of clients) await c.close().catch(() => {});
    await server?.stop();
    await as.close();
    await fake[Symbol.asyncDispose]();
    removeHome(home);
  }
});

Deno.test("serve with MCP_OAUTH_ISSUER: each user, not their shared address, is one client for the quota", async () => {
  const as = await startAuthServer();
  const { fake, release } = stuckFred();
  const home = scratchHome(fredConfig(fake.origin));
  let server: InProcessHttpServer | undefined;
  const clients: { close(): Promise<void> }[] = [];
  try {
    server = await startHttpInProcess({
      args: ["--providers", "fred"],
      home,
      env: { MCP_OAUTH_ISSUER: as.issuer, MCP_OAUTH_SCOPES: "mcp:tools", MCP_QUOTA_PROJECTS: "1" },
    });
    const url = new URL(`${server.origin}/mcp`);
    // Both users come from 127.0.0.1: by address they would be one client with one project.
    const a1 = await connectV1(url, new PlayedUserProvider("alice"));
    clients.push(a1);
    ok(await call(a1, "fred_project_create", { project_name: "alpha" }));
    const full = errorOf(await call(a1, "fred_project_create", { project_name: "beta" }));
    assert.equal(full["error_type"], "QUOTA_EXCEEDED");
    assert.match(String(full["message"]), /your client keeps 1 projects/);
    const b2 = await connectV2(url, new PlayedUserProvider("bob"));
    clients.push(b2);
    ok(await call(b2, "fred_project_create", { project_name: "alpha" }));
  } finally {
    release();
    for (const c of clients) await c.close().catch(() => {});
    await server?.stop();
    await as.close();
    await fake[Symbol.asyncDispose]();
    removeHome(home);
  }
});

Deno.test("serve with MCP_OAUTH_ISSUER and no MCP_METRICS_TOKEN keeps /metrics closed like /mcp, naming the setting", async () => {
  const as = await startAuthServer();
  const home = scratchHome();
  let server: InProcessHttpServer | undefined;
  try {
    server = await startHttpInProcess({
      args: ["--providers", "example"],
      home,
      env: { MCP_OAUTH_ISSUER: as.issuer },
    });
    const res = await fetch(`${server.origin}/metrics`);
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer /);
    assert.match(await res.text(), /needs MCP_METRICS_TOKEN/);
  } finally {
    await server?.stop();
    await as.close();
    removeHome(home);
  }
});

Deno.test("serve --stateless with MCP_OAUTH_ISSUER on two replicas sharing Redis: a user's job on either, not another's", async () => {
  const as = await startAuthServer();
  await using redis = await startRedis();
  const { fake, release } = stuckFred();
  const homes = [scratchHome(fredConfig(fake.origin)), scratchHome(fredConfig(fake.origin))];
  const replicas: HttpServerProcess[] = [];
  const clients: { close(): Promise<void> }[] = [];
  try {
    // Behind one load balancer both replicas are one resource: MCP_PUBLIC_URL names it, and a
    // shared data folder holds the files (here: each replica's own, so only jobs are compared).
    const publicUrl = "http://mcp.test";
    const env = {
      MCP_OAUTH_ISSUER: as.issuer,
      MCP_PUBLIC_URL: publicUrl,
      MCP_OAUTH_SCOPES: "mcp:tools",
      REDIS_URL: redis.url,
      MCP_REQUEST_STATE_KEY: "k".repeat(32),
    };
    replicas.push(
      ...await Promise.all(
        homes.map((home) => startHttpServer({ args: ["--providers", "fred", "--stateless"], home, env })),
      ),
    );
    const [a, b] = replicas as [HttpServerProcess, HttpServerProcess];
    const alice = new PlayedUserProvider("alice");
    const bob = new PlayedUserProvider("bob");
    // The SDK checks that the metadata's resource is the URL it connects to: it reaches the
    // replicas through the public URL, which this fetch routes like a load balancer would.
    let next = 0;
    const balance = (replica?: HttpServerProcess) => (input: string | URL | Request, init?: RequestInit) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      if (target.origin === publicUrl) {
        const to = replica ?? replicas[next++ % 2]!;
        const moved = new URL(target.pathname + target.search, to.origin);
        return input instanceof Request ? fetch(new Request(moved, input), init) : fetch(moved, init);
      }
      return fetch(input, init);
    };
    const connect = async (provider: PlayedUserProvider, replica: HttpServerProcess) => {
      const url = new URL(`${publicUrl}/mcp`);
      const auth = provider as unknown as OAuthClientProvider2;
      const options = { versionNegotiation: { mode: { pin: MODERN } } } as const;
      if (!provider.tokens()) {
        const first = new Http2(url, { authProvider: auth, fetch: balance(replica) });
        await assert.rejects(
          new Client2({ name: "replicas", version: "0" }, options).connect(first),
          Unauthorized2,
        );
        await first.finishAuth(provider.callback!);
      }
      const client = new Client2({ name: "replicas", version: "0" }, options);
      await client.connect(new Http2(url, { authProvider: auth, fetch: balance(replica) }));
      clients.push(client);
      return client;
    };
    const onA = await connect(alice, a);
    const jobId = String(
      ok(await call(onA, "fred_series", { operation: "get_observations", series_id: "STUCK" }))["job_id"],
    );
    // The 2025 era on replica B, through SDK v1 with the tokens alice got on A.
    const onB = new Client({ name: "replicas-v1", version: "0" }, { capabilities: {} });
    await onB.connect(
      new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), {
        authProvider: alice as unknown as OAuthClientProvider,
        fetch: balance(b),
      }),
    );
    clients.push(onB);
    assert.equal(onB.getServerCapabilities() !== undefined, true);
    assert.equal(
      ok(await call(onB, "fred_job_list", {}))["total"],
      1,
      "replica B lists alice's job (2025 era, stateless)",
    );
    const status = ok(await call(onB, "fred_job_status", { job_id: jobId }));
    assert.ok(["accepted", "processing"].includes(String(status["status"])));
    const bobOnB = await connect(bob, b);
    assert.equal(
      errorOf(await call(bobOnB, "fred_job_cancel", { job_id: jobId }))["error_type"],
      "JOB_NOT_FOUND",
    );
    assert.equal(ok(await call(bobOnB, "fred_job_list", {}))["total"], 0);
    assert.equal(ok(await call(onB, "fred_job_cancel", { job_id: jobId }))["status"], "cancelled");
  } finally {
    release();
    for (const c of clients) await c.close().catch(() => {});
    await Promise.all(replicas.map((r) => r.stop()));
    await as.close();
    await fake[Symbol.asyncDispose]();
    for (const home of homes) removeHome(home);
  }
});

Deno.test("serve with an issuer outside the permission set's network allowlist exits 2 naming the --allow-net fix", async () => {
  const home = scratchHome();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...startArgs(home),
        MAIN,
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--providers",
        "example",
      ],
      env: childEnv(home, { MCP_OAUTH_ISSUER: "https://login.example.com/realms/main" }),
      clearEnv: true,
      cwd: home,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, text);
    assert.match(text, /configuration error at "server\.oauth_issuer"/);
    assert.match(text, /"login\.example\.com".*outside this process's network allowlist/);
    assert.match(text, /--allow-net=login\.example\.com,<the list>/);
    assert.doesNotMatch(text, /serving MCP over HTTP/);
  } finally {
    removeHome(home);
  }
});
