// The edge attacks of `deno task hostile` (target `edge`): the health reserve against squatters
// from many addresses (IPv4 loopback, and eight IPv6 /64s of one /56 inside a network namespace),
// /metrics against caller-chosen endpoint labels, and the OAuth resource server against made-up
// tokens and a hostile authorization server (huge key set and introspection answers, a subject
// that is an object). Each attack reports what the victim (or the operator) saw. Traffic stays on
// loopback; every phase is bounded in count and time.
import net from "node:net";
import * as jose from "jose";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { connectHttp } from "../../tests/harness/provider.ts";
import { FakeUpstream } from "../../tests/fakes/upstream.ts";
import { inNamespace, rawRequest, slowBody, tally } from "./_fair_attacks.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection from `local` that sends nothing, opened again `againMs` after each close. */
function silent(local: string, host: string, port: number, againMs: number): () => void {
  let stopped = false;
  let socket: net.Socket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = (): void => {
    if (stopped) return;
    socket = net.connect({ host, port, localAddress: local });
    socket.on("error", () => {});
    // Reads (and drops) what the server answers, so a refusal's close is seen at once.
    socket.resume();
    socket.on("close", () => {
      if (!stopped) timer = setTimeout(open, againMs);
    });
  };
  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    socket?.destroy();
  };
}

/**
 * The red team's reserve attack: each flooder holds 32 slow POST bodies (with 8 flooders, all
 * 256 slots) and 2 connections that send nothing, reopened 100 ms after each close or refusal;
 * then the victim's /health and GET / on fresh connections.
 */
async function reserveAttack(
  flooders: readonly string[],
  victim: string,
  host: string,
  port: number,
  squat: { from: readonly string[]; each: number; againMs: number } = {
    from: flooders,
    each: 2,
    againMs: 100,
  },
): Promise<string> {
  const flood = flooders.flatMap((a) => Array.from({ length: 32 }, () => slowBody(a, host, port, 2_000)));
  await sleep(1_500);
  const squatters = squat.from.flatMap((a) =>
    Array.from({ length: squat.each }, () => silent(a, host, port, squat.againMs))
  );
  await sleep(1_000);
  const hostHeader = host.includes(":") ? `[${host}]` : host;
  const ask = (path: string) =>
    rawRequest(
      victim,
      host,
      port,
      `GET ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\nConnection: close\r\n\r\n`,
      "",
      5_000,
    );
  const health: number[] = [];
  const root: number[] = [];
  for (let i = 0; i < 77; i++) {
    health.push(await ask("/health"));
    if (i % 7 === 0) root.push(await ask("/"));
  }
  for (const stop of squatters) stop();
  for (const f of flood) f.close();
  const squatting = squat.from === flooders
    ? `${flooders.length} flooders × (32 slow POSTs + ${squat.each} silent connections`
    : `${flooders.length} flooders × 32 slow POSTs, ${squat.from.length} other addresses × (${squat.each} silent connections`;
  return `${squatting} reopened ${squat.againMs} ms after each close): ` +
    `the victim's /health on fresh connections: ${tally(health)}; its GET /: ${tally(root)} ` +
    `(only probes use the reserve; other requests wait for a regular slot)`;
}

async function reserveIpv4(report: string[]): Promise<void> {
  await using server = await startHttpServer({
    args: ["--providers", "example"],
    env: { MCP_BODY_TIMEOUT: "30" },
  });
  const flooders = Array.from({ length: 8 }, (_, i) => `127.0.0.${10 + i}`);
  report.push(
    `health reserve, IPv4: ${await reserveAttack(flooders, "127.0.0.1", "127.0.0.1", server.port)}`,
  );
  await sleep(500);
  const others = Array.from({ length: 16 }, (_, i) => `127.0.0.${40 + i}`);
  const squat = { from: others, each: 3, againMs: 5 };
  report.push(
    `health reserve, IPv4: ${await reserveAttack(flooders, "127.0.0.1", "127.0.0.1", server.port, squat)}`,
  );
}

/** Inside the namespace: eight /64s of fd30:56::/56 flood, the victim is in fd30:99::/64. */
export async function edgeIpv6Inside(): Promise<string[]> {
  await using server = await startHttpServer({
    args: ["--providers", "example", "--host", "::"],
    env: { MCP_BODY_TIMEOUT: "30" },
  });
  const flooders = Array.from({ length: 8 }, (_, i) => `fd30:56:0:${i}::1`);
  return [
    `health reserve, eight IPv6 /64s of one /56: ${await reserveAttack(
      flooders,
      "fd30:99::1",
      "::1",
      server.port,
    )}`,
  ];
}

// --- Metrics -----------------------------------------------------------------------------------

function rssMiB(server: HttpServerProcess): number {
  const status = Deno.readTextFileSync(`/proc/${server.child.pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function metricsLabels(report: string[]): Promise<void> {
  await using fake = FakeUpstream.start([]);
  await using server = await startHttpServer({
    args: ["--providers", "riksantikvaren_ogc"],
    configYaml:
      `providers:\n  riksantikvaren_ogc:\n    base_url: "${fake.origin}"\n    max_retries: 0\n    cache_ttl: 0\n`,
  });
  const { client } = await connectHttp(server.origin);
  const scrape = async () => {
    const t0 = performance.now();
    const text = await (await fetch(`${server.origin}/metrics`)).text();
    const labels = new Set([...text.matchAll(/endpoint="([^"]*)"/g)].map((m) => m[1]));
    return {
      ms: performance.now() - t0,
      lines: text.split("\n").length,
      bytes: text.length,
      labels: labels.size,
    };
  };
  try {
    await client.callTool({
      name: "riksantikvaren-features",
      arguments: { collection: "lokaliteter", limit: 1 },
    });
    const before = { ...(await scrape()), rss: rssMiB(server) };
    for (let i = 0; i < 2_040; i++) {
      await client.callTool({
        name: "riksantikvaren-features",
        arguments: { collection: `c${i}`, limit: 1 },
      });
    }
    const after = { ...(await scrape()), rss: rssMiB(server) };
    report.push(
      `metrics labels: 2,040 riksantikvaren-features calls with distinct made-up collections: /metrics went from ` +
        `${before.labels} to ${after.labels} endpoint labels, ${before.lines} to ${after.lines} lines, ` +
        `${(before.bytes / 1024).toFixed(0)} to ${(after.bytes / 1024).toFixed(0)} KiB, a scrape ` +
        `${before.ms.toFixed(0)} to ${after.ms.toFixed(0)} ms; RSS ${before.rss.toFixed(0)} to ${
          after.rss.toFixed(0)
        } MiB`,
    );
  } finally {
    await client.close();
  }
}

// --- OAuth ---------------------------------------------------------------------------------------

/** A hostile authorization server: its key set and introspection answers can be made huge. */
async function hostileIssuer() {
  const { privateKey, publicKey } = await jose.generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  const state = { introspections: 0, hugeMiB: 0 };
  const huge = (mib: number) =>
    new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"keys":['));
        },
        pull(c) {
          if (mib-- <= 0) return c.close();
          c.enqueue(new Uint8Array(1024 * 1024).fill(32));
        },
      }, { highWaterMark: 0 }),
    );
  let issuer = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/jwks") return state.hugeMiB ? huge(state.hugeMiB) : Response.json({ keys: [jwk] });
    if (path === "/introspect") {
      state.introspections++;
      await req.body?.cancel();
      return state.hugeMiB ? huge(state.hugeMiB) : Response.json({ active: false });
    }
    return Response.json({
      issuer,
      jwks_uri: `${issuer}/jwks`,
      introspection_endpoint: `${issuer}/introspect`,
    });
  });
  issuer = `http://127.0.0.1:${server.addr.port}`;
  const sign = (claims: Record<string, unknown>, audience: string) => {
    const now = Math.floor(Date.now() / 1000);
    return new jose.SignJWT({
      iss: issuer,
      aud: audience,
      scope: "mcp:tools",
      iat: now,
      exp: now + 300,
      ...claims,
    })
      .setProtectedHeader({ alg: "RS256", kid: "k1", typ: "at+jwt" }).sign(privateKey);
  };
  return { issuer, state, sign, server };
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "attacker", version: "0" } },
});

/** An initialize with `token` as its bearer; the status (0: no answer). */
async function withBearer(origin: string, token: string): Promise<number> {
  try {
    const res = await fetch(`${origin}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": `Bearer ${token}`,
      },
      body: INIT,
    });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0;
  }
}

/** `n` initializes with `tokenOf(i)`, 16 at a time (one client's connection share is 32). */
async function bearers(origin: string, n: number, tokenOf: (i: number) => string): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < n) out.push(await withBearer(origin, tokenOf(next++)));
  }));
  return out;
}

/** The slowest /health answer while `work` runs, in ms. */
async function healthDuring(origin: string, work: Promise<unknown>): Promise<number> {
  let done = false;
  let worst = 0;
  void work.finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    await (await fetch(`${origin}/health`)).body?.cancel();
    worst = Math.max(worst, performance.now() - t0);
    await sleep(50);
  }
  await work;
  return worst;
}

async function oauthAttacks(report: string[]): Promise<void> {
  const as = await hostileIssuer();
  await using _ = as.server;
  const start = () =>
    startHttpServer({
      args: ["--providers", "example"],
      env: {
        MCP_OAUTH_ISSUER: as.issuer,
        MCP_OAUTH_CLIENT_ID: "rs",
        MCP_OAUTH_CLIENT_SECRET: "s3cret-for-bench",
      },
    });
  {
    await using server = await start();
    const t0 = performance.now();
    const statuses = await bearers(server.origin, 400, (i) => `garbage-${i}-${crypto.randomUUID()}`);
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    const distinct = as.state.introspections;
    await bearers(server.origin, 100, () => "the-same-garbage-token");
    const repeated = as.state.introspections - distinct;
    const objectSub = await withBearer(
      server.origin,
      await as.sign({ sub: { id: "anyone" } }, `${server.origin}/mcp`),
    );
    report.push(
      `OAuth, made-up tokens: 400 distinct garbage opaque tokens, 16 at a time, got ${
        tally(statuses)
      } in ${s} s and ` +
        `made ${distinct} introspection requests; one garbage token sent 100 times, 16 at a time, made ${repeated}; ` +
        `a signed JWT whose sub is an object got ${objectSub}`,
    );
  }
  for (const [what, token] of [["key set", "a.b.c"], ["introspection answer", "opaque-token"]] as const) {
    await using server = await start();
    as.state.hugeMiB = 200;
    const before = rssMiB(server);
    let status = 0;
    const t0 = performance.now();
    const stall = await healthDuring(
      server.origin,
      (async () => (status = await withBearer(server.origin, token)))(),
    );
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    const peak = Number(
      /VmHWM:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${server.child.pid}/status`))?.[1] ?? 0,
    ) / 1024;
    as.state.hugeMiB = 0;
    report.push(
      `OAuth, a 200 MiB ${what} from the authorization server: the token got ${status} in ${s} s; RSS ` +
        `${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB; slowest /health meanwhile ${
          stall.toFixed(0)
        } ms`,
    );
  }
}

/** The edge attacks over IPv4 loopback, then IPv6 in a namespace (root only). */
export async function edgeAttacks(report: string[]): Promise<void> {
  for (
    const [name, attack] of [
      ["reserve", reserveIpv4],
      ["reserve ipv6", (r: string[]) =>
        inNamespace(r, {
          label: "health reserve, IPv6 /56",
          addresses: ["fd30:99::1/64", ...Array.from({ length: 8 }, (_, i) => `fd30:56:0:${i}::1/64`)],
          script: new URL(import.meta.url).pathname,
          flag: "--edge-ipv6-inside",
        })],
      ["metrics", metricsLabels],
      ["oauth", oauthAttacks],
    ] as const
  ) {
    console.error(`hostile: edge … ${name}`);
    try {
      await attack(report);
    } catch (e) {
      report.push(`${name}: the attack run failed: ${(e as Error).message.slice(0, 300)}`);
    }
  }
}

if (import.meta.main && Deno.args.includes("--edge-ipv6-inside")) {
  for (const line of await edgeIpv6Inside()) console.log(JSON.stringify({ line }));
}
