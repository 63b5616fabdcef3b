// Spawns the real server (`main.ts`) with the permission set `deno task start` uses (`-P`; its
// network allowlist includes 127.0.0.1, where the fake upstreams listen) in a scratch HOME, and
// connects the MCP SDK's own Client over stdio. Deno.Command is used rather than node:child_process, which would hand the
// child full permissions and hide a missing allowlist entry. The child's working directory is
// the scratch HOME, like a desktop client that starts the server anywhere, so the repository's
// own config/apis.yaml is not read unless a test asks for it (`cwd`).
import { dirname, join, resolve } from "node:path";
import { Client, serializeMessage } from "./sdk_client.ts";
import { splitStartTask } from "../../tools/permissions.ts";
import type { JSONRPCMessage, Transport } from "./sdk_client.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
/** main.ts's process code with the conformance fixture provider added (it ships in no artefact). */
const CONFORMANCE_MAIN = new URL("../conformance/server.ts", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;

/** Options for spawning the server. */
export interface SpawnOptions {
  /** Arguments after `main.ts`. */
  args?: string[];
  /** Environment variables (the child gets only these plus HOME, PATH and DENO_DIR). */
  env?: Record<string, string>;
  /** YAML written to the per-user config file in the scratch HOME. */
  configYaml?: string;
  /**
   * Extra `--allow-net` entries, added to the permission set's list (a flag replaces a set's
   * list, so the whole list is passed). The set already allows 127.0.0.1, where fakes listen.
   */
  extraNet?: string[];
  /** The start task's permissions exactly, even when `extraNet` is given. */
  exactPermissions?: boolean;
  /** Leaves out the start task's V8 flags (the bench compares with and without them). */
  withoutV8Flags?: boolean;
  /**
   * The start task whose flags the server runs with: `start` (the default) or `start:http`, which
   * HTTP servers use where the checkout has it ("start:http?": a checkout from before it had none).
   */
  task?: "start" | "start:http" | "start:http?";
  /**
   * Narrows file writes to these paths (`$HOME` is the scratch HOME), replacing the set's
   * unscoped write, to test how the server reports a refused write.
   */
  allowWrite?: string[];
  /** Reuse a scratch HOME (e.g. to read files the server wrote). */
  home?: string;
  /** The child's working directory (default: the scratch HOME). */
  cwd?: string;
  /**
   * Another copy of `main.ts` to run (e.g. a copy of the repository with a file removed); the
   * `deno.json` next to it supplies the permissions.
   */
  main?: string;
  /**
   * The entry of a start bundle built for the test (tools/bundle.ts `buildBundle`, what the
   * container and the release binary run), run with this repository's deno.json; default the
   * sources' main.ts.
   */
  bundle?: string;
  /** The capabilities the stdio client declares (e.g. the MCP Apps extension); default none. */
  clientCapabilities?: Record<string, unknown>;
}

/**
 * The `deno run` arguments of `deno task start`, read from the `deno.json` in use, with
 * `--config` naming that file (the child may run in another folder): `-P` applies its permission
 * set, so every spawned server runs with the real allowlists.
 */
export function startArgs(home: string, options: SpawnOptions = {}): string[] {
  // A built bundle runs from its runtime layout (tools/bundle.ts --runtime, the image's /app): that
  // folder's deno.json and its trimmed node_modules/, so a package the layout lacks fails the test.
  const configPath = options.main
    ? join(dirname(options.main), "deno.json")
    : options.bundle
    ? join(dirname(dirname(options.bundle)), "deno.json")
    : `${ROOT}deno.json`;
  const config = JSON.parse(Deno.readTextFileSync(configPath));
  const asked = options.task ?? "start";
  const name = asked === "start:http?" ? (config.tasks["start:http"] ? "start:http" : "start") : asked;
  const task = splitStartTask(String(config.tasks[name]));
  if (!task) throw new Error(`Unexpected or missing task ${name} in ${configPath}: ${config.tasks[name]}`);
  const args = [
    "--config",
    configPath,
    ...task.args.slice(0, -1).filter((a) => !(options.withoutV8Flags && a.startsWith("--v8-flags="))),
  ];
  if (options.extraNet?.length && !options.exactPermissions) {
    args.push(`--allow-net=${[...config.permissions.default.net, ...options.extraNet].join(",")}`);
  }
  if (options.allowWrite) {
    args.push(`--allow-write=${options.allowWrite.map((p) => p.replaceAll("$HOME", home)).join(",")}`);
  }
  return args;
}

/**
 * The module a spawned server runs: `options.main`, the bundle's entry or the sources' main.ts;
 * a server whose `--providers` names the conformance fixtures runs their entry (main.ts with the
 * fixture provider added).
 */
export function entryOf(options: SpawnOptions): string {
  if (options.main) return options.main;
  if (namesConformance(options.args ?? [])) return CONFORMANCE_MAIN;
  return options.bundle ?? MAIN;
}

function namesConformance(args: readonly string[]): boolean {
  const at = args.indexOf("--providers");
  const list = at === -1 ? args.find((a) => a.startsWith("--providers="))?.slice(12) : args[at + 1];
  return list?.split(",").some((id) => id.trim() === "conformance") ?? false;
}

/** The child's whole environment: a scratch HOME, PATH, the Deno cache, coverage, and `env`. */
export function childEnv(home: string, env: Record<string, string> = {}): Record<string, string> {
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
  const base: Record<string, string> = {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "",
    DENO_DIR: denoDir,
    NO_COLOR: "1",
    // Tests call each provider's tools directly, so they list every toolset; tests of the small
    // default surface set OPENDATA_MCP_TOOLSETS themselves (an empty value means the default).
    OPENDATA_MCP_TOOLSETS: "all",
  };
  // `deno task test` sets DENO_COVERAGE_DIR so spawned servers count towards coverage too; the
  // child runs in another folder, so a relative path is resolved here.
  const coverage = Deno.env.get("DENO_COVERAGE_DIR");
  if (coverage) base["DENO_COVERAGE_DIR"] = resolve(Deno.cwd(), coverage);
  return { ...base, ...env };
}

/** Removes a scratch HOME the harness made (tests that pass their own `home` keep it). */
export function removeHome(home: string): void {
  try {
    Deno.removeSync(home, { recursive: true });
  } catch {
    // Already gone, or a file is still held open: leave it to the OS's temp cleanup.
  }
}

/** A scratch HOME, with the config file written when given. */
export function scratchHome(configYaml?: string): string {
  const home = Deno.makeTempDirSync({ prefix: "opendata-mcp-test-" });
  if (configYaml !== undefined) {
    Deno.mkdirSync(`${home}/.config/opendata-mcp`, { recursive: true });
    Deno.writeTextFileSync(`${home}/.config/opendata-mcp/config.yaml`, configYaml);
  }
  return home;
}

/** Runs one CLI command to completion. */
export async function runCli(
  args: string[],
  options: SpawnOptions = {},
): Promise<{ code: number; stdout: string; stderr: string; home: string }> {
  const home = options.home ?? scratchHome(options.configYaml);
  if (options.home && options.configYaml !== undefined) {
    Deno.mkdirSync(`${home}/.config/opendata-mcp`, { recursive: true });
    Deno.writeTextFileSync(`${home}/.config/opendata-mcp/config.yaml`, options.configYaml);
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...startArgs(home, options), entryOf(options), ...args],
    env: childEnv(home, options.env),
    clearEnv: true,
    cwd: options.cwd ?? home,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!options.home) removeHome(home);
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr), home };
}

/** A client-side stdio transport over a `Deno.Command` child. */
export class DenoStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #command: Deno.Command;
  #child?: Deno.ChildProcess;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  #stderr = "";
  /** Every line the server wrote to stdout, in order (to check nothing but JSON-RPC is written). */
  readonly stdoutLines: string[] = [];
  #done?: Promise<void>;

  constructor(command: Deno.Command) {
    this.#command = command;
  }

  /** Everything the server wrote to stderr so far (its JSON log lines). */
  get stderr(): string {
    return this.#stderr;
  }

  /** The child process, once started. */
  get child(): Deno.ChildProcess | undefined {
    return this.#child;
  }

  start(): Promise<void> {
    const child = this.#command.spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    const readOut = (async () => {
      for await (const line of lines(child.stdout)) {
        this.stdoutLines.push(line);
        try {
          this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
        } catch (e) {
          this.onerror?.(e as Error);
        }
      }
    })();
    const readErr = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of child.stderr) this.#stderr += dec.decode(chunk, { stream: true });
    })();
    this.#done = Promise.all([readOut, readErr, child.status]).then(() => this.onclose?.());
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.#writer!.write(new TextEncoder().encode(serializeMessage(message)));
  }

  /** Writes raw bytes to the server's stdin (for malformed-input tests). */
  async sendRaw(text: string): Promise<void> {
    await this.#writer!.write(new TextEncoder().encode(text));
  }

  async close(): Promise<void> {
    try {
      await this.#writer?.close();
    } catch {
      // Already closed.
    }
    const timer = setTimeout(() => this.#child?.kill("SIGTERM"), 5000);
    await this.#done;
    clearTimeout(timer);
  }
}

/** A connected client and the spawned server. */
export interface StdioSession {
  client: Client;
  transport: DenoStdioTransport;
  home: string;
  /** The server's stderr so far. */
  stderr(): string;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Spawns `main.ts` and connects an SDK `Client` over stdio. */
export async function startStdio(options: SpawnOptions = {}): Promise<StdioSession> {
  const home = options.home ?? scratchHome(options.configYaml);
  if (options.home && options.configYaml !== undefined) {
    Deno.mkdirSync(`${home}/.config/opendata-mcp`, { recursive: true });
    Deno.writeTextFileSync(`${home}/.config/opendata-mcp/config.yaml`, options.configYaml);
  }
  const transport = new DenoStdioTransport(
    new Deno.Command(Deno.execPath(), {
      args: ["run", ...startArgs(home, options), entryOf(options), ...(options.args ?? [])],
      env: childEnv(home, options.env),
      clearEnv: true,
      cwd: options.cwd ?? home,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }),
  );
  const client = new Client({ name: "opendata-mcp-tests", version: "0.0.0" }, {
    capabilities: options.clientCapabilities ?? {},
  });
  try {
    await client.connect(transport);
  } catch (e) {
    await transport.close();
    throw new Error(`Server did not initialize: ${(e as Error).message}\n${transport.stderr}`);
  }
  const close = async () => {
    await client.close().catch(() => {});
    await transport.close();
  };
  // close() stops the server and keeps its HOME for inspection; disposal also removes it.
  const dispose = async () => {
    await close();
    if (!options.home) removeHome(home);
  };
  return { client, transport, home, stderr: () => transport.stderr, close, [Symbol.asyncDispose]: dispose };
}

/** The newline-terminated lines of a byte stream (a child's stdout), as they arrive. */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) !== -1) {
      yield pending.slice(0, nl);
      pending = pending.slice(nl + 1);
    }
  }
}
