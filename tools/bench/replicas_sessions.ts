// Part of `deno task bench` (through replicas.ts): 2025-11-25 session calls through a real
// HAProxy (round robin, no stickiness) in front of 1, 2 and 3 replicas sharing one Redis, so a
// session's calls land on every replica; and the takeover time: a replica holding a session is
// killed (SIGKILL) and the clock runs until the session's next call is answered by another.
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { startBalancer } from "../../tests/harness/balancer.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import type { BenchRow } from "./replicas.ts";

const CALLS = Number(Deno.env.get("BENCH_REPLICA_CALLS") ?? 600);
const CONCURRENCY = 8;
const ARGS = { operation: "get", category_id: 125, fresh: true };

/** The `p` quantile of `xs`. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

async function sessionsThrough(origin: string, n: number): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < n; i++) {
    const client = new Client({ name: "bench-sessions", version: "0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
    clients.push(client);
  }
  return clients;
}

async function call(client: Client): Promise<void> {
  const r = await client.callTool({ name: "fred_category", arguments: ARGS });
  if (r.isError) throw new Error(`bench call failed: ${JSON.stringify(r.content)}`);
}

/** The row of a load run: median, p95, and p99 with the rate in the note. */
export function latencyRow(what: string, latencies: number[], perSecond: number, calls: number): BenchRow {
  return {
    what,
    median: `${pct(latencies, 0.5).toFixed(1)} ms`,
    p95: `${pct(latencies, 0.95).toFixed(1)} ms`,
    note: `p99 ${pct(latencies, 0.99).toFixed(1)} ms; ${perSecond.toFixed(0)} calls/s over ${calls} calls`,
  };
}

/**
 * The clients share CALLS calls (each takes the next while any are left) after `warmups` calls
 * each, one after another; the latency of every call and the calls per second.
 */
export async function driveCalls(
  clients: readonly Client[],
  call: (client: Client) => Promise<void>,
  warmups: number,
): Promise<{ latencies: number[]; perSecond: number }> {
  for (const c of clients) for (let i = 0; i < warmups; i++) await call(c);
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(clients.map(async (client) => {
    while (next < CALLS) {
      next++;
      const s = performance.now();
      await call(client);
      latencies.push(performance.now() - s);
    }
  }));
  return { latencies, perSecond: CALLS / ((performance.now() - t0) / 1000) };
}

/** CONCURRENCY sessions share CALLS calls through the balancer (three warm-ups each: rebuilt everywhere). */
function drive(clients: Client[]): Promise<{ latencies: number[]; perSecond: number }> {
  return driveCalls(clients, call, 3);
}

/**
 * The session benchmark rows, with replicas started by `start` (FRED on the caller's fake, one
 * Redis): calls/s and p50 through HAProxy with 1, 2 and 3 replicas, then the takeover time.
 */
export async function benchSessionReplicas(start: () => Promise<HttpServerProcess>): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const n of [1, 2, 3]) {
    const servers = await Promise.all(Array.from({ length: n }, start));
    try {
      await using lb = await startBalancer(servers.map((s) => s.port));
      const clients = await sessionsThrough(lb.origin, CONCURRENCY);
      const { latencies, perSecond } = await drive(clients);
      for (const c of clients) await c.close();
      rows.push(latencyRow(
        `fred_category call, 2025-11-25 sessions through HAProxy (round robin, no stickiness), ` +
          `${CONCURRENCY} sessions: ${n} replica${n > 1 ? "s" : ""}, one Redis`,
        latencies,
        perSecond,
        CALLS,
      ));
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  rows.push(await takeover(start));
  return rows;
}

/**
 * Kills the replica that opened a session right after its initialize; the time until the
 * session's next call is answered by another (rebuilt there from Redis if it had not been yet).
 */
async function takeover(start: () => Promise<HttpServerProcess>): Promise<BenchRow> {
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const servers = await Promise.all([0, 1, 2].map(start));
    try {
      await using lb = await startBalancer(servers.map((s) => s.port));
      // The replica that answered the initialize (HAProxy's X-Served-By: r0, r1, r2) is killed.
      const seen: string[] = [];
      const client = new Client({ name: "bench-takeover", version: "0" }, { capabilities: {} });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${lb.origin}/mcp`), {
          fetch: async (input, init) => {
            const res = await fetch(input, init);
            seen.push(res.headers.get("x-served-by") ?? "");
            return res;
          },
        }),
      );
      const opener = Number(seen[0]!.slice(1));
      const t0 = performance.now();
      await servers[opener]!.stop("SIGKILL");
      await call(client);
      times.push(performance.now() - t0);
      await client.close();
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  return {
    what:
      "takeover: the replica that opened a session killed (SIGKILL), until the session's next call is answered",
    median: `${pct(times, 0.5).toFixed(1)} ms`,
    p95: `${Math.max(...times).toFixed(1)} ms`,
    note: `max of ${times.length} runs (p95 column); the session survived in every run`,
  };
}
