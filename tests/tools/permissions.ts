// Writes the permission flags of deno.json's run and compile tasks from the provider registry,
// so the allowlists always match what the code reads and reaches. `--check` fails when stale.
import { knownEnvNames } from "../../lib/config/parse.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";

/** Listen addresses of the default HTTP configuration. */
export const LISTEN = ["127.0.0.1:8000", "localhost:8000"];

/**
 * The connection guard's private Unix socket (lib/mcp/http/serve.ts `innerSocketPaths`): in the
 * data folder for `deno task start`, at a fixed path for compiled binaries, whose grants are
 * baked in before anyone's home is known. Deno grants a Unix socket by its exact path.
 */
export const RUN_SOCKET = "unix:$HOME/.local/share/opendata-mcp/http.sock";
export const COMPILED_SOCKET = "unix:/tmp/opendata-mcp-http.sock";

/** Variables read by dependencies at import or parse time (SDK SSE transport, yaml). */
export const DEPENDENCY_ENV = ["NO_DEPRECATION", "TRACE_DEPRECATION", "LOG_TOKENS", "LOG_STREAM"];

/** Files the server may read and write when run through `deno task`. */
export const READ = ["config", "$HOME/.config/opendata-mcp", "$HOME/.local/share/opendata-mcp"];
export const WRITE = ["$HOME/.local/share/opendata-mcp"];

const TARGETS: Record<string, string> = {
  "x86_64-unknown-linux-gnu": "opendata-mcp-x86_64-linux",
  "aarch64-unknown-linux-gnu": "opendata-mcp-aarch64-linux",
  "x86_64-apple-darwin": "opendata-mcp-x86_64-macos",
  "aarch64-apple-darwin": "opendata-mcp-aarch64-macos",
  "x86_64-pc-windows-msvc": "opendata-mcp-x86_64-windows.exe",
};

/** The `--allow-net` list: every provider's default hosts plus the default listen addresses. */
export function netAllowlist(): string[] {
  return [...new Set([...PROVIDERS.flatMap((s) => s.allowNet), ...LISTEN])];
}

/** The `--allow-env` list. */
export function envAllowlist(): string[] {
  return [...new Set([...knownEnvNames(PROVIDERS), ...DEPENDENCY_ENV])];
}

/** The tasks that carry permissions, as they should read. */
export function permissionTasks(): Record<string, string> {
  const net = `--allow-net=${netAllowlist().join(",")}`;
  const env = `--allow-env=${envAllowlist().join(",")}`;
  const run = `${net},${RUN_SOCKET} ${env} --allow-read=${READ.join(",")} --allow-write=${WRITE.join(",")}`;
  // A compiled binary cannot know the user's home or chosen data folder at build time: file
  // access is unscoped there and confined by the code's own path checks.
  const compiled = `${net},${COMPILED_SOCKET} ${env} --allow-read --allow-write`;
  const tasks: Record<string, string> = {
    start: `deno run ${run} main.ts`,
    dev: `deno run --watch ${run} main.ts`,
  };
  for (const [target, output] of Object.entries(TARGETS)) {
    tasks[`compile:${target}`] =
      `deno compile ${compiled} --target ${target} --output dist/${output} main.ts`;
  }
  return tasks;
}

if (import.meta.main) {
  const path = new URL("../../deno.json", import.meta.url);
  const config = JSON.parse(await Deno.readTextFile(path));
  const wanted = permissionTasks();
  const stale = Object.entries(wanted).filter(([k, v]) => config.tasks[k] !== v).map(([k]) => k);
  if (Deno.args.includes("--check")) {
    if (stale.length) {
      console.error(`Stale permission tasks in deno.json: ${stale.join(", ")}; run deno task permissions`);
      Deno.exit(1);
    }
  } else {
    Object.assign(config.tasks, wanted);
    await Deno.writeTextFile(path, `${JSON.stringify(config, null, 2)}\n`);
    console.log(stale.length ? `Updated: ${stale.join(", ")}` : "Already up to date");
  }
}
