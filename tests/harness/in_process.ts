// Runs the real command line (`run()` from lib/cli.ts: flags, environment, config file, every
// provider, the line-delimited stdio transport) inside the test process, and connects the MCP
// SDK's own Client to it over a pair of in-memory byte pipes. It answers as a spawned server
// does, without a process to start: tests of what a provider or the core answers use this;
// tests whose point is the process boundary (permissions, signals, stdout hygiene, the binary,
// the built bundle) spawn the server with ./spawn.ts.
import { join } from "node:path";
import { run } from "../../lib/cli.ts";
import type { CliIo } from "../../lib/cli.ts";
import { disableMetrics } from "../../lib/metrics/mod.ts";
import { disableTracing } from "../../lib/metrics/tracing.ts";
import type { ByteReader, ByteWriter } from "../../lib/mcp/stdio_transport.ts";
import { PROJECT_CONFIG } from "../../lib/config/paths.ts";
import { netAllowlist } from "../../tools/permissions.ts";
import { Client, serializeMessage } from "./sdk_client.ts";
import type { JSONRPCMessage, Transport } from "./sdk_client.ts";
import { TEST_PROVIDERS } from "./providers.ts";
import { removeHome, scratchHome } from "./spawn.ts";
import type { SpawnOptions } from "./spawn.ts";
import { completeLines } from "./spawn_http.ts";

/** A connected client and the server running in this process. */
export interface InProcessSession {
  client: Client;
  /** What the server wrote: every stdout line, and its log (stderr) so far. */
  transport: InProcessStdio["transport"];
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

  sendRaw(text: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The in-process transport is closed"));
    this.#toServer.push(this.#encoder.encode(text));
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

/** Servers running in this process now (a test may run several at once). */
let running = 0;

/**
 * Runs `run()` as one more server in this process. A server turns on the process's metrics
 * (serving HTTP, or with a metrics port) and its tracing (OTEL_DENO): they are turned off again
 * once the last running server has ended, so the next server in the same test file starts from
 * zero, as a new process would.
 */
function runServer(args: readonly string[], io: CliIo): Promise<number> {
  running++;
  return run(args, io, TEST_PROVIDERS).finally(() => {
    if (--running > 0) return;
    disableMetrics();
    disableTracing();
  });
}

/** A scratch HOME (or `options.home`) with the config file written when given. */
function homeFor(options: InProcessOptions): string {
  if (!options.home) return scratchHome(options.configYaml);
  if (options.configYaml !== undefined) {
    Deno.mkdirSync(`${options.home}/.config/opendata-mcp`, { recursive: true });
    Deno.writeTextFileSync(`${options.home}/.config/opendata-mcp/config.yaml`, options.configYaml);
  }
  return options.home;
}

/** What `main.ts` hands `run()`, with the environment, files and network of a test server. */
function testIo(
  home: string,
  options: InProcessOptions,
  io: Pick<CliIo, "stdout" | "stderr" | "shutdown" | "stdio">,
): CliIo {
  return {
    env: { HOME: home, OPENDATA_MCP_TOOLSETS: "all", ...options.env },
    os: Deno.build.os,
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
    ...io,
  };
}

/** A server on stdio in this process, and the client's end of its pipes, not connected yet. */
export interface InProcessStdio {
  /** Connect any MCP client (SDK v1 or v2) with it. */
  transport: Transport & {
    readonly stdoutLines: string[];
    readonly stderr: string;
    /** Writes raw bytes to the server's stdin (for malformed-input tests). */
    sendRaw(text: string): Promise<void>;
  };
  home: string;
  /** The server's log (stderr) so far. */
  stderr(): string;
  /** The exit code `run()` resolved to, once the server has ended. */
  exited: Promise<number>;
  /** Closes stdin and waits for the server to end. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Runs the server in this process as `main.ts [args]` would run in a scratch HOME (the
 * environment holds only HOME, `OPENDATA_MCP_TOOLSETS=all` and `env`), with a transport for
 * the test's own client.
 */
export function serveInProcess(options: InProcessOptions = {}): InProcessStdio {
  const home = homeFor(options);
  let log = "";
  const stdin = new BytePipe();
  const transport = new PipeClientTransport(stdin, () => log);
  const exited = runServer(
    options.args ?? [],
    testIo(home, options, {
      stdout: (text) => transport.serverStdout.writeSync(new TextEncoder().encode(`${text}\n`)),
      stderr: (text) => log += `${text}\n`,
      shutdown: new AbortController().signal,
      stdio: { stdin, stdout: transport.serverStdout },
    }),
  );
  const close = async () => {
    await transport.close();
    await exited;
  };
  return {
    transport,
    home,
    stderr: () => log,
    exited,
    close,
    [Symbol.asyncDispose]: async () => {
      await close();
      if (!options.home) removeHome(home);
    },
  };
}

/** Runs the server in this process (as {@linkcode serveInProcess}) and connects a client. */
export async function startInProcess(options: InProcessOptions = {}): Promise<InProcessSession> {
  const server = serveInProcess(options);
  const { transport, exited } = server;
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
    await server[Symbol.asyncDispose]();
    throw new Error(`Server did not initialize: ${(e as Error).message}\n${server.stderr()}`);
  }
  const close = async () => {
    await client.close().catch(() => {});
    await server.close();
  };
  const dispose = async () => {
    await client.close().catch(() => {});
    await server[Symbol.asyncDispose]();
  };
  return {
    client,
    transport,
    home: server.home,
    stderr: server.stderr,
    close,
    exited,
    [Symbol.asyncDispose]: dispose,
  };
}

/** An HTTP server running in this process (the shape of a spawned one, without the child). */
export interface InProcessHttpServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  home: string;
  /** The server's log (JSON lines) so far. */
  stderr(): string;
  /** The first log line `match` finds, once it has been written (within `timeoutMs`). */
  logged(match: RegExp, timeoutMs?: number): Promise<string>;
  /** Shuts the server down as SIGTERM does and resolves to `run()`'s exit code. */
  stop(): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Runs `main.ts serve --transport http --host 127.0.0.1 --port 0` plus `options.args` in this
 * process, on a real socket, and waits (up to `timeoutMs`) for the "serving MCP over HTTP" line.
 */
export async function startHttpInProcess(
  options: InProcessOptions = {},
  timeoutMs = 30_000,
): Promise<InProcessHttpServer> {
  const home = homeFor(options);
  let log = "";
  const waiters = new Set<() => void>();
  const shutdown = new AbortController();
  const exited = runServer(
    ["serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0", ...(options.args ?? [])],
    testIo(home, options, {
      // `serve` writes nothing but its log; stdout stays empty as in a spawned server.
      stdout: (text) => log += `${text}\n`,
      stderr: (text) => {
        log += `${text}\n`;
        for (const wake of waiters) wake();
      },
      shutdown: shutdown.signal,
    }),
  );
  let ended: number | undefined;
  // run() resolves to an exit code and catches what it can; a rejection is said in the log.
  exited.then((code) => {
    ended = code;
    for (const wake of waiters) wake();
  }, (e) => {
    ended = -1;
    log += `run() rejected: ${e instanceof Error ? e.stack : String(e)}\n`;
    for (const wake of waiters) wake();
  });
  const logged = (match: RegExp, wait = 10_000): Promise<string> => {
    const { promise, resolve, reject } = Promise.withResolvers<string>();
    const check = () => {
      const line = completeLines(log).find((l) => match.test(l));
      if (line === undefined && ended === undefined) return;
      finish();
      if (line !== undefined) resolve(line);
      else reject(new Error(`The server exited with code ${ended} before logging ${match}:\n${log}`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`No log line matched ${match} within ${wait} ms:\n${log}`));
    }, wait);
    const finish = () => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    waiters.add(check);
    check();
    return promise;
  };
  let stopped: Promise<number> | undefined;
  const stop = (): Promise<number> => {
    stopped ??= (async () => {
      shutdown.abort();
      return await exited;
    })();
    return stopped;
  };
  let port: number;
  try {
    port = JSON.parse(await logged(/"serving MCP over HTTP"/, timeoutMs)).port;
  } catch (e) {
    await stop().catch(() => {});
    if (!options.home) removeHome(home);
    throw e;
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    home,
    stderr: () => log,
    logged,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
      if (!options.home) removeHome(home);
    },
  };
}

/** Runs one CLI command (`tools`, `call`, `config check`, `--help`) to completion in this process. */
export async function runInProcess(
  args: string[],
  options: InProcessOptions = {},
): Promise<{ code: number; stdout: string; stderr: string; home: string }> {
  const home = homeFor(options);
  let stdout = "";
  let stderr = "";
  const code = await runServer(
    args,
    testIo(home, options, {
      stdout: (text) => stdout += `${text}\n`,
      stderr: (text) => stderr += `${text}\n`,
      shutdown: new AbortController().signal,
    }),
  );
  if (!options.home) removeHome(home);
  return { code, stdout, stderr, home };
}
