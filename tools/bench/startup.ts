// Part of `deno task bench`: what a desktop client pays to keep this server
// resident, next to the yardsticks: start-up to the answer of tools/list and resident memory,
// of this server, a minimal SDK server under Deno (tools/bench/minimal_server.ts),
// `@modelcontextprotocol/server-everything` on Node (installed from npm into a scratch folder)
// and a bare `deno run`, measured interleaved in one run; memory after 10,000 stdio calls; and
// latency and memory under 200 HTTP sessions of 50 calls each. Figures are measured, never
// asserted.
import { dirname, join, resolve } from "node:path";
import { childEnv, lines, removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import { splitStartTask } from "../permissions.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** How to start one server over stdio. */
export interface ServerCommand {
  label: string;
  /** The program and its arguments. */
  cmd: string[];
  /** Environment beyond the scratch HOME, PATH and DENO_DIR. */
  env?: Record<string, string>;
  /** The working directory (default: the scratch HOME). */
  cwd?: string;
  /**
   * Serves Streamable HTTP: started with `--port 0`, it is timed to the answer of tools/list
   * over HTTP (the port read from its start-up log line) instead of over stdio.
   */
  http?: boolean;
  /** The tool (and arguments) a round-trip and memory run calls. */
  call?: { name: string; arguments: Record<string, unknown> };
}

/** Median, minimum and maximum of a sample. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Median, min and max of `xs`. */
export function spread(xs: readonly number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s.at(-1)!, n: s.length };
}

/** The `p`-quantile (0..1) of `xs`. */
export function quantile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

/**
 * The CPU time a live process's main thread has run, in milliseconds (Linux: the first field of
 * `/proc/PID/task/PID/schedstat`, nanoseconds); NaN where it cannot be read. Unlike wall time it
 * leaves out the time the thread waited for a core, which on a shared machine is most of a start's
 * spread.
 */
export function mainThreadCpuMs(pid: number): number {
  try {
    return Number(Deno.readTextFileSync(`/proc/${pid}/task/${pid}/schedstat`).split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** Resident and peak resident memory of a live process, in MiB (Linux `/proc`). */
export function memoryMiB(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
    const peak = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024;
    return Number.isFinite(rss) && Number.isFinite(peak) ? { rss, peak } : undefined;
  } catch {
    return undefined;
  }
}

/** The machine's 1-minute load average (other work on the machine skews every figure). */
export function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

/** A server process spoken to in newline-delimited JSON-RPC, as a desktop client does. */
export class StdioPeer {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<number, { resolve(message: Record<string, unknown>): void; reject(e: Error): void }>();
  #stderr = "";
  #nextId = 1;
  #encoder = new TextEncoder();
  #done: Promise<void>;

  constructor(command: ServerCommand, home: string) {
    const [program, ...args] = command.cmd;
    const child = new Deno.Command(program!, {
      args,
      env: { ...childEnv(home, command.env), OPENDATA_MCP_TOOLSETS: "" },
      clearEnv: true,
      cwd: command.cwd ?? home,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.#writer = child.stdin.getWriter();
    this.#done = (async () => {
      for await (const line of lines(child.stdout)) {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        const id = message["id"];
        if (typeof id === "number" && ("result" in message || "error" in message)) {
          this.#waiting.get(id)?.resolve(message);
          this.#waiting.delete(id);
        }
      }
      // The server is gone: nothing it was asked will be answered.
      for (const w of this.#waiting.values()) {
        w.reject(new Error(`${command.label} exited before answering:\n${this.#stderr.slice(-2000)}`));
      }
      this.#waiting.clear();
    })();
    // Only the tail is kept: a server logs a line per call.
    (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        this.#stderr = (this.#stderr + decoder.decode(chunk)).slice(-8000);
      }
    })();
  }

  /** Sends a request and resolves with its response (the whole JSON-RPC message). */
  async request(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const answered = new Promise<Record<string, unknown>>((resolve, reject) =>
      this.#waiting.set(id, { resolve, reject })
    );
    await this.#send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    return await answered;
  }

  async notify(method: string): Promise<void> {
    await this.#send({ jsonrpc: "2.0", method });
  }

  /** The opening handshake of a 2025-era client. */
  async initialize(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "opendata-mcp-bench", version: "0" },
    });
    await this.notify("notifications/initialized");
  }

  async #send(message: Record<string, unknown>): Promise<void> {
    await this.#writer.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
  }

  /** Closes stdin (servers exit on it), then makes sure the process is gone. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, 3000);
    await this.child.status;
    clearTimeout(timer);
    await this.#done.catch(() => {});
  }
}

/** What one start measured: wall milliseconds to tools/list answered, memory and main-thread CPU then. */
export interface StartSample {
  ms: number;
  rss: number;
  cpuMs: number;
}

/** One start: milliseconds from spawn to the answer of tools/list, and resident memory then. */
export async function startOnce(command: ServerCommand): Promise<StartSample> {
  if (command.http) return await startHttpOnce(command);
  const home = scratchHome();
  const t0 = performance.now();
  const peer = new StdioPeer(command, home);
  try {
    await peer.initialize();
    const listed = await peer.request("tools/list");
    const ms = performance.now() - t0;
    if (!("result" in listed)) {
      throw new Error(`${command.label}: tools/list failed: ${JSON.stringify(listed)}`);
    }
    const cpuMs = mainThreadCpuMs(peer.child.pid);
    const mem = memoryMiB(peer.child.pid);
    return { ms, rss: mem?.rss ?? NaN, cpuMs };
  } finally {
    await peer.close();
    removeHome(home);
  }
}

/** {@linkcode startOnce} of a server that serves HTTP: spawn to tools/list answered over HTTP. */
async function startHttpOnce(command: ServerCommand): Promise<StartSample> {
  const home = scratchHome();
  const [program, ...args] = command.cmd;
  const t0 = performance.now();
  const child = new Deno.Command(program!, {
    args,
    env: { ...childEnv(home, command.env), OPENDATA_MCP_TOOLSETS: "" },
    clearEnv: true,
    cwd: command.cwd ?? home,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let log = "";
  const port = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      log += decoder.decode(chunk, { stream: true });
      const line = log.split("\n").find((l) => l.includes('"serving MCP over HTTP"'));
      if (line) {
        // Keep reading (and dropping) the log, so the server never blocks on a full pipe.
        (async () => {
          for await (const _ of child.stderr) { /* dropped */ }
        })().catch(() => {});
        return Number(JSON.parse(line).port);
      }
    }
    throw new Error(`${command.label} exited before listening:\n${log.slice(-2000)}`);
  })();
  try {
    const url = `http://127.0.0.1:${await port}/mcp`;
    const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await fetch(url, {
      method: "POST",
      headers: base,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "bench", version: "0" },
        },
      }),
    });
    const session = init.headers.get("mcp-session-id");
    await rpcOver(init);
    const headers: Record<string, string> = {
      ...base,
      "mcp-protocol-version": "2025-06-18",
      ...(session ? { "mcp-session-id": session } : {}),
    };
    const note = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await note.body?.cancel();
    const listed = await rpcOver(
      await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      }),
    );
    const ms = performance.now() - t0;
    if (!("result" in listed)) {
      throw new Error(`${command.label}: tools/list failed: ${JSON.stringify(listed)}`);
    }
    return { ms, rss: memoryMiB(child.pid)?.rss ?? NaN, cpuMs: mainThreadCpuMs(child.pid) };
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await port.catch(() => {});
    removeHome(home);
  }
}

/** Milliseconds from spawn to exit of a command that exits by itself (bare `deno run`). */
export async function exitOnce(cmd: string[]): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(cmd[0]!, { args: cmd.slice(1), stdout: "null", stderr: "null" })
    .output();
  if (!out.success) throw new Error(`${cmd.join(" ")} failed`);
  return performance.now() - t0;
}

/**
 * The commands, each with a Deno cache folder of its own (`DENO_DIR`, removed by `dispose`).
 * V8 rejects code cached under other V8 flags, and servers run with different flags share the
 * SDK's files: in one shared cache, interleaved starts would keep discarding each other's code.
 */
export function ownCaches(
  commands: readonly ServerCommand[],
): { commands: ServerCommand[]; dispose(): void } {
  const dirs: string[] = [];
  const out = commands.map((c) => {
    if (c.env?.["DENO_DIR"]) return c;
    const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-bench-deno-dir-" });
    dirs.push(dir);
    return { ...c, env: { ...c.env, DENO_DIR: dir } };
  });
  return {
    commands: out,
    dispose: () => {
      for (const d of dirs) Deno.removeSync(d, { recursive: true });
    },
  };
}

/** One command's starts: wall time, memory and main-thread CPU, with each round's figures for pairing. */
export interface StartsOf {
  ms: Spread;
  rss: Spread;
  /** Wall milliseconds, round by round. */
  rounds: number[];
  /** Main-thread CPU milliseconds to tools/list answered, round by round (NaN off Linux). */
  cpuRounds: number[];
}

/**
 * Starts each command `runs` times, interleaved in rounds (each command once per round, in an
 * order that rotates from round to round), so the machine's other load hits all alike. Each
 * command runs with its own Deno cache ({@linkcode ownCaches}).
 */
export async function interleavedStarts(
  given: readonly ServerCommand[],
  runs: number,
  bare?: string[],
): Promise<{ starts: Map<string, StartsOf>; bare?: Spread }> {
  const cached = ownCaches(given);
  try {
    return await measureStarts(cached.commands, runs, bare);
  } finally {
    cached.dispose();
  }
}

async function measureStarts(
  commands: readonly ServerCommand[],
  runs: number,
  bare?: string[],
): Promise<{ starts: Map<string, StartsOf>; bare?: Spread }> {
  const ms = new Map<string, number[]>(commands.map((c) => [c.label, []]));
  const rss = new Map<string, number[]>(commands.map((c) => [c.label, []]));
  const cpu = new Map<string, number[]>(commands.map((c) => [c.label, []]));
  const bareMs: number[] = [];
  // Two unmeasured starts each: the first fills the command's own cache (transpiled code, V8
  // code cache), the second runs from it, as every start of an installed server does.
  for (const c of commands) await startOnce(c);
  for (const c of commands) await startOnce(c);
  for (let i = 0; i < runs; i++) {
    const order = commands.map((_, k) => commands[(k + i) % commands.length]!);
    for (const c of order) {
      const r = await startOnce(c);
      ms.get(c.label)!.push(r.ms);
      rss.get(c.label)!.push(r.rss);
      cpu.get(c.label)!.push(r.cpuMs);
    }
    if (bare) bareMs.push(await exitOnce(bare));
  }
  const starts = new Map(
    commands.map((c) => [
      c.label,
      {
        ms: spread(ms.get(c.label)!),
        rss: spread(rss.get(c.label)!),
        rounds: ms.get(c.label)!,
        cpuRounds: cpu.get(c.label)!,
      },
    ]),
  );
  return bare ? { starts, bare: spread(bareMs) } : { starts };
}

/**
 * The ratios of `a` to `b` start by start, each pair measured in the same round (one right
 * after the other), so a slow spell of the machine weighs on both sides of a ratio alike.
 */
export function pairedRatios(a: readonly number[], b: readonly number[]): Spread {
  return spread(a.map((x, i) => x / b[i]!));
}

/**
 * Calls `command.call` `n` times over stdio, one after another, and reports resident and peak
 * memory at the end, with the round-trip times.
 */
export async function stdioCalls(
  command: ServerCommand,
  n: number,
): Promise<{ rss: number; peak: number; startRss: number; roundTrip: Spread; p99: number }> {
  if (!command.call) throw new Error(`${command.label} names no call`);
  const home = scratchHome();
  const peer = new StdioPeer(command, home);
  try {
    await peer.initialize();
    await peer.request("tools/list");
    const startRss = memoryMiB(peer.child.pid)?.rss ?? NaN;
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = await peer.request("tools/call", command.call);
      times.push(performance.now() - t0);
      const result = r["result"] as { isError?: boolean } | undefined;
      if (!result || result.isError) throw new Error(`${command.label}: call failed: ${JSON.stringify(r)}`);
    }
    const mem = memoryMiB(peer.child.pid);
    return {
      rss: mem?.rss ?? NaN,
      peak: mem?.peak ?? NaN,
      startRss,
      roundTrip: spread(times),
      p99: quantile(times, 0.99),
    };
  } finally {
    await peer.close();
    removeHome(home);
  }
}

/**
 * `deno run` arguments of another checkout's start task, `$HOME` expanded to `home` (no shell
 * here) and the child's HOME set to it.
 */
export function checkoutCommand(dir: string, home: string, label: string): ServerCommand {
  const config = JSON.parse(Deno.readTextFileSync(join(dir, "deno.json")));
  const task = splitStartTask(String(config.tasks.start).replaceAll("$HOME", home));
  if (!task) throw new Error(`Unexpected start task in ${dir}: ${config.tasks.start}`);
  return {
    label,
    cmd: [
      Deno.execPath(),
      "run",
      "--config",
      join(dir, "deno.json"),
      ...task.args.slice(0, -1),
      join(dir, task.entry),
    ],
    // The task's grants name this HOME: the child runs with it.
    env: { ...task.env, HOME: home },
  };
}

/**
 * This checkout's server, as `deno task start` runs it (the sources' main.ts), plus `args`; with
 * `entry` (e.g. a built bundle's main.js), the same command on that module.
 */
export function thisServer(
  label: string,
  args: string[] = [],
  env: Record<string, string> = {},
  entry?: string,
): ServerCommand {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  const task = splitStartTask(String(config.tasks.start));
  if (!task) throw new Error(`Unexpected start task: ${config.tasks.start}`);
  return {
    label,
    cmd: [
      Deno.execPath(),
      "run",
      "--config",
      join(ROOT, "deno.json"),
      ...task.args.slice(0, -1),
      resolve(ROOT, entry ?? task.entry),
      ...args,
    ],
    env: { ...task.env, ...env },
    call: { name: "opendata_describe", arguments: { tool: "worldbank_search_documents" } },
  };
}

/** The minimal SDK server under Deno, with this checkout's dependencies. */
export function minimalServer(): ServerCommand {
  return {
    label: "minimal SDK server (Deno, 1 tool)",
    cmd: [
      Deno.execPath(),
      "run",
      "-q",
      "--no-prompt",
      "--config",
      join(ROOT, "deno.json"),
      join(ROOT, "tools/bench/minimal_server.ts"),
    ],
    call: { name: "echo", arguments: { text: "hello" } },
  };
}

/** The pinned `@modelcontextprotocol/server-everything` release the bench installs. */
export const EVERYTHING_VERSION = "2026.8.31";

/**
 * Installs server-everything from npm into `dir` (a scratch folder) and returns how to run it on
 * Node, or why it cannot be measured here (no `node`, no `npm`, no registry).
 */
export async function everythingServer(dir: string): Promise<ServerCommand | string> {
  try {
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefix",
        dir,
        `@modelcontextprotocol/server-everything@${EVERYTHING_VERSION}`,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      return `npm install failed: ${new TextDecoder().decode(out.stderr).trim().split("\n")[0]}`;
    }
    const node = new Deno.Command("node", { args: ["--version"], stdout: "piped" }).outputSync();
    const entry = join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    return {
      label: `server-everything ${EVERYTHING_VERSION} (Node ${new TextDecoder().decode(node.stdout).trim()})`,
      cmd: ["node", entry, "stdio"],
      env: { PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}` },
    };
  } catch (e) {
    return `not measured: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** One HTTP call's answer: the JSON-RPC message, from a JSON body or the first SSE `data:` line. */
async function rpcOver(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`);
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const data = text.split("\n").find((l) => l.startsWith("data:"));
    if (!data) throw new Error(`No data in the event stream: ${text.slice(0, 200)}`);
    return JSON.parse(data.slice(5));
  }
  return JSON.parse(text);
}

/**
 * `sessions` concurrent 2025-era HTTP sessions against `origin`, each making `calls` calls of
 * `call` one after another; resolves with every call's latency.
 */
export async function httpSessions(
  origin: string,
  sessions: number,
  calls: number,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<number[]> {
  const url = `${origin}/mcp`;
  const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const latencies: number[] = [];
  await Promise.all(Array.from({ length: sessions }, async (_, s) => {
    const init = await fetch(url, {
      method: "POST",
      headers: base,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: `bench-${s}`, version: "0" },
        },
      }),
    });
    const session = init.headers.get("mcp-session-id");
    await rpcOver(init);
    if (!session) throw new Error("The server opened no session");
    const headers = { ...base, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    const note = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await note.body?.cancel();
    for (let i = 1; i <= calls; i++) {
      const t0 = performance.now();
      const answer = await rpcOver(
        await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: call }),
        }),
      );
      latencies.push(performance.now() - t0);
      const result = answer["result"] as { isError?: boolean } | undefined;
      if (!result || result.isError) throw new Error(`Call failed: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    const end = await fetch(url, { method: "DELETE", headers });
    await end.body?.cancel();
  }));
  return latencies;
}

/**
 * The first call of a provider's tool (its code is loaded then) and the second, in a fresh
 * server; `runs` servers, interleaved with nothing else.
 */
export async function firstCalls(
  command: ServerCommand,
  call: { name: string; arguments: Record<string, unknown> },
  runs: number,
): Promise<{ first: Spread; second: Spread }> {
  const first: number[] = [];
  const second: number[] = [];
  for (let i = 0; i < runs; i++) {
    const home = scratchHome();
    const peer = new StdioPeer(command, home);
    try {
      await peer.initialize();
      await peer.request("tools/list");
      for (const into of [first, second]) {
        const t0 = performance.now();
        const r = await peer.request("tools/call", call);
        into.push(performance.now() - t0);
        const result = r["result"] as { isError?: boolean } | undefined;
        if (!result || result.isError) throw new Error(`${command.label}: call failed: ${JSON.stringify(r)}`);
      }
    } finally {
      await peer.close();
      removeHome(home);
    }
  }
  return { first: spread(first), second: spread(second) };
}
