// `deno task bench`: measures start-up, call latency, memory and the HTTP client's overhead on
// this machine, prints the figures and writes them to docs/BENCHMARKS.md. Figures are measured,
// never asserted: they vary with the machine.
import { FakeClock } from "../../lib/clock.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime } from "../../lib/http/runtime.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import { startHttpServer } from "../fakes/http_server.ts";
import { Client, StreamableHTTPClientTransport } from "../fakes/sdk_client.ts";
import { startStdio } from "../fakes/server.ts";
import { denoFmt } from "../tools/docs.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { benchReplicas } from "./replicas.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 10);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function p95(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))]!;
}
function peakRssMiB(pid: number): number | undefined {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Row {
  what: string;
  median: string;
  p95: string;
  note: string;
}
const rows: Row[] = [];
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function startup(label: string, providers: string): Promise<void> {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const s = await startStdio({ args: ["--providers", providers] });
    times.push(performance.now() - t0);
    await s.client.listTools();
    const pid = s.transport.child?.pid;
    const r = pid ? peakRssMiB(pid) : undefined;
    if (r) rss.push(r);
    await s[Symbol.asyncDispose]();
  }
  rows.push({
    what: `stdio start-up to initialize answered (${label})`,
    median: fmt(median(times)),
    p95: fmt(p95(times)),
    note: rss.length ? `peak RSS median ${median(rss).toFixed(0)} MiB` : "",
  });
}

async function callLatency(): Promise<void> {
  const s = await startStdio({ args: ["--providers", "example"] });
  const list: number[] = [];
  const call: number[] = [];
  for (let i = 0; i < RUNS * 20; i++) {
    let t0 = performance.now();
    await s.client.listTools();
    list.push(performance.now() - t0);
    t0 = performance.now();
    await s.client.callTool({ name: "example-echo", arguments: { i } });
    call.push(performance.now() - t0);
  }
  const pid = s.transport.child?.pid;
  const rss = pid ? peakRssMiB(pid) : undefined;
  await s[Symbol.asyncDispose]();
  rows.push({
    what: "tools/list round trip over stdio (example)",
    median: fmt(median(list)),
    p95: fmt(p95(list)),
    note: "",
  });
  rows.push({
    what: "tools/call round trip over stdio (example-echo)",
    median: fmt(median(call)),
    p95: fmt(p95(call)),
    note: rss ? `peak RSS after ${RUNS * 40} requests ${rss.toFixed(0)} MiB` : "",
  });
}

async function httpLatency(stateless: boolean): Promise<void> {
  await using server = await startHttpServer({
    args: ["--providers", "example", ...(stateless ? ["--stateless"] : [])],
  });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  const call: number[] = [];
  for (let i = 0; i < RUNS * 20; i++) {
    const t0 = performance.now();
    await client.callTool({ name: "example-echo", arguments: { i } });
    call.push(performance.now() - t0);
  }
  await client.close();
  const rss = peakRssMiB(server.child.pid);
  rows.push({
    what: `tools/call round trip over Streamable HTTP, ${
      stateless ? "stateless" : "stateful"
    } (example-echo)`,
    median: fmt(median(call)),
    p95: fmt(p95(call)),
    note: rss ? `server peak RSS ${rss.toFixed(0)} MiB` : "",
  });
}

async function clientOverhead(): Promise<void> {
  const body = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, title: `Item ${i}` })) };
  await using fake = FakeUpstream.start([{ path: "/data", reply: { json: body } }]);
  const runtime = new HttpRuntime({ clock: new FakeClock() });
  const client = runtime.client({
    provider: "bench",
    upstreamName: "Bench",
    baseUrl: fake.origin,
    timeoutMs: 5000,
    retry: DEFAULT_RETRY_POLICY,
    cacheTtlMs: 60_000,
  });
  const miss: number[] = [];
  const hit: number[] = [];
  for (let i = 0; i < RUNS * 20; i++) {
    let t0 = performance.now();
    await client.json("/data", { query: { i } });
    miss.push(performance.now() - t0);
    t0 = performance.now();
    await client.json("/data", { query: { i } });
    hit.push(performance.now() - t0);
  }
  rows.push({
    what: "HttpClient GET + JSON decode, loopback, ~9 KB body (cache miss)",
    median: fmt(median(miss)),
    p95: fmt(p95(miss)),
    note: "",
  });
  rows.push({
    what: "HttpClient same request from the cache (hit)",
    median: fmt(median(hit)),
    p95: fmt(p95(hit)),
    note: "",
  });
}

const defaults = PROVIDERS.filter((s) => s.defaultEnabled).map((s) => s.id).join(",");
await startup("example provider", "example");
if (defaults) await startup(`default providers: ${defaults}`, defaults);
await callLatency();
await httpLatency(false);
await httpLatency(true);
await clientOverhead();
rows.push(...await benchReplicas());

const cpu = (() => {
  try {
    return /model name\s*:\s*(.+)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1] ?? "unknown CPU";
  } catch {
    return "unknown CPU";
  }
})();
const header = `Measured ${
  new Date().toISOString().slice(0, 10)
} with Deno ${Deno.version.deno} on ${Deno.build.os}/${Deno.build.arch}, ${navigator.hardwareConcurrency} cores (${cpu}); ${RUNS} runs per start-up figure, ${
  RUNS * 20
} per latency figure.`;
const table = [
  "| What | Median | p95 | Note |",
  "| --- | --- | --- | --- |",
  ...rows.map((r) => `| ${r.what} | ${r.median} | ${r.p95} | ${r.note} |`),
].join("\n");
const doc = `# Benchmarks

Written by \`deno task bench\` (tests/bench/bench.ts). ${header}

Start-up is measured from spawning \`deno run\` (with the same scoped permissions as \`deno task start\`)
to the answer of \`initialize\`, so it includes Deno's own start and module loading. Latency figures
are client-observed round trips through the MCP SDK's \`Client\` over stdio. Figures are for
orientation on this machine; they are not asserted by tests.

The replica rows (tests/bench/replicas.ts) drive \`fred_category\` calls against a loopback fake FRED
with \`fresh: true\` (so every call makes its Redis round trips and one upstream request), from 8
concurrent callers spread round-robin over the replicas, with a real \`redis-server\` on loopback. On
this 2-core machine the replicas, the fake upstream, Redis and the load generator share the same two
cores, so a second replica adds no CPU: the rows show what Redis costs per call, not how far N
machines scale.

${table}
`;
console.log(header);
console.log(table);
await Deno.writeTextFile(new URL("../../docs/BENCHMARKS.md", import.meta.url), await denoFmt(doc, "md"));
console.log("Wrote docs/BENCHMARKS.md");
