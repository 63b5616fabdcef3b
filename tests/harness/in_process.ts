// Runs the real command line (`run()` from lib/cli.ts: flags, environment, config file, every
// provider, the line-delimited stdio transport) inside the test process, and connects the MCP
// SDK's own Client to it over a pair of in-memory byte pipes. It answers as a spawned server
// does, without a process to start: tests of what a provider or the core answers use this;
// tests whose point is the process boundary (permissions, signals, stdout hygiene, the binary,
// the built bundle) spawn the server with ./spawn.ts.
import { join } from "node:path";
import { run } from "../../lib/cli.ts";
import type { ByteReader, ByteWriter } from "../../lib/mcp/stdio_transport.ts";
import { PROJECT_CONFIG } from "../../lib/config/paths.ts";
import { netAllowlist } from "../../tools/permissions.ts";
import { Client, serializeMessage } from "./sdk_client.ts";
import type { JSONRPCMessage, Transport } from "./sdk_client.ts";
import { TEST_PROVIDERS } from "./providers.ts";
import { removeHome, scratchHome } from "./spawn.ts";
import type { SpawnOptions } from "./spawn.ts";

/** A connected client and the server running in this process. */
export interface InProcessSession {
  client: Client;
  /** What the server wrote: every stdout line, and its log (stderr) so far. */
  transport: { readonly stdoutLines: string[]; readonly stderr: string };
  home: string;
  /** The server's log (stderr) so far. */
  stderr(): string;
  /** Closes the client's side; the server ends as it does when stdin closes. */
  close(): Promise<void>;
  /** The exit code `run()` resolved to, once the server has ended. */
  exited: Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The options of a spawned server that mean the same in process. */
export type InProcessOptions = Pick<
  SpawnOptions,
  "args" | "env" | "configYaml" | "extraNet" | "home" | "cwd" | "clientCapabilities"
>;

/** A one-way byte pipe: the writer's chunks, read in order; `end()` is the end of the stream. */
class BytePipe implements ByteReader {
  #chunks: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(bytes: Uint8Array): void {
    if (this.#ended) return;
    this.#chunks.push(bytes.slice());
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async read(p: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#ended) return null;
      await new Promise<void>((resolve) => this.#wake = resolve);
      this.#wake = undefined;
    }
    const head = this.#chunks[0]!;
    const n = Math.min(p.length, head.length);
    p.set(head.subarray(0, n));
    if (n === head.length) this.#chunks.shift();
    else this.#chunks[0] = head.subarray(n);
    return n;
  }
}

/** The client's end: writes go to the server's stdin, the server's stdout lines come back. */
class PipeClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly stdoutLines: string[] = [];
  #toServer: BytePipe;
  #pending = "";
  #decoder = new TextDecoder();
  #encoder = new TextEncoder();
  #closed = false;
  #log: () => string;

  constructor(toServer: BytePipe, log: () => string) {
    this.#toServer = toServer;
    this.#log = log;
  }

  get stderr(): string {
    return this.#log();
  }

  /** The server's stdout: written synchronously, delivered to the client on a later turn. */
  readonly serverStdout: ByteWriter = {
    writeSync: (p: Uint8Array): number => {
      this.#pending += this.#decoder.decode(p, { stream: true });
      let nl: number;
      while ((nl = this.#pending.indexOf("\n")) !== -1) {
        const line = this.#pending.slice(0, nl);
        this.#pending = this.#pending.slice(nl + 1);
        this.stdoutLines.push(line);
        queueMicrotask(() => this.#deliver(line));
      }
      return p.length;
    },
  };

  #deliver(line: string): void {
    if (this.#closed) return;
    try {
      this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
    } catch (e) {
      this.onerror?.(e as Error);
    }
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The in-process transport is closed"));
    this.#toServer.push(this.#encoder.encode(serializeMessage(message)));
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#toServer.end();
    this.onclose?.();
    return Promise.resolve();
  }
}

/**
 * Whether `host` (`name` or `name:port`) is on the start task's network allowlist plus `extra`,
 * as Deno's `--allow-net` matches it: a name allows every port, `*.` a subdomain of any depth.
 */
export function allowlistAllows(host: string, extra: readonly string[] = []): boolean {
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
  return [...netAllowlist(), ...extra].some((entry) =>
    entry === host || entry === name ||
    (entry.startsWith("*.") && name.endsWith(entry.slice(1)))
  );
}

/**
 * Runs the server in this process as `main.ts [args]` would run in a scratch HOME (the
 * environment holds only HOME, `OPENDATA_MCP_TOOLSETS=all` and `env`), and connects a client.
 */
export async function startInProcess(options: InProcessOptions = {}): Promise<InProcessSession> {
  const home = options.home ?? scratchHome(options.configYaml);
  if (options.home && options.configYaml !== undefined) {
    Deno.mkdirSync(`${home}/.config/opendata-mcp`, { recursive: true });
    Deno.writeTextFileSync(`${home}/.config/opendata-mcp/config.yaml`, options.configYaml);
  }
  let log = "";
  const stdin = new BytePipe();
  const transport = new PipeClientTransport(stdin, () => log);
  const shutdown = new AbortController();
  const exited = run(options.args ?? [], {
    env: { HOME: home, OPENDATA_MCP_TOOLSETS: "all", ...options.env },
    os: Deno.build.os,
    stdout: (text) => transport.serverStdout.writeSync(new TextEncoder().encode(`${text}\n`)),
    stderr: (text) => log += `${text}\n`,
    readTextFile: (path) => {
      try {
        return Deno.readTextFileSync(path);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      }
    },
    ...(options.cwd ? { projectConfig: join(options.cwd, PROJECT_CONFIG) } : {}),
    isNetAllowed: (host) => allowlistAllows(host, options.extraNet),
    shutdown: shutdown.signal,
    stdio: { stdin, stdout: transport.serverStdout },
  }, TEST_PROVIDERS);
  const client = new Client({ name: "opendata-mcp-tests", version: "0.0.0" }, {
    capabilities: options.clientCapabilities ?? {},
  });
  try {
    await Promise.race([
      client.connect(transport),
      exited.then((code) => {
        throw new Error(`The server ended with code ${code} before it initialized`);
      }),
    ]);
  } catch (e) {
    await transport.close();
    shutdown.abort();
    await exited.catch(() => {});
    if (!options.home) removeHome(home);
    throw new Error(`Server did not initialize: ${(e as Error).message}\n${log}`);
  }
  const close = async () => {
    await client.close().catch(() => {});
    await transport.close();
    await exited;
  };
  const dispose = async () => {
    await close();
    if (!options.home) removeHome(home);
  };
  return { client, transport, home, stderr: () => log, close, exited, [Symbol.asyncDispose]: dispose };
}
