// The only impure file: it reads the process's arguments, environment and permissions, wires
// signals, and turns the CLI's result into an exit code. Everything else takes parameters.
// `main()` takes the providers, so the conformance suite's entry (tests/conformance/server.ts)
// runs this same process code with its fixture provider added.
import { run } from "./lib/cli.ts";
import { knownEnvNames } from "./lib/config/parse.ts";
import { ConfigError } from "./lib/errors.ts";
import { LineWriter, LOG_GATHER_MS, writeAllSync } from "./lib/log.ts";
import { PROJECT_CONFIG } from "./lib/config/paths.ts";
import { PROVIDERS } from "./lib/providers/registry.ts";
import type { ProviderSpec } from "./lib/config/provider_spec.ts";

function readEnv(providers: readonly ProviderSpec[]): Record<string, string | undefined> {
  try {
    return Deno.env.toObject();
  } catch {
    // Under a scoped --allow-env the whole environment is not readable: read what we may.
    const out: Record<string, string | undefined> = {};
    for (const name of knownEnvNames(providers)) {
      try {
        out[name] = Deno.env.get(name);
      } catch {
        // Not in the allowlist: treated as unset.
      }
    }
    return out;
  }
}

function readTextFile(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new ConfigError("--config", `Not allowed to read "${path}": run with --allow-read=${path}`);
    }
    throw e;
  }
}

/** Runs the command line with `providers` and exits the process with its code. */
export async function main(providers: readonly ProviderSpec[]): Promise<never> {
  const controller = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(signal, () => controller.abort());
    } catch {
      // SIGTERM cannot be listened for on Windows.
    }
  }

  const encoder = new TextEncoder();

  // Log lines: written at once until the process serves HTTP, then asynchronously, many to a
  // write. An uncaught error or rejection ends the process without waiting: what is queued goes
  // out first.
  // While serving, lines gather for a moment and go out many to a write (docs/OBSERVABILITY.md).
  const stderr = new LineWriter(Deno.stderr, { gatherMs: LOG_GATHER_MS });
  globalThis.addEventListener("error", () => stderr.flushSync());
  globalThis.addEventListener("unhandledrejection", () => stderr.flushSync());

  const code = await run(Deno.args, {
    env: readEnv(providers),
    os: Deno.build.os,
    stdout: (text) => writeAllSync(Deno.stdout, encoder.encode(`${text}\n`)),
    stderr: stderr.write,
    serving: () => stderr.serving(),
    readTextFile,
    // Run from source (deno task start, deno run main.ts, the container), the working directory's
    // config/apis.yaml counts; a compiled binary may be started in any folder, so it does not.
    ...(Deno.build.standalone ? {} : { projectConfig: PROJECT_CONFIG }),
    isNetAllowed: (host) => Deno.permissions.querySync({ name: "net", host }).state === "granted",
    shutdown: controller.signal,
    heapLimitMiB: async () => (await import("node:v8")).getHeapStatistics().heap_size_limit / 1048576,
  }, providers);
  // The last lines go out first, unless stderr has stopped taking them.
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([stderr.drain(), new Promise((resolve) => drainTimer = setTimeout(resolve, 2_000))]);
  clearTimeout(drainTimer);
  Deno.exit(code);
}

if (import.meta.main) await main(PROVIDERS);
