// `deno task bench`: measures start-up, call latency, memory and the HTTP client's overhead on
// this machine, prints the figures and writes them to docs/BENCHMARKS.md. Figures are measured,
// never asserted: they vary with the machine.
//
//   deno task bench [--baseline DIR] [--only startup|binary|observability|tasks|suite|edge]
//
// --only observability measures only what metrics and traces cost (tools/bench/observability.ts)
// and replaces that section of docs/BENCHMARKS.md, leaving the others as they are.
//
// --only startup measures start-up and memory in each way users start the server
// (tools/bench/startup_ways.ts) and replaces only that section of docs/BENCHMARKS.md.
//
// --only tasks runs the task suite (tools/bench/tasks.ts) both ways and replaces only that
// section of docs/BENCHMARKS.md.
//
// --only edge measures the HTTP edge under load beside the smallest SDK v2 server
// (tools/bench/http_edge.ts) and replaces only that section of docs/BENCHMARKS.md.
// --only binary measures the release binary's payload and its stand-in's start-up
// (tools/bench/binary.ts) and replaces only that section of docs/BENCHMARKS.md.
//
// --only suite runs `deno task test` once and writes its wall time and slowest files
// (tools/bench/suite.ts); a whole bench run keeps that section as it is.
// --baseline DIR measures another checkout (e.g. the commit before a change) next to this one:
// start-up to tools/list and a tools/call round trip, for before/after ratios.
import { parseArgs } from "node:util";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { FakeClock } from "../../lib/clock.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import { removeHome, startStdio } from "../../tests/harness/spawn.ts";
import { denoFmt } from "../docs.ts";
import { FakeUpstream } from "../../tests/fakes/upstream.ts";
import { measureTools } from "../tool_budget.ts";
import { benchProvenance } from "./provenance.ts";
import { benchReplicas } from "./replicas.ts";
import { benchBinary } from "./binary.ts";
import { benchStartupWays } from "./startup_ways.ts";
import { benchOAuth } from "./oauth.ts";
import { benchObservability } from "./observability.ts";
import { runSuite as runTestSuite, suiteSection } from "./suite.ts";
import { viewRows } from "./views.ts";
import {
  checkoutCommand,
  everythingServer,
  firstCalls,
  httpSessions,
  interleavedStarts,
  loadAverage,
  memoryMiB,
  minimalServer,
  pairedRatios,
  quantile,
  stdioCalls,
  thisServer,
} from "./startup.ts";
import type { ServerCommand, Spread } from "./startup.ts";
import { answerBudgets, report, runSuite, textOnlySummary } from "./tasks.ts";
import { compareEdge, EDGE_HEADING, edgeSection } from "./http_edge.ts";

const { values: flags } = parseArgs({
  options: { baseline: { type: "string" }, only: { type: "string" } },
});
const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 10);
/** Starts per command in the interleaved start-up comparison. */
const START_RUNS = Number(Deno.env.get("BENCH_START_RUNS") ?? 25);
/** Calls in the memory-after-calls runs. */
const MEMORY_CALLS = Number(Deno.env.get("BENCH_MEMORY_CALLS") ?? 10_000);
/** HTTP sessions, and calls per session, of the load run. */
const HTTP_SESSIONS = Number(Deno.env.get("BENCH_HTTP_SESSIONS") ?? 200);
const HTTP_CALLS = Number(Deno.env.get("BENCH_HTTP_CALLS") ?? 50);

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
  await loadHttpClient();
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

const ms = (x: number): string => `${x.toFixed(0)} ms`;
const mib = (x: number): string => `${x.toFixed(1)} MiB`;
const range = (s: Spread, unit: (x: number) => string): string =>
  `${unit(s.median)} (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;

/** Rows of the start-up and memory section, and the lines of its text. */
const startupRows: string[] = [];

/** The same command without the start task's V8 flags, to show what they trade. */
function withoutV8Flags(command: ServerCommand): ServerCommand {
  return {
    ...command,
    label: `${command.label}, without its V8 flags`,
    cmd: command.cmd.filter((a) => !a.startsWith("--v8-flags=")),
  };
}
const startupNotes: string[] = [];

async function startupAndMemory(): Promise<void> {
  const scratch = Deno.makeTempDirSync({ prefix: "opendata-mcp-bench-npm-" });
  try {
    const ours = thisServer("this server, default providers (deno task start)");
    const minimal = minimalServer();
    const everything = await everythingServer(scratch);
    const commands: ServerCommand[] = [ours, minimal];
    if (typeof everything === "string") startupNotes.push(`server-everything not measured: ${everything}`);
    else commands.push(everything);
    const empty = Deno.makeTempFileSync({ prefix: "opendata-mcp-bench-", suffix: ".ts" });
    const load = loadAverage();
    const { starts, bare } = await interleavedStarts(commands, START_RUNS, [
      Deno.execPath(),
      "run",
      "-q",
      "--no-config",
      empty,
    ]);
    Deno.removeSync(empty);
    const own = starts.get(ours.label)!;
    const base = starts.get(minimal.label)!;
    startupRows.push(
      "| Start-up to tools/list answered | Median (min–max) | Ratio to minimal (of medians) | Ratio to minimal, paired by round: median (min–max) | RSS after start, median (min–max) |",
      "| --- | --- | --- | --- | --- |",
    );
    const ratio = (s: Spread): string => `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
    for (const c of commands) {
      const r = starts.get(c.label)!;
      startupRows.push(
        `| ${c.label} | ${range(r.ms, ms)} | ${(r.ms.median / base.ms.median).toFixed(2)}× | ${
          ratio(pairedRatios(r.rounds, base.rounds))
        } | ${range(r.rss, mib)} |`,
      );
    }
    if (bare) startupRows.push(`| bare \`deno run\` of an empty file, to exit | ${range(bare, ms)} | | | |`);
    startupNotes.push(
      `Start-up: ${START_RUNS} starts of each, interleaved, after one unmeasured start each; load average ${load} when it began.`,
      `This server against the minimal SDK server: ${
        (own.ms.median / base.ms.median).toFixed(2)
      }× of medians, ${
        pairedRatios(own.rounds, base.rounds).median.toFixed(2)
      }× paired by round (target ≤ 1.2×)` +
        (typeof everything === "string"
          ? ""
          : `; against server-everything on Node: ${
            (own.ms.median / starts.get(everything.label)!.ms.median).toFixed(2)
          }× of medians, ${
            pairedRatios(own.rounds, starts.get(everything.label)!.rounds).median.toFixed(2)
          }× paired (target ≤ 0.5×; the minimal SDK server itself: ${
            (base.ms.median / starts.get(everything.label)!.ms.median).toFixed(2)
          }×, ${
            pairedRatios(base.rounds, starts.get(everything.label)!.rounds).median.toFixed(2)
          }× paired)`) +
        `; RSS after start ${mib(own.rss.median)} (target ≤ 75 MiB).`,
    );

    const memoryRows: string[] = [];
    const unflagged = withoutV8Flags(ours);
    for (const c of [ours, unflagged, minimal]) {
      const r = await stdioCalls(c, MEMORY_CALLS);
      memoryRows.push(
        `| ${c.label}: ${MEMORY_CALLS.toLocaleString("en-US")} × ${c.call!.name} over stdio | ${
          mib(r.startRss)
        } | ${mib(r.rss)} | ${mib(r.peak)} | ${r.roundTrip.median.toFixed(2)} ms / ${r.p99.toFixed(2)} ms |`,
      );
      if (c === ours) {
        startupNotes.push(`RSS after ${MEMORY_CALLS} stdio calls: ${mib(r.rss)} (target ≤ 120 MiB).`);
      }
    }
    const lazy = await firstCalls(ours, { name: "boj_list_databases", arguments: {} }, 7);
    startupNotes.push(
      `A provider's code loads on its first use: the first boj_list_databases call of a fresh server took ${
        range(lazy.first, ms)
      }, the second ${lazy.second.median.toFixed(1)} ms (7 servers).`,
    );
    startupRows.push(
      "",
      "| Memory after calls | RSS before | RSS after | Peak RSS | Round trip p50 / p99 |",
      "| --- | --- | --- | --- | --- |",
      ...memoryRows,
    );

    startupRows.push(
      "",
      "| HTTP load | Calls | p50 | p99 | Calls/s | RSS before | RSS after | Peak RSS |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
    );
    for (const flagged of [true, false]) {
      await using http = await startHttpServer({
        withoutV8Flags: !flagged,
        env: {
          OPENDATA_MCP_TOOLSETS: "",
          MCP_MAX_SESSIONS: String(HTTP_SESSIONS + 50),
          MCP_MAX_CONNECTIONS: String(HTTP_SESSIONS * 2 + 50),
          // The load generator is one client (one loopback address): the per-client shares that
          // keep one client of a public deployment from taking every slot are off here (0).
          MCP_MAX_SESSIONS_PER_CLIENT: "0",
          MCP_MAX_CONNECTIONS_PER_CLIENT: "0",
          RATE_LIMIT_ENABLED: "false",
        },
      });
      const before = memoryMiB(http.child.pid);
      const t0 = performance.now();
      const latencies = await httpSessions(http.origin, HTTP_SESSIONS, HTTP_CALLS, ours.call!);
      const seconds = (performance.now() - t0) / 1000;
      const after = memoryMiB(http.child.pid);
      const p50 = quantile(latencies, 0.5);
      startupRows.push(
        `| ${HTTP_SESSIONS} sessions × ${HTTP_CALLS} × ${
          ours.call!.name
        }, Streamable HTTP (2025-11-25 sessions)${
          flagged ? " (deno task start:http)" : ", without the start:http task's V8 flags"
        } | ${latencies.length} | ${p50.toFixed(1)} ms | ${quantile(latencies, 0.99).toFixed(1)} ms | ${
          (latencies.length / seconds).toFixed(0)
        } | ${mib(before?.rss ?? NaN)} | ${mib(after?.rss ?? NaN)} | ${mib(after?.peak ?? NaN)} |`,
      );
      if (flagged) {
        startupNotes.push(
          `Under ${HTTP_SESSIONS} sessions × ${HTTP_CALLS} calls: peak RSS ${
            mib(after?.peak ?? NaN)
          } (target ≤ 250 MiB), p50 ${p50.toFixed(1)} ms (target ≤ 100 ms).`,
        );
      }
    }
  } finally {
    Deno.removeSync(scratch, { recursive: true });
  }
}

/** What the tool list costs an agent, default and with every toolset. */
const economyRows: string[] = [];
async function contextEconomy(): Promise<void> {
  const measure = async (toolsets?: string) => {
    const { app, costs } = await measureTools({ listed: true, ...(toolsets ? { flags: { toolsets } } : {}) });
    await app.close();
    const tools = costs.map((c) => c.tool);
    return {
      tools: tools.length,
      tokens: costs.reduce((n, c) => n + c.tokens, 0),
      listTokens: encode(JSON.stringify({ tools })).length,
      chars: JSON.stringify({ tools }).length,
    };
  };
  const byDefault = await measure();
  const all = await measure("all");
  economyRows.push(
    "| tools/list (default providers, FRED key set) | Tools | o200k tokens (name + description + input schema) | o200k tokens of the whole JSON | Characters of the whole JSON |",
    "| --- | --- | --- | --- | --- |",
    `| default toolsets | ${byDefault.tools} | ${byDefault.tokens} | ${byDefault.listTokens} | ${byDefault.chars} |`,
    `| \`--toolsets all\` | ${all.tools} | ${all.tokens} | ${all.listTokens} | ${all.chars} |`,
  );
}

/** The task suite: realistic questions answered by following the next calls the server names. */
const taskRows: string[] = [];
async function taskSuite(): Promise<void> {
  const results = await runSuite();
  taskRows.push(
    report(results),
    "",
    textOnlySummary(await runSuite(undefined, { structured: false }), results),
    "",
    "What each kind of answer costs (o200k tokens of text per answer, over every answer of the suite), beside",
    "its budget (tools/bench/tasks.ts ANSWER_BUDGETS; the test holds every answer to it):",
    "",
    answerBudgets(results),
  );
}

/** The task suite's section of docs/BENCHMARKS.md, from `taskRows`. */
function tasksSection(): string {
  return `## Questions answered from the default surface

tools/bench/tasks.ts asks realistic questions of the three default tools over stdio, with all eight
providers on recorded bodies (tests/fakes/recorded.ts). A scripted agent types the question into
\`opendata_search\` and then follows only the next calls the answers name (structuredContent.next_calls,
preferring one whose \`for\` fits the question); it writes no call of its own. Tokens are o200k tokens of the
answers a model reads: the text blocks, and the text blocks plus the serialized structured content (what a
client that forwards both, such as Gemini's \`mcpToTool\`, pays). The tool list (568 tokens, once per
conversation; "What the tool list costs an agent" below) is not included. Token counts do not depend on the
machine. The suite runs a second time against the server with \`structured_content: off\`, where the agent
reads the next calls from the text alone.

Some questions start with the agent's own call instead of the search, as a model writes one: a list to open
or page (the second hop), a call that finds nothing, a misspelt tool or argument name, a wrong date format, an
upstream that is down (answered by the error and its retry advice). Every call any answer names is then called
once as given (tests/mcp/task_suite_test.ts): a hint that fails is a defect, like a dead end.

${taskRows.join("\n")}`;
}

/** --baseline DIR: start-up and a tools/call round trip of another checkout next to this one. */
const baselineRows: string[] = [];
async function baseline(dir: string): Promise<void> {
  const home = Deno.makeTempDirSync({ prefix: "opendata-mcp-bench-baseline-" });
  try {
    const commit = new TextDecoder().decode(
      new Deno.Command("git", { args: ["-C", dir, "rev-parse", "--short", "HEAD"], stderr: "null" })
        .outputSync().stdout,
    ).trim();
    const before = checkoutCommand(dir, home, `before (${commit ? `commit ${commit}` : dir})`);
    const after = thisServer("after (this checkout)");
    const { starts } = await interleavedStarts([after, before], START_RUNS);
    const echo = { name: "example-echo", arguments: { text: "hello" } };
    const trips = [];
    for (const c of [after, before]) {
      const cmd = { ...c, cmd: [...c.cmd, "--providers", "example"], call: echo };
      trips.push(await stdioCalls(cmd, 1000));
    }
    const [a, b] = [starts.get(after.label)!, starts.get(before.label)!];
    baselineRows.push(
      "| Before / after | Start-up to tools/list, default providers | RSS after start | example-echo round trip over stdio, p50 / p99 (1,000 calls) |",
      "| --- | --- | --- | --- |",
      `| ${before.label} | ${range(b.ms, ms)} | ${range(b.rss, mib)} | ${
        trips[1]!.roundTrip.median.toFixed(2)
      } ms / ${trips[1]!.p99.toFixed(2)} ms |`,
      `| ${after.label} | ${range(a.ms, ms)} | ${range(a.rss, mib)} | ${
        trips[0]!.roundTrip.median.toFixed(2)
      } ms / ${trips[0]!.p99.toFixed(2)} ms |`,
      `| after / before | ${(a.ms.median / b.ms.median).toFixed(2)}× | ${
        (a.rss.median / b.rss.median).toFixed(2)
      }× | ${(trips[0]!.roundTrip.median / trips[1]!.roundTrip.median).toFixed(2)}× |`,
    );
  } finally {
    removeHome(home);
  }
}

/** What the views section says about its figures. */
const VIEW_SECTION_TEXT =
  `Each view is one self-contained HTML document (hand-written script, style and SVG, nothing
loaded from elsewhere), read by the host with \`resources/read\` before it shows anything. Sizes are
exact (tools/bench/views.ts; tests/mcp/views_html_test.ts holds each view to its budget). A client that
advertises the extension also gets, per result, the view model in \`_meta\` (not model context), and
per listed view-backed tool 141 to 147 bytes of \`_meta\` in \`tools/list\`; other clients get neither.`;

const only = flags.only;
/** `doc` with the section under `heading` replaced by `section` (or added before the second section). */
function withSection(doc: string, heading: string, section: string): string {
  const start = doc.indexOf(heading);
  if (start >= 0) {
    const next = doc.indexOf("\n## ", start + heading.length);
    return doc.slice(0, start) + section + (next >= 0 ? `\n${doc.slice(next)}` : "\n");
  }
  const second = doc.indexOf("\n## ", doc.indexOf("\n## ") + 1);
  return second >= 0
    ? `${doc.slice(0, second)}\n\n${section}\n${doc.slice(second)}`
    : `${doc.trimEnd()}\n\n${section}\n`;
}
/** --only: what each measures, and the heading of the one section of docs/BENCHMARKS.md it replaces. */
const ONLY: Record<string, { heading: string; measure: () => Promise<string> }> = {
  binary: { heading: "## The release binary", measure: () => benchBinary(START_RUNS) },
  suite: { heading: "## The test suite", measure: async () => suiteSection(await runTestSuite()) },
  startup: {
    heading: "## Start-up as users start it",
    measure: () => benchStartupWays(START_RUNS, MEMORY_CALLS),
  },
  observability: { heading: "## What metrics and traces cost", measure: () => benchObservability() },
  edge: {
    heading: EDGE_HEADING,
    measure: async () => `${EDGE_HEADING}\n\n${edgeSection(await compareEdge())}`,
  },
  tasks: {
    heading: "## Questions answered from the default surface",
    measure: async () => {
      await taskSuite();
      return tasksSection();
    },
  },
};
if (only !== undefined) {
  const chosen = ONLY[only];
  if (!chosen) {
    console.error(`--only takes ${Object.keys(ONLY).join(", ")}`);
    Deno.exit(2);
  }
  const section = await chosen.measure();
  console.log(section);
  const path = new URL("../../docs/BENCHMARKS.md", import.meta.url);
  await Deno.writeTextFile(
    path,
    await denoFmt(withSection(Deno.readTextFileSync(path), chosen.heading, section), "md"),
  );
  console.log(`Wrote the section "${chosen.heading.slice(3)}" of docs/BENCHMARKS.md`);
  Deno.exit(0);
}
const observability: string[] = [];
await startupAndMemory();
const waysSection = await benchStartupWays(START_RUNS, MEMORY_CALLS);
const binarySection = await benchBinary(START_RUNS);
if (flags.baseline) await baseline(flags.baseline);
const viewSizeRows: string[] = [];
await taskSuite();
await contextEconomy();
viewSizeRows.push(...await viewRows());
const defaults = PROVIDERS.filter((s) => s.defaultEnabled).map((s) => s.id).join(",");
await startup("example provider", "example");
if (defaults) await startup(`default providers: ${defaults}`, defaults);
await callLatency();
await httpLatency(false);
await httpLatency(true);
await clientOverhead();
rows.push(...await benchProvenance(RUNS * 20, 1024 * 1024));
rows.push(...await benchReplicas());
rows.push(...await benchOAuth());
observability.push(await benchObservability());
const edge = edgeSection(await compareEdge());

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
const sections = [
  `## Start-up and memory

What a desktop client pays to keep the server resident. Each server is spawned as a client spawns it
(this one exactly as \`deno task start\` runs it, with the default providers and toolsets, in a scratch
folder without a config file) and timed from spawn to the answer of \`tools/list\` after the
\`initialize\` handshake; the resident memory (VmRSS) is read right then. The minimal SDK server is
tools/bench/minimal_server.ts (one tool, \`serveStdio\`) with this checkout's dependencies;
server-everything is installed from npm into a scratch folder at bench time. Memory after calls:
one server answering ${
    MEMORY_CALLS.toLocaleString("en-US")
  } \`tools/call\` one after another over stdio. HTTP load: ${HTTP_SESSIONS}
concurrent 2025-11-25 sessions, each making ${HTTP_CALLS} calls in turn, against one server with the default
providers (the load generator runs on the same cores). \`deno task start\` passes V8 flags (a young
generation of at most 2 MiB a half, an old generation of at most 1 GiB, which also makes V8 grow the heap in
smaller steps); the HTTP rows run with \`deno task start:http\`'s (8 MiB, 1 GiB, the heap grown 3× its live data). The rows without them show
what the flags trade: resident memory for throughput. Each server in the start-up comparison has a Deno cache of its own (V8 rejects code cached
under other flags). The machine is shared and its speed drifts within a run, so beside the ratio of medians
each start is also divided by the minimal server's start of the same round (they run one after the other),
and the median of those paired ratios given.

${startupRows.join("\n")}

${startupNotes.map((n) => `- ${n}`).join("\n")}`,
];
sections.push(waysSection, binarySection);
if (baselineRows.length) {
  sections.push(`## Before and after (--baseline)

${baselineRows.join("\n")}`);
}
if (taskRows.length) sections.push(tasksSection());
if (economyRows.length) {
  sections.push(`## What the tool list costs an agent

${economyRows.join("\n")}`);
}
if (viewSizeRows.length) {
  sections.push(`## Interactive views

${VIEW_SECTION_TEXT}

${viewSizeRows.join("\n")}`);
}
if (rows.length) {
  sections.push(`## Latency, HTTP client, replicas

Start-up in this table is measured from spawning \`deno run\` (with the same scoped permissions as
\`deno task start\`) to the answer of \`initialize\` through the MCP SDK's \`Client\`. Latency figures are
client-observed round trips through the SDK's \`Client\` over stdio.

The replica rows (tools/bench/replicas.ts) drive \`fred_category\` calls against a loopback fake FRED
with \`fresh: true\` (so every call makes its Redis round trips and one upstream request), from 8
concurrent callers spread round-robin over the replicas, with a real \`redis-server\` on loopback. On
this 2-core machine the replicas, the fake upstream, Redis and the load generator share the same two
cores, so a second replica adds no CPU: the rows show what Redis costs per call, not how far N
machines scale.

The session rows open 8 Streamable HTTP sessions (2025-11-25, \`Mcp-Session-Id\`) through a real HAProxy in
front of 1, 2 or 3 stateful replicas (round robin, no stickiness: tests/harness/balancer.ts), so each
session's calls land on every replica, which rebuilt it from its record in Redis (docs/DEPLOYMENT.md, "Several
replicas"). The takeover row kills the replica that answered a session's \`initialize\` right after it, and
times the session's next call until another replica answers it (the session survived every run, with no new
\`initialize\`). With 3 replicas on 2 shared cores, the third process only adds contention. The takeover time includes the balancer's part: HAProxy retries a refused connection on another replica after its turn-around timer (min(\`timeout connect\`, 1 s)), unless its health check (every 300 ms in tests/harness/balancer.ts) has marked the dead replica down already.

${table}`);
}
sections.push(...observability, `${EDGE_HEADING}\n\n${edge}`);
// Sections this run does not write (measured by hand or by another tool, e.g. the before and
// after of the module splits) are kept as they are, after the written ones.
const written = new Set(sections.map((sec) => sec.split("\n", 1)[0]!.trim()));
try {
  const current = await Deno.readTextFile(new URL("../../docs/BENCHMARKS.md", import.meta.url));
  for (const part of current.split(/\n(?=## )/).slice(1)) {
    const heading = part.split("\n", 1)[0]!.trim();
    if (!written.has(heading)) sections.push(part.trim());
  }
} catch {
  // No file yet: nothing to keep.
}
const doc = `# Benchmarks

Written by \`deno task bench\` (tools/bench/bench.ts). ${header} Figures are for orientation on this
machine, and vary with what else runs on it; they are not asserted by tests.

${sections.join("\n\n")}
`;
const text = doc;
console.log(text);
await Deno.writeTextFile(new URL("../../docs/BENCHMARKS.md", import.meta.url), await denoFmt(text, "md"));
console.log("Wrote docs/BENCHMARKS.md");
