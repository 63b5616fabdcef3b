// Part of `deno task bench` (`--only edge`): the HTTP edge under load, side by side with the
// smallest SDK v2 server (tools/bench/minimal_http_server.ts: `createMcpHandler` under
// `Deno.serve`, one echo tool). Two loads, each in interleaved rounds (ours, then the SDK's, and
// again) so both see the same machine:
// - 2025-11-25 sessions: BENCH_EDGE_CLIENTS (50) SDK v1 clients, each making BENCH_EDGE_CALLS (40)
//   `example-echo` calls one after another, all clients at once;
// - 2026-07-28 stateless: the same with SDK v2 clients, which negotiate 2026-07-28.
// Reported per load: calls per second and p50/p95 of one call (median over rounds), and the
// ratios to the SDK server.
import {
  Client as ClientV1,
  StreamableHTTPClientTransport as TransportV1,
} from "../../tests/harness/sdk_client.ts";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "../../tests/harness/sdk2_client.ts";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { fileURLToPath } from "node:url";

const CLIENTS = Number(Deno.env.get("BENCH_EDGE_CLIENTS") ?? 50);
const CALLS = Number(Deno.env.get("BENCH_EDGE_CALLS") ?? 40);
const ROUNDS = Number(Deno.env.get("BENCH_EDGE_ROUNDS") ?? 7);

/** One load's result on one server. */
export interface LoadResult {
  callsPerSecond: number;
  p50: number;
  p95: number;
  failed: number;
  /** The server's CPU time (user + system) per call, in milliseconds. */
  cpuPerCall: number;
}

/** A process's CPU time so far (user + system), in milliseconds; NaN where /proc is not there. */
function cpuMs(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

interface Target {
  origin: string;
  tool: string;
  /** The server's process id, for its CPU time. */
  pid: number;
  close(): Promise<void>;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
}

async function startOurs(): Promise<Target> {
  // Every bench client comes from 127.0.0.1: the per-client shares are opened up as an operator
  // behind a proxy would, so the load measures the edge, not the fair-share refusals.
  const server: HttpServerProcess = await startHttpServer({
    args: ["--providers", "example"],
    env: {
      MCP_MAX_SESSIONS_PER_CLIENT: "10000",
      MCP_MAX_CONNECTIONS_PER_CLIENT: "0",
      RATE_LIMIT_ENABLED: "false",
    },
  });
  return {
    origin: server.origin,
    tool: "example-echo",
    pid: server.child.pid,
    close: () => server[Symbol.asyncDispose](),
  };
}

async function startSdk(): Promise<Target> {
  const path = fileURLToPath(new URL("./minimal_http_server.ts", import.meta.url));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", path],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let port: number | undefined;
  while (port === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the SDK server stopped before listening: ${text}`);
    text += value;
    const m = /"port":(\d+)/.exec(text);
    if (m) port = Number(m[1]);
  }
  (async () => {
    while (!(await reader.read()).done);
  })();
  return {
    origin: `http://127.0.0.1:${port}`,
    tool: "echo",
    pid: child.pid,
    close: async () => {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

type Era = "2025-11-25" | "2026-07-28";

async function connect(
  target: Target,
  era: Era,
): Promise<{ call(i: number): Promise<unknown>; close(): Promise<void> }> {
  const url = new URL(`${target.origin}/mcp`);
  if (era === "2025-11-25") {
    const client = new ClientV1({ name: "edge-bench", version: "1" });
    const transport = new TransportV1(url);
    await client.connect(transport);
    return {
      call: (i) => client.callTool({ name: target.tool, arguments: { text: `call ${i}` } }),
      close: async () => {
        await transport.terminateSession();
        await client.close();
      },
    };
  }
  const client = new ClientV2({ name: "edge-bench", version: "2" }, {
    versionNegotiation: { mode: { pin: era } },
  });
  await client.connect(new TransportV2(url));
  const version = client.getNegotiatedProtocolVersion();
  if (version !== era) throw new Error(`the SDK v2 client spoke ${version} to ${target.origin}, not ${era}`);
  return {
    call: (i) => client.callTool({ name: target.tool, arguments: { text: `call ${i}` } }),
    close: () => client.close(),
  };
}

/** Runs one load against one server: CLIENTS clients connect, then all call at once. */
export async function load(target: Target, era: Era): Promise<LoadResult> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(target, era)));
  const times: number[] = [];
  let failed = 0;
  const cpu0 = cpuMs(target.pid);
  const t0 = performance.now();
  await Promise.all(clients.map(async (c) => {
    for (let i = 0; i < CALLS; i++) {
      const s = performance.now();
      try {
        const r = await c.call(i) as { isError?: boolean };
        if (r.isError) failed++;
      } catch {
        failed++;
      }
      times.push(performance.now() - s);
    }
  }));
  const elapsed = performance.now() - t0;
  const cpu = cpuMs(target.pid) - cpu0;
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  return {
    callsPerSecond: times.length / (elapsed / 1000),
    p50: pct(times, 0.5),
    p95: pct(times, 0.95),
    failed,
    cpuPerCall: cpu / times.length,
  };
}

/** One load's figures over rounds: ours and the SDK's, medians. */
export interface EdgeComparison {
  era: Era;
  ours: LoadResult;
  sdk: LoadResult;
}

function medianOf(results: LoadResult[]): LoadResult {
  return {
    callsPerSecond: pct(results.map((r) => r.callsPerSecond), 0.5),
    p50: pct(results.map((r) => r.p50), 0.5),
    p95: pct(results.map((r) => r.p95), 0.5),
    failed: results.reduce((n, r) => n + r.failed, 0),
    cpuPerCall: pct(results.map((r) => r.cpuPerCall), 0.5),
  };
}

/** Both loads, interleaved rounds, one fresh server each. */
export async function compareEdge(log: (line: string) => void = console.error): Promise<EdgeComparison[]> {
  const out: EdgeComparison[] = [];
  const ours = await startOurs();
  const sdk = await startSdk();
  try {
    for (const era of ["2025-11-25", "2026-07-28"] as const) {
      // One warm-up each, not counted.
      await load(ours, era);
      await load(sdk, era);
      const o: LoadResult[] = [];
      const s: LoadResult[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        o.push(await load(ours, era));
        s.push(await load(sdk, era));
        log(
          `${era} round ${r + 1}: ours ${o.at(-1)!.callsPerSecond.toFixed(0)} calls/s p50 ${
            o.at(-1)!.p50.toFixed(1)
          } ms cpu ${o.at(-1)!.cpuPerCall.toFixed(3)} ms/call; SDK ${
            s.at(-1)!.callsPerSecond.toFixed(0)
          } calls/s p50 ${s.at(-1)!.p50.toFixed(1)} ms cpu ${s.at(-1)!.cpuPerCall.toFixed(3)} ms/call`,
        );
      }
      out.push({ era, ours: medianOf(o), sdk: medianOf(s) });
    }
  } finally {
    await ours.close();
    await sdk.close();
  }
  return out;
}

/** The heading of the section of docs/BENCHMARKS.md these figures make. */
export const EDGE_HEADING = "## The HTTP edge beside the smallest SDK server";

/** The section of docs/BENCHMARKS.md, under {@linkcode EDGE_HEADING}. */
export function edgeSection(results: EdgeComparison[]): string {
  const lines = [
    `${CLIENTS} clients at once, each making ${CALLS} tool calls one after another, against this server as`,
    "`deno task start:http` and the image run it (its V8 flags; `--providers example`, `example-echo`) and the",
    "smallest SDK v2 server (tools/bench/minimal_http_server.ts, `deno run` with V8's defaults),",
    `in ${ROUNDS} interleaved rounds after one warm-up each; medians over rounds. Client and servers share the`,
    "machine. Ratios: ours over the SDK's (throughput: higher is better; p50: lower is better). Server CPU is",
    "each server process's user + system time over the load, per call (from /proc): it does not depend on",
    "what else the machine runs.",
    "",
    "| load | ours calls/s | SDK calls/s | throughput ratio | ours p50 | SDK p50 | p50 ratio | ours p95 | SDK p95 | server CPU per call, ours / SDK | failed |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const label = r.era === "2025-11-25"
      ? "2025-11-25 sessions (SDK v1 clients)"
      : "2026-07-28 stateless (SDK v2 clients)";
    lines.push(
      `| ${label} | ${r.ours.callsPerSecond.toFixed(0)} | ${r.sdk.callsPerSecond.toFixed(0)} | ${
        (r.ours.callsPerSecond / r.sdk.callsPerSecond).toFixed(2)
      }× | ${r.ours.p50.toFixed(1)} ms | ${r.sdk.p50.toFixed(1)} ms | ${
        (r.ours.p50 / r.sdk.p50).toFixed(2)
      }× | ${r.ours.p95.toFixed(1)} ms | ${r.sdk.p95.toFixed(1)} ms | ${r.ours.cpuPerCall.toFixed(2)} / ${
        r.sdk.cpuPerCall.toFixed(2)
      } ms (${(r.ours.cpuPerCall / r.sdk.cpuPerCall).toFixed(2)}×) | ${r.ours.failed + r.sdk.failed} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const results = await compareEdge();
  console.log(edgeSection(results));
}
