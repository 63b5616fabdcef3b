// Part of `deno task bench`: start-up and memory in each way users start the server,
// side by side with the minimal SDK v2 server (tools/bench/minimal_server.ts), all interleaved in
// one run: `deno task start` in the checkout (which reads config/apis.yaml), in a folder without
// a config file, with a config file that sets keys for every provider (all on the sources), the
// release binary's stand-in (its embedded files run with `deno run`), the image's bundle and the
// container's command (the Dockerfile's CMD, run with this deno over HTTP in a folder laid out as
// the image's /app), each against the minimal server started the same way. Then resident memory after 10,000 calls that echo 200
// characters, over stdio and over HTTP. Figures are measured, never asserted.
import { join } from "node:path";
import { compile } from "../compile.ts";
import { assembleRuntime, BUNDLE_ENTRY, bundleModule } from "../bundle.ts";
import { prepareStandIn, readEmbedded } from "../embedded.ts";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import {
  httpSessions,
  interleavedStarts,
  loadAverage,
  memoryMiB,
  pairedRatios,
  spread,
  stdioCalls,
  thisServer,
} from "./startup.ts";
import type { ServerCommand, Spread } from "./startup.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const MINIMAL = "tools/bench/minimal_server.ts";
const MINIMAL_HTTP = "tools/bench/minimal_http_server.ts";

/** A config file that sets keys in every default provider's block (and a FRED key). */
export function everyProviderConfig(): string {
  const lines = ["enabled_providers:"];
  const enabled = PROVIDERS.filter((s) => s.defaultEnabled);
  for (const s of enabled) lines.push(`  - ${s.id}`);
  lines.push("providers:");
  for (const s of enabled) {
    const d = s.listings!.defaults;
    lines.push(
      `  ${s.id}:`,
      `    base_url: ${JSON.stringify(d["base_url"])}`,
      `    timeout: ${Number(d["timeout"]) + 5}`,
      `    max_retries: 1`,
      `    cache_ttl: 600`,
    );
    if (s.id === "fred") lines.push(`    api_key: "${"0123456789abcdef".repeat(2)}"`);
  }
  return `${lines.join("\n")}\n`;
}

/** The variables the Dockerfile's `ENV` lines set, but the data folder (the bench gives one). */
export function containerEnv(): Record<string, string> {
  const dockerfile = Deno.readTextFileSync(join(ROOT, "Dockerfile"));
  const env: Record<string, string> = {};
  for (const m of dockerfile.matchAll(/^ENV ([A-Z_][A-Z0-9_]*)=(\S+)$/gm)) env[m[1]!] = m[2]!;
  delete env["OPENDATA_MCP_DATA_DIR"];
  return env;
}

/** The Dockerfile's CMD arguments (after `deno`), with the port made 0. */
export function containerArgs(): string[] {
  const dockerfile = Deno.readTextFileSync(join(ROOT, "Dockerfile"));
  const line = dockerfile.split("\n").find((l) => l.startsWith("CMD ["));
  if (!line) throw new Error("No CMD [...] line in the Dockerfile");
  const args = JSON.parse(line.slice(4)) as string[];
  const port = args.indexOf("--port");
  if (port >= 0) args[port + 1] = "0";
  return args;
}

const ms = (s: Spread): string => `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
const mib = (x: number): string => `${x.toFixed(1)} MiB`;
const ratio = (s: Spread): string => `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;

/**
 * What the start-up work changed and tried, with the figures of the one-off runs that decided it
 * (2026-11-27 and 2026-11-29, this machine, shared: load average 1–6); the tables above are measured
 * afresh by every run.
 */
const WAYS_NOTES =
  `Changed to meet the start-up targets (only sources committed, call-time code loaded at first use):

- What a start does not need to answer \`tools/list\` loads at first use, through literal \`import()\`s (the
  bundle keeps each as a chunk): the tool-call code (lib/mcp/tool_call.ts, tool_result.ts, provenance.ts and the
  request scope with \`node:async_hooks\`) on the first call; the HTTP client (lib/http/fetch_client.ts with
  retry, decode, SSRF guard, endpoint, failures and the metrics and tracing modules it imports) with the first
  provider's code (\`loadHttpClient()\`, lib/http/runtime.ts); how \`opendata_search\` answers
  (lib/mcp/tools/search_answer.ts) on the first search; each view's HTML on its first read; the metrics and
  tracing modules of lib/cli.ts only when configured. The citation template moved to lib/output/citations.ts so
  a start registers it without the provenance code. The zod schemas of the four core tools are built on their
  first call (tools/list serves the generated JSON Schemas), and the SSRF guard's IPv4 table on its first check.
  A start from the sources loads 66 local modules instead of 83 (docs/ARCHITECTURE.md, "Start-up").
  Main-thread CPU to \`tools/list\` answered, \`deno run -A tools/bench/_quick_ratio.ts 15\` (paired medians of
  15 interleaved rounds against the minimal server): 1.27×, 1.25× and 1.27× before; after each step 1.23–1.29×
  (tool-call code, views, core schemas), 1.17–1.21× (HTTP client, metrics, tracing), 1.18–1.20× (search
  answering, citations), in runs of two or three each while other test runs shared the machine. The table above
  gives every way of starting in one run.

Changed before (the start bundle):

- Where the bundle runs: only sources are committed, and \`deno task start\` runs them (main.ts), so
  no way of starting from a checkout runs code older than lib/. The bundle (tools/bundle.ts: \`deno bundle\`,
  esbuild, code splitting, minified: main.ts, lib/, the MCP server SDK and zod in about 50 ES modules, each
  provider its own chunk behind its \`import()\`) is built where it ships: the image's build stage (its /app:
  the bundle, deno.json and only the packages the bundle loads) and the release compile. The test suite builds
  it once into a scratch folder and runs it through the listings, the task suite over every provider, bad
  input and the release smoke test against the sources (tests/e2e/bundle_test.ts). The yardstick is now the
  minimal server started with the start task's flags, permission set and variables (before: \`deno run -q\`
  alone), and the table gives each start's main-thread CPU beside its wall time.
- The targets, read from the main-thread CPU ratios of the table (the wall times spread too widely on this
  shared machine to decide by): the release binary's stand-in and the image's bundle came out at 1.04× and
  1.05× in the run that wrote this section (target ≤ 1.0×), the container's command over HTTP at 1.21×, and
  \`deno task start\` on the sources at 1.24–1.25× (target ≤ 1.2×): not met. CPU profiles of six starts each
  (\`--cpu-prof\`, the start flags, per start): the sources spend 22.7 ms in V8's own work outside JavaScript
  (\`(program)\`: reading, parsing and compiling the modules) against the minimal server's 11.6 ms, 10 ms in
  lib/'s code (\`boot\`: the configuration, \`createApp\`, \`createServer\`), 19 against 15 ms of garbage
  collection and 29 against 24.5 ms in zod. The bundle removes most of the first; the rest is this server's
  own start-up code, which the planned split of \`createServer\`, \`createApp\` and \`runToolCall\` reshapes: left for after it.
- The bundles tried, each measured against the sources and the minimal server in one run of 15–30 interleaved
  rounds (paired medians; the sources' own ratio in the same run in brackets):
  - one file, no code splitting (every provider and gpt-tokenizer's encodings, 10 MB): 2.08× (1.07×);
  - only our code bundled, the SDK and zod loaded from node_modules/: 1.03×, 1.08×, 1.13×, 1.20× in four runs
    (1.07×, 1.16×, 1.18×, 1.24×); minified: 1.13× (1.23×). Most of what a start saves is in the packages' files;
  - the SDK and zod inside too, not minified: 0.98×, 0.99×, 1.04×, 1.13× (1.16×, 1.07×, 1.16×, 1.24×);
  - the SDK and zod inside, minified (kept): 1.02× and 0.99× (1.24×, 1.23×): V8 reads less text, and compiles
    less of it lazily.
  On the sources, \`--no-lock\` and \`--cached-only\` made no difference (1.20× and 1.18× against 1.18×).
- A config file, and the provider blocks it sets, are checked without building zod schemas when every
  value is plainly valid: a common key (\`timeout\`, \`max_retries\`, ...) of the expected type within its range,
  or any key at exactly its default (lib/config/parse.ts \`plainFile\`, lib/config/provider_spec.ts
  \`plainSettings\`). Anything else (a wrong type, a value out of range, an unknown key, a provider's own key
  at another value such as a FRED API key) is validated by the zod schemas as before, so errors and values
  are unchanged (tests/config/plain_settings_test.ts compares the two over edge values for every provider).
  The first \`parseConfig\` of config/apis.yaml took 14–17 ms in-process before, 2–3 ms after (3 runs each);
  in the runs after this change the checkout's paired ratio came out 0.01–0.05× above the start without a
  config file (0.14–0.22× above before it). A config that sets a provider's own key to another value
  (the every-provider row sets a FRED API key) still builds that provider's schema.
- \`opendata_chart\`'s input schema and its JSON Schema are built when first listed or called, not when the
  server starts (2.2 ms of a start's CPU profile).
- lib/providers/listings.json, which every start imports, is indented down to one tool, toolset or resource a
  line instead of every nested key (257 KB → 108 KB, the same value; \`deno fmt\` leaves the generated file
  alone): 0.98× paired against the commit before (15 pairs).
- The result exports' code (lib/output/exports.ts, storage.ts, resources.ts, paths.ts, writes.ts, the row
  writers and the tokenizer's module, about 230 KB of the emitted JavaScript a start loaded) loads with the
  first file written, listed or read: the server starts with \`DeferredExports\` (lib/output/deferred_exports.ts),
  which serves the same resource template and hands out the same files
  (tests/output/deferred_exports_test.ts). FRED's settings take the output modes and file formats from
  lib/output/modes.ts instead of tokens.ts and writers.ts. With the listings: 0.97× paired (15 pairs), but see
  the stub experiment below: loading fewer modules gains little by itself.
- FRED's \`api_key\`, set on most starts (\`FRED_API_KEY\`, or the file), is checked as plain code like the common
  keys (a provider spec's \`plain\` checks, lib/config/provider_spec.ts): any string, as its schema takes it.
  The every-provider configuration of the table, which sets one, no longer builds FRED's zod schema: its
  \`parseConfig\` took 3.0–4.0 ms in-process against 7.6–10.8 ms before (3 runs each), the same as without
  the key.
- A config file in plain YAML (block mappings of plain keys, sequences of scalars, plain or simply quoted
  scalars, comments: config/apis.yaml and the every-provider file are) is read without loading js-yaml
  (lib/config/yaml.ts \`plainYaml\`); anything else goes to js-yaml as before, with its errors
  (tests/config/plain_yaml_test.ts compares the two over 100 scalars in 6 layouts). The main thread's CPU time
  to \`tools/list\` answered (/proc/PID/task/PID/schedstat, medians of 15 interleaved starts, far less
  disturbed by the machine's load than wall time) with the checkout's config: 121.5 ms against 129.2 ms.
- Masking secrets in log lines: a line that cannot hold a secret (no \`%\`, \`\\\` or \`&\`, and without white
  space and \`+\` it does not contain the secret's first 8 characters) skips the secret's patterns, regular
  expressions of some kilobytes V8 compiled on the first log line (lib/log.ts \`mayHoldSecret\`;
  tests/log_test.ts checks the shortcut is never taken for a text the patterns change). A FRED key cost
  3 ms of main-thread CPU at start (123.5 against 120.6 ms without one); now none (124.8 ms both).
- \`deno task start\` and the image (\`ENV\`) set \`MALLOC_ARENA_MAX=1\` (glibc: one malloc arena for all threads).
  Over one Streamable HTTP session of 10,000 calls the live heap stays at 18.4–18.6 MiB after every
  mark-compact (\`--trace-gc\`): no call leaves anything behind, so there was no growth to fix in the code.
  What grows to a plateau within the first 1,000 calls is outside the live heap: with an empty Deno cache
  (the first start after an install, where every function is compiled afresh), /proc/PID/smaps showed +9 MiB
  of anonymous 1–64 MiB mappings, glibc's malloc arenas of V8's background compiler threads (they stay away
  with \`--no-concurrent-recompilation\`: 105 MiB), 4–5 MiB of the deno binary's own pages (the optimizing
  compiler) and 6 MiB more V8 heap committed; one arena took that case from 111–114 MiB to 97 MiB after the
  calls, and 86–88 to 78–79 MiB after start. With the warm cache the bench uses there is no clear gain:
  five servers each (three alternating pairs, two bench runs) ended at 95.0–103.1 MiB, median 101.6, with it
  against 97.9–104.9 MiB, median 102.7, without; RSS after start is about 1 MiB lower with it. The log level
  made no difference (101.3–104.3 MiB at info and warn). A heap snapshot after 3,000 calls held 18.2 MiB, 5.5
  MiB of it strings, mostly the modules' sources; nothing grows with the calls. 50 sessions × 40
  \`opendata_describe\` calls made 662 and 693 calls/s with it against 614 and 707 without (empty caches). A
  release binary cannot set it for itself (glibc reads it at process start): docs/DEPLOYMENT.md says to set
  it in its environment.

Tried and not kept:

- \`--optimize-for-size\` in the V8 flags: RSS after 10,000 stdio echo calls 95.3 → 83.1 MiB and after 10,000 HTTP
  calls 100.6 → 90.8 MiB, start-up unchanged, but 100 concurrent HTTP sessions of 30 \`opendata_describe\` calls
  made 744 and 390 calls/s against 985 and 854 without it (p50 110 and 219 ms against 78 and 74 ms).
- A young generation of 4 MiB (\`--min-semi-space-size=4,--max-semi-space-size=4\`): 4 scavenges during a start
  instead of 10 (\`--trace-gc\`: they take 15–20 ms of a start, the minimal server's 4 about 10 ms), paired
  start-up ratio 1.25× against 1.28× (within the noise), but RSS +3 MiB after start, +4.5 MiB after 10,000 stdio
  calls and +10 MiB after 10,000 HTTP calls.
- \`--max-old-space-size=512\`: RSS after 10,000 HTTP calls 98.6 against 103.9 MiB in the same session; too little
  for a halved heap cap. \`MALLOC_ARENA_MAX=2\`: no change (103.7 MiB).
- Start-up without the V8 flags: paired ratio 1.31× against 1.31× with them (15 pairs, load 6).
- \`"inlineSourceMap": false\` / \`"sourceMap": false\` / \`"inlineSources": false\` in deno.json's compilerOptions,
  to shrink the emitted JavaScript Deno hands to V8 (every local module carries an inline source map, about
  twice its code): Deno 2.9 ignores them ("Unsupported compiler options") and emits the same files.
- Building the core tools' zod schemas on first use: they take 1.0 ms of a start (timed in-process), and
  lib/mcp/core_tools.ts is being split by another change (see "Layers and module splits" below): left for
  after it.
- Deferring more modules. As an upper bound, the HTTP client (lib/http/fetch_client.ts, ssrf.ts and five
  more) and the views' HTML modules were cut from the start path with stubs (7 + 4 modules, 90 KB of source):
  the main thread's CPU time to \`tools/list\` answered (/proc/PID/task/PID/schedstat, medians of 15
  interleaved starts, which the machine's load disturbs far less than wall time) was 111.1 ms against 110.6 ms.
  Not worth the change to their synchronous entry points (\`HttpRuntime.client()\`) then; the start-up work of this round made it,
  with the other deferrals above, measured together.
- \`--no-lazy\` in the V8 flags (every function compiled when its module is, so the code cache holds them): main
  thread CPU 117.5 against 122.9 ms (15 starts each), but it compiles all of zod and the SDK too: RSS after
  start 73.2 against 68.3 MiB, over the 1.1× RSS target.
- Sources in ASCII only (V8 keeps a module's source as two bytes a character when one character is not
  ASCII; 63 files have one): main thread CPU 118.5 against 115.6 ms, no gain.
- Without the V8 flags, measured by main thread CPU: 118.3 against 120.0 ms.

Where the rest of a start from the sources went (markers at points of main.ts, lib/cli.ts and lib/mcp/stdio.ts, medians of
11 starts, not committed): the minimal server's module graph is loaded and evaluated 65 ms after the process
starts and its \`tools/list\` answered 37 ms later; this server's graph 84–86 ms after start (before the changes
above), then 10 ms of configuration and \`createApp\`, then 34 ms to the answer. The time after serving is the
same in both: most of it is the SDK building its request schemas on the first request (\`getRequestSchema\` →
\`registryMaps\`, about 9 ms of CPU profile samples in each). Measured as the main thread's CPU time, the
minimal server needs 95–99 ms to its answer and this server 114–123 ms. The difference is this server's own
JavaScript running once per start (CPU profiles: 17 ms of samples in lib/ against none, spread over many
functions of 0.2–1.5 ms each: \`createServer\`, \`createApp\`, \`boot\`, \`parseConfig\`, the log lines, the
listings' selection, \`checkAllowlist\`), whose functions V8 compiles lazily on every start, and 6 ms more
garbage collection; not the loading of its modules (above).`;

/** The ways with a start-up target (labels as in the table), and the paired CPU ratio each may reach. */
const TARGETS: readonly [label: string, target: number][] = [
  ["`deno task start` in the checkout (the sources, its config/apis.yaml)", 1.2],
  ["`deno task start` in a folder without a config file", 1.2],
  ["the release binary's stand-in, no config (its embedded files, `deno run`)", 1.0],
  ["the image's bundle (/app/bundle/main.js with the start flags, stdio)", 1.0],
  ["the container's command (Dockerfile CMD with this deno, in the image's /app, over HTTP)", 1.0],
];

/** Whether this run met each target, read from the median paired main-thread CPU ratios. */
function targetVerdicts(cpuRatios: ReadonlyMap<string, number>): string {
  const lines = TARGETS.map(([label, target]) => {
    const r = cpuRatios.get(label);
    if (r === undefined) return `- ${label}: not measured`;
    return `- ${label}: ${r.toFixed(2)}× against ≤ ${target.toFixed(1)}×: ${
      r <= target ? "met" : "not met"
    } in this run`;
  });
  return `Targets, by the median paired main-thread CPU ratio of this run:\n\n${lines.join("\n")}`;
}

/** Measures and returns the section's Markdown. */
export async function benchStartupWays(runs: number, calls: number): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-bench-ways-" });
  try {
    const configured = join(dir, "configured");
    Deno.mkdirSync(join(configured, "config"), { recursive: true });
    Deno.writeTextFileSync(join(configured, "config/apis.yaml"), everyProviderConfig());
    const data = join(dir, "data");
    Deno.mkdirSync(data);

    const binaryPath = await compile(Deno.build.target, join(dir, "ours"), {
      env: { DENORT_BIN: Deno.execPath() },
    });
    const standIn = prepareStandIn(readEmbedded(Deno.readFileSync(binaryPath)), join(dir, "stand-in"), ROOT);
    Deno.removeSync(binaryPath);

    // What the image runs: its /app as the Dockerfile's build stage lays it out (tools/bundle.ts
    // --runtime): the bundle built from the sources now, deno.json and only the runtime packages.
    const app = join(dir, "app");
    await assembleRuntime(app);

    // The yardsticks: the minimal SDK v2 server started the same way as each way of ours (the
    // start task's flags, permission set and variables) from its sources, over stdio or HTTP; and,
    // for a reader to weigh the ratios, the same server bundled as this server ships (tools/bundle.ts:
    // the SDK and zod inside, minified).
    const echo1 = { name: "echo", arguments: { text: "hello" } };
    const minimal: ServerCommand = {
      ...thisServer("minimal SDK server (1 tool), started as `deno task start` starts", [], {}, MINIMAL),
      call: echo1,
    };
    const minimalHttp: ServerCommand = {
      ...thisServer(
        "minimal SDK server over HTTP (1 tool, `createMcpHandler`), started the same way",
        [],
        {},
        MINIMAL_HTTP,
      ),
      http: true,
    };
    const minimalBundle = join(dir, "minimal-bundle");
    await bundleModule(MINIMAL, minimalBundle);
    await bundleModule(MINIMAL_HTTP, minimalBundle);
    const minimalBundled: ServerCommand = {
      ...thisServer(
        "the same minimal server bundled like this server (`deno bundle --minify`)",
        [],
        {},
        join(minimalBundle, "minimal_server.js"),
      ),
      call: echo1,
    };
    const minimalHttpBundled: ServerCommand = {
      ...thisServer(
        "the same minimal server over HTTP, bundled like this server",
        [],
        {},
        join(minimalBundle, "minimal_http_server.js"),
      ),
      http: true,
    };
    const commands: ServerCommand[] = [
      minimal,
      minimalBundled,
      minimalHttp,
      minimalHttpBundled,
      { ...thisServer("`deno task start` in the checkout (the sources, its config/apis.yaml)"), cwd: ROOT },
      thisServer("`deno task start` in a folder without a config file"),
      {
        ...thisServer(
          "`deno task start` in a folder without a config file, without the task's MALLOC_ARENA_MAX=1",
        ),
        env: {},
      },
      {
        ...thisServer("`deno task start` with a config file setting keys for every provider"),
        cwd: configured,
      },
      {
        label: "the release binary's stand-in, no config (its embedded files, `deno run`)",
        cmd: [Deno.execPath(), ...standIn.runArgs, standIn.main],
        env: { DENO_DIR: standIn.denoDir },
      },
      thisServer(
        "the image's bundle (/app/bundle/main.js with the start flags, stdio)",
        [],
        {},
        join(app, BUNDLE_ENTRY),
      ),
      {
        label: "the container's command (Dockerfile CMD with this deno, in the image's /app, over HTTP)",
        cmd: [Deno.execPath(), ...containerArgs()],
        cwd: app,
        env: { ...containerEnv(), OPENDATA_MCP_DATA_DIR: data, MCP_ALLOWED_HOSTS: "127.0.0.1" },
        http: true,
      },
    ];
    const load = loadAverage();
    const t0 = performance.now();
    const { starts } = await interleavedStarts(commands, runs);
    const minutes = (performance.now() - t0) / 60_000;
    const rows = [
      "| Start-up to tools/list answered | Median (min–max) | Paired ratio to the minimal server of its transport, from its sources, started the same way: median (min–max) | Main-thread CPU to the answer, median | Paired CPU ratio: median (min–max) | RSS after start, median | RSS ratio (of medians) |",
      "| --- | --- | --- | --- | --- | --- | --- |",
    ];
    const cpuRatios = new Map<string, number>();
    for (const c of commands) {
      const r = starts.get(c.label)!;
      const yardstick = c.http ? minimalHttp : minimal;
      const base = starts.get(yardstick.label)!;
      const own = c === yardstick;
      cpuRatios.set(c.label, pairedRatios(r.cpuRounds, base.cpuRounds).median);
      rows.push(
        `| ${c.label} | ${ms(r.ms)} | ${own ? "1.00×" : ratio(pairedRatios(r.rounds, base.rounds))} | ${
          spread(r.cpuRounds).median.toFixed(0)
        } ms | ${own ? "1.00×" : ratio(pairedRatios(r.cpuRounds, base.cpuRounds))} | ${mib(r.rss.median)} | ${
          (r.rss.median / base.rss.median).toFixed(2)
        }× |`,
      );
    }

    const text = "x".repeat(200);
    const echo = { name: "example-echo", arguments: { text } };
    const memory = [
      "",
      `| ${
        calls.toLocaleString("en-US")
      } calls echoing 200 characters | RSS after start | RSS after the calls | Peak RSS |`,
      "| --- | --- | --- | --- |",
    ];
    for (
      const c of [
        { ...thisServer("this server (`--providers example`)", ["--providers", "example"]), call: echo },
        { ...minimal, call: { name: "echo", arguments: { text } } },
      ]
    ) {
      const r = await stdioCalls(c, calls);
      memory.push(
        `| ${c.label}, ${c.call.name} over stdio | ${mib(r.startRss)} | ${mib(r.rss)} | ${mib(r.peak)} |`,
      );
    }
    // As the start task runs it (its variables: MALLOC_ARENA_MAX=1) and without them, two servers
    // each in the order with, without, without, with: what the machine does meanwhile moves a single
    // figure by several MiB.
    const http: Record<"with" | "without", { before: number; after: number; peak: number }[]> = {
      with: [],
      without: [],
    };
    for (const withTaskEnv of [true, false, false, true]) {
      await using server = await startHttpServer({
        args: ["--providers", "example"],
        env: { OPENDATA_MCP_TOOLSETS: "", RATE_LIMIT_ENABLED: "false" },
        withoutTaskEnv: !withTaskEnv,
      });
      const before = memoryMiB(server.child.pid);
      await httpSessions(server.origin, 1, calls, echo);
      const after = memoryMiB(server.child.pid);
      http[withTaskEnv ? "with" : "without"].push({
        before: before?.rss ?? NaN,
        after: after?.rss ?? NaN,
        peak: after?.peak ?? NaN,
      });
    }
    const both = (xs: number[]): string => xs.map((x) => x.toFixed(1)).join(" / ") + " MiB";
    for (const key of ["with", "without"] as const) {
      const r = http[key];
      memory.push(
        `| this server (\`--providers example\`), example-echo in one Streamable HTTP session${
          key === "with" ? "" : ", without the start task's MALLOC_ARENA_MAX=1"
        } (two servers) | ${both(r.map((x) => x.before))} | ${both(r.map((x) => x.after))} | ${
          both(r.map((x) => x.peak))
        } |`,
      );
    }
    return `## Start-up as users start it

Written by \`deno task bench --only startup\` (tools/bench/startup_ways.ts). Each way is timed from spawn to
the answer of \`tools/list\` after the \`initialize\` handshake, with the default providers and toolsets,
interleaved in rounds with the minimal SDK v2 server (tools/bench/minimal_server.ts: one tool, \`serveStdio\`)
started the same way (the start task's flags, permission set and variables), from its sources:
\`deno task start\` runs the sources (main.ts; target ≤ 1.2×); the release binary's stand-in, the image's bundle and the
container's command run the bundle built from the sources now (target ≤ 1.0×). Each start is divided by the
minimal server's start of the same round and the median of those ratios given; the rows "bundled like this
server" show what the same build step gives the empty server. The container's command is the Dockerfile's CMD (\`--cached-only\`, HTTP on port 0 here) run with this
deno in a folder laid out as the image's /app (tools/bundle.ts \`--runtime\`), timed to \`tools/list\` answered
over HTTP (initialize, initialized, tools/list); its yardstick is the minimal server over HTTP
(tools/bench/minimal_http_server.ts: \`createMcpHandler\` under \`Deno.serve\`), timed the same way. The
main-thread CPU is the time the server's main thread ran on a core until \`tools/list\` was answered
(/proc/PID/task/PID/schedstat): wall times on this shared machine spread with its load (the time a start
waits for a core), CPU time far less, so its paired ratio is the steadier figure of the two. ${runs} starts of each after
two unmeasured starts each, ${minutes.toFixed(1)} minutes; load average ${load} when it began (the machine is
shared with other engineers' test runs: the paired ratios are the figures to read).

${rows.join("\n")}

${targetVerdicts(cpuRatios)}
${memory.join("\n")}

${WAYS_NOTES}`;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
