// Part of `deno task bench`: tool calls through one replica (without and with Redis) and through
// two replicas sharing one Redis behind a client-side round-robin, 2025-11-25 sessions through
// HAProxy in front of 1-3 replicas with the takeover time (replicas_sessions.ts), plus the cost
// of one Redis round trip. The upstream is a loopback fake FRED; every call bypasses the cache (`fresh`), so
// each one makes its Redis round trips (breaker, cache write) and one upstream request.
import { Logger } from "../../lib/log.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { RedisRateWindowStore } from "../../lib/redis/http_stores.ts";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import { fredConfig, startFakeFred } from "../../tests/providers/fred/fake_fred.ts";
import { startRedis } from "../../tests/redis/_redis_server.ts";
import { benchJobTakeover } from "./job_takeover.ts";
import { benchSessionReplicas, driveCalls, latencyRow, pct } from "./replicas_sessions.ts";

/** One measured row. */
export interface BenchRow {
  what: string;
  median: string;
  p95: string;
  note: string;
}

const CALLS = Number(Deno.env.get("BENCH_REPLICA_CALLS") ?? 600);
const CONCURRENCY = 8;

async function clientsFor(servers: HttpServerProcess[]): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < CONCURRENCY; i++) {
    const server = servers[i % servers.length]!;
    const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    clients.push(client);
  }
  return clients;
}

/** CONCURRENCY callers share CALLS calls; caller i uses client i (round-robin over the replicas). */
function drive(clients: Client[]): Promise<{ latencies: number[]; perSecond: number }> {
  const args = { operation: "get", category_id: 125, fresh: true };
  return driveCalls(clients, async (client) => {
    const r = await client.callTool({ name: "fred_category", arguments: args });
    if (r.isError) throw new Error(`bench call failed: ${JSON.stringify(r.content)}`);
  }, 1);
}

/** Runs the replica benchmarks and returns their rows. */
export async function benchReplicas(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin, { cache_ttl: 300, breaker_threshold: 1000 }));
  try {
    const scenarios: [string, number, Record<string, string>][] = [
      ["1 replica, no Redis", 1, {}],
      ["1 replica, Redis", 1, { REDIS_URL: redis.url }],
      ["2 replicas, one Redis, round-robin", 2, { REDIS_URL: redis.url }],
    ];
    for (const [label, n, env] of scenarios) {
      const servers = await Promise.all(
        Array.from(
          { length: n },
          () => startHttpServer({ args: ["--providers", "fred", "--stateless"], home, env }),
        ),
      );
      try {
        const clients = await clientsFor(servers);
        const { latencies, perSecond } = await drive(clients);
        for (const c of clients) await c.close();
        rows.push(latencyRow(
          `fred_category call, stateless HTTP, ${CONCURRENCY} concurrent callers: ${label}`,
          latencies,
          perSecond,
          CALLS,
        ));
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
    rows.push(
      ...await benchSessionReplicas(() =>
        startHttpServer({ args: ["--providers", "fred"], home, env: { REDIS_URL: redis.url } })
      ),
    );
    const conn = await RedisConnection.connect({
      url: redis.url,
      prefix: "bench:",
      timeoutMs: 1000,
      retryMaxMs: 1000,
      logger: new Logger(),
    });
    try {
      const ping: number[] = [];
      const reserve: number[] = [];
      const store = new RedisRateWindowStore(conn, "bench");
      for (let i = 0; i < 2000; i++) {
        let s = performance.now();
        await conn.command(["PING"]);
        ping.push(performance.now() - s);
        s = performance.now();
        await store.reserve("bench", [{ requests: 1_000_000, perMs: 60_000 }], Date.now(), Date.now());
        reserve.push(performance.now() - s);
      }
      rows.push({
        what: "one Redis round trip (PING), loopback",
        median: `${pct(ping, 0.5).toFixed(2)} ms`,
        p95: `${pct(ping, 0.95).toFixed(2)} ms`,
        note: `p99 ${pct(ping, 0.99).toFixed(2)} ms`,
      });
      rows.push({
        what: "one rate-window reservation (Lua script), loopback",
        median: `${pct(reserve, 0.5).toFixed(2)} ms`,
        p95: `${pct(reserve, 0.95).toFixed(2)} ms`,
        note: `p99 ${pct(reserve, 0.99).toFixed(2)} ms`,
      });
    } finally {
      await conn.close();
    }
  } finally {
    removeHome(home);
  }
  rows.push(...(await benchJobTakeover()));
  return rows;
}

if (import.meta.main) {
  for (const r of await benchReplicas()) {
    console.log(`${r.what}: median ${r.median}, p95 ${r.p95}; ${r.note}`);
  }
}
