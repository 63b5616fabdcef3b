// Spawns the real server (`main.ts serve --transport http`) with the start task's scoped
// permissions on 127.0.0.1 port 0, and reads the bound port from its start-up log line.
import { childEnv, entryOf, removeHome, scratchHome, startArgs } from "./spawn.ts";
import type { SpawnOptions } from "./spawn.ts";
import { START_ENV } from "../../tools/permissions.ts";

/**
 * The lines of `text` that have arrived whole: a serving process writes its log in batches, and
 * a batch may reach the reader in parts.
 */
export function completeLines(text: string): string[] {
  return text.slice(0, text.lastIndexOf("\n") + 1).split("\n");
}

/** A running HTTP server process. */
export interface HttpServerProcess {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  child: Deno.ChildProcess;
  /** Everything written to stderr so far (JSON log lines). */
  stderr(): string;
  /**
   * The first log line `match` finds, once it has arrived (within `timeoutMs`). A serving
   * process writes its log asynchronously, so a line may reach stderr after the response it
   * describes.
   */
  logged(match: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (default SIGTERM) and resolves to the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options for {@linkcode startHttpServer}. */
export interface HttpServerOptions extends SpawnOptions {
  /** Runs the server under `prlimit --nofile=N:N` (Linux): at most N open file descriptors. */
  nofile?: number;
  /** Leaves out the variables the start task sets (`START_ENV`), e.g. to measure what they change. */
  withoutTaskEnv?: boolean;
}

/** Whether `prlimit` (util-linux) is there to cap a child's file descriptors. */
export function hasPrlimit(): boolean {
  try {
    return new Deno.Command("prlimit", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/**
 * Starts `main.ts serve --transport http --host 127.0.0.1 --port 0` plus `options.args`, and
 * waits (up to `timeoutMs`) for the "serving MCP over HTTP" line.
 */
export async function startHttpServer(
  options: HttpServerOptions = {},
  timeoutMs = 30_000,
): Promise<HttpServerProcess> {
  const home = options.home ?? scratchHome(options.configYaml);
  const limit = options.nofile ? [`--nofile=${options.nofile}:${options.nofile}`, Deno.execPath()] : [];
  const child = new Deno.Command(options.nofile ? "prlimit" : Deno.execPath(), {
    args: [
      ...limit,
      "run",
      // As `deno task start:http` runs it (its V8 flags), unless the options name another task; a
      // baseline checkout from before that task runs as its `deno task start` does.
      ...startArgs(home, { task: "start:http?", ...options }),
      entryOf(options),
      "serve",
      "--transport",
      "http",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      ...(options.args ?? []),
    ],
    // As `deno task start` and the container run it (MALLOC_ARENA_MAX), unless `env` says otherwise.
    env: childEnv(home, { ...(options.withoutTaskEnv ? {} : START_ENV), ...options.env }),
    clearEnv: true,
    cwd: options.cwd ?? home,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const ready = Promise.withResolvers<number>();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let listening = false;
    for await (const chunk of child.stderr) {
      stderr += decoder.decode(chunk, { stream: true });
      // Only until found: rescanning a log that grows with every request costs the test CPU.
      if (listening) continue;
      const line = completeLines(stderr).find((l) => l.includes('"serving MCP over HTTP"'));
      if (line) {
        listening = true;
        ready.resolve(JSON.parse(line).port);
      }
    }
    ready.reject(new Error(`The server exited before listening:\n${stderr}`));
  })();
  const timer = setTimeout(
    () => ready.reject(new Error(`The server did not listen in ${timeoutMs} ms:\n${stderr}`)),
    timeoutMs,
  );
  let port: number;
  try {
    port = await ready.promise;
  } catch (e) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await reading.catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
  let stopped: Promise<number> | undefined;
  const stop = (signal: Deno.Signal = "SIGTERM"): Promise<number> => {
    stopped ??= (async () => {
      try {
        child.kill(signal);
      } catch {
        // Already gone.
      }
      const { code } = await child.status;
      await reading.catch(() => {});
      return code;
    })();
    return stopped;
  };
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    child,
    stderr: () => stderr,
    logged: async (match, wait = 10_000) => {
      const until = Date.now() + wait;
      for (;;) {
        const line = completeLines(stderr).find((l) => match.test(l));
        if (line !== undefined) return line;
        if (Date.now() > until) throw new Error(`No log line matched ${match} within ${wait} ms:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
      if (!options.home) removeHome(home);
    },
  };
}
