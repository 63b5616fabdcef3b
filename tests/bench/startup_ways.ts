// Part of `deno task bench` (issue 29): start-up and memory in each way users start the server,
// side by side with the minimal SDK v2 server (tests/bench/minimal_server.ts), all interleaved in
// one run: `deno task start` in the checkout (which reads config/apis.yaml), in a folder without
// a config file, with a config file that sets keys for every provider, the release binary's
// stand-in (its embedded files run with `deno run`) and the container's command (the Dockerfile's
// CMD, run with this deno over HTTP). Then resident memory after 10,000 calls that echo 200
// characters, over stdio and over HTTP. Figures are measured, never asserted.
import { join } from "node:path";
import { compile } from "../tools/compile.ts";
import { prepareStandIn, readEmbedded } from "../tools/embedded.ts";
import { startHttpServer } from "../fakes/http_server.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import {
  httpSessions,
  interleavedStarts,
  loadAverage,
  memoryMiB,
  minimalServer,
  pairedRatios,
  stdioCalls,
  thisServer,
} from "./startup.ts";
import type { ServerCommand, Spread } from "./startup.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

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

    const minimal = minimalServer();
    const commands: ServerCommand[] = [
      minimal,
      { ...thisServer("`deno task start` in the checkout (its config/apis.yaml)"), cwd: ROOT },
      thisServer("`deno task start` in a folder without a config file"),
      {
        ...thisServer("`deno task start` with a config file setting keys for every provider"),
        cwd: configured,
      },
      {
        label: "the release binary's stand-in, no config (its embedded files, `deno run`)",
        cmd: [Deno.execPath(), ...standIn.runArgs, standIn.main],
        env: { DENO_DIR: standIn.denoDir },
      },
      {
        label: "the container's command (Dockerfile CMD with this deno, in the checkout, over HTTP)",
        cmd: [Deno.execPath(), ...containerArgs()],
        cwd: ROOT,
        env: { OPENDATA_MCP_DATA_DIR: data, MCP_ALLOWED_HOSTS: "127.0.0.1" },
        http: true,
      },
    ];
    const load = loadAverage();
    const t0 = performance.now();
    const { starts } = await interleavedStarts(commands, runs);
    const minutes = (performance.now() - t0) / 60_000;
    const base = starts.get(minimal.label)!;
    const rows = [
      "| Start-up to tools/list answered | Median (min–max) | Paired ratio to the minimal server: median (min–max) | RSS after start, median | RSS ratio (of medians) |",
      "| --- | --- | --- | --- | --- |",
    ];
    for (const c of commands) {
      const r = starts.get(c.label)!;
      rows.push(
        `| ${c.label} | ${ms(r.ms)} | ${
          c === minimal ? "1.00×" : ratio(pairedRatios(r.rounds, base.rounds))
        } | ${mib(r.rss.median)} | ${(r.rss.median / base.rss.median).toFixed(2)}× |`,
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
    {
      await using http = await startHttpServer({
        args: ["--providers", "example"],
        env: { OPENDATA_MCP_TOOLSETS: "", RATE_LIMIT_ENABLED: "false" },
      });
      const before = memoryMiB(http.child.pid);
      await httpSessions(http.origin, 1, calls, echo);
      const after = memoryMiB(http.child.pid);
      memory.push(
        `| this server (\`--providers example\`), example-echo in one Streamable HTTP session | ${
          mib(before?.rss ?? NaN)
        } | ${mib(after?.rss ?? NaN)} | ${mib(after?.peak ?? NaN)} |`,
      );
    }
    return `## Start-up as users start it (issue 29)

Written by \`deno task bench --only startup\` (tests/bench/startup_ways.ts). Each way is timed from spawn to
the answer of \`tools/list\` after the \`initialize\` handshake, with the default providers and toolsets,
interleaved in rounds with the minimal SDK v2 server (one tool, \`serveStdio\`); each start is divided by the
minimal server's start of the same round and the median of those ratios given (target ≤ 1.1×). The
container's command is the Dockerfile's CMD (\`--cached-only\`, HTTP on port 0 here) run with this deno in the
checkout (the image's /app holds the same files), timed to \`tools/list\` answered over HTTP: it also pays
for the HTTP listener and three HTTP requests, which the stdio yardstick does not. ${runs} starts of each after
two unmeasured starts each, ${minutes.toFixed(1)} minutes; load average ${load} when it began (the machine is
shared with other engineers' test runs: the paired ratios are the figures to read).

${rows.join("\n")}
${memory.join("\n")}`;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
