// Writes deno.json's one permission set (`permissions.default`, used with `-P`) and the tasks that
// use it, from the provider registry, so the allowlist always matches what the code reads and
// reaches. `--check` fails when deno.json is stale.
import { knownEnvNames } from "../lib/config/parse.ts";
import { PROVIDERS } from "../lib/providers/registry.ts";
import { RELEASE_TARGETS } from "./distribution.ts";

/**
 * Hosts the HTTP transport may listen on, on any port (`--host`, `--port`): loopback and the
 * wildcard addresses, IPv4 and IPv6. Deno's net permission does not tell listening from
 * connecting, so these hosts are also reachable outbound; every URL from a caller or an
 * upstream still passes the SSRF guard, which refuses loopback and wildcard addresses. Outbound
 * to any other host stays limited to the providers' upstreams.
 */
export const LISTEN_HOSTS = ["127.0.0.1", "localhost", "0.0.0.0", "[::1]", "[::]"];

/**
 * Hosts a `REDIS_URL` may name besides the loopback ones: the Redis (or Valkey) service of
 * docker-compose.yml's `replicas` profile. Any other Redis host needs a wider `--allow-net`; the
 * server refuses it at start-up with that fix.
 */
export const SHARED_STATE_HOSTS = ["redis", "valkey"];

/** Variables read by dependencies at import or parse time (SDK SSE transport, yaml). */
export const DEPENDENCY_ENV = [
  "NO_DEPRECATION",
  "TRACE_DEPRECATION",
  "LOG_TOKENS",
  "LOG_STREAM",
  // @redis/client, read when it connects (only with REDIS_URL).
  "REDIS_DEBUG_MAINTENANCE",
  "REDIS_EMIT_DIAGNOSTICS",
];

/** The `net` list: every provider's default upstream hosts, the listen hosts, then the Redis hosts. */
export function netAllowlist(): string[] {
  return [...new Set([...PROVIDERS.flatMap((s) => s.allowNet), ...LISTEN_HOSTS, ...SHARED_STATE_HOSTS])];
}

/**
 * Prefixes of variables that belong to this server alone (its own and its providers' settings). The
 * `env` list grants each as `PREFIX*` (Deno matches a trailing `*`) instead of naming its 40-odd
 * variables one by one, which keeps deno.json under 8 KB. Namespaces other software uses too
 * (`MCP_`, `REDIS_`, `LOG_`, ...) stay listed name by name.
 */
export const OWNED_ENV_PREFIXES = ["OPENDATA_MCP_", "WORLDBANK_", "BOJ_", "FRED_", "WIKIPEDIA_"];

/** The variables the server and its dependencies read, each once. */
export function envNames(): string[] {
  return [...new Set([...knownEnvNames(PROVIDERS), ...DEPENDENCY_ENV])];
}

/**
 * The `env` list: the variables the server and its dependencies read, with those under an owned
 * prefix granted as `PREFIX*`.
 */
export function envAllowlist(): string[] {
  return [
    ...new Set(
      envNames().map((name) => {
        const prefix = OWNED_ENV_PREFIXES.find((p) => name.startsWith(p));
        return prefix ? `${prefix}*` : name;
      }),
    ),
  ];
}

/** Whether the `env` list grants `name` (by name, or by a `PREFIX*` entry, as Deno matches them). */
export function envGranted(name: string, list: readonly string[] = envAllowlist()): boolean {
  return list.some((entry) => entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : entry === name);
}

/** A Deno permission set as `deno.json` spells it. */
export interface PermissionSet {
  net: string[];
  env: string[];
  read: boolean;
  write: boolean;
}

/**
 * The one permission set. Network and environment are allowlists. File access is not: the
 * config and data folders live under the user's home, whose path differs per OS and per user,
 * and permission sets hold literal paths (relative ones resolve against deno.json's folder, and
 * `deno compile` embeds them as paths of the build machine). Files the server writes are
 * confined by its own path checks (the data folder, FRED's storage root), as DESIGN.md says.
 */
export function permissionSet(): PermissionSet {
  return { net: netAllowlist(), env: envAllowlist(), read: true, write: true };
}

/**
 * V8 flags of `deno task start`, `dev` and the release compile: a young generation of at most 2 MiB
 * a half, so a resident stdio server stays small after many calls, and an old generation capped at
 * 1 GiB (HTTP_V8_FLAGS below serve HTTP). The cap is what keeps a server under load small: V8 lets
 * the heap grow by a factor that shrinks with its maximum size (up to 4x the live data on a machine
 * with much memory), and a maximum of 1 GiB
 * keeps that factor near 1.5 without the slower code `--optimize-for-size` costs. 1 GiB is far
 * above what the server holds (the response cache is 64 MiB by default; a larger one is warned
 * about at start-up). docs/BENCHMARKS.md has the figures with and without them.
 */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=2,--max-old-space-size=1024";

/**
 * V8 flags of `deno task start:http` and the container, which serve HTTP: the same 1 GiB cap as
 * stdio, and V8's own young generation (up to 16 MiB a half, grown as requests keep it busy).
 * Under concurrent requests a 2 MiB young generation fills several times while one request is in
 * flight, so what the request holds is promoted and collected again as old; any young size set
 * outright (8 or 16 MiB tried) left a call's median latency about 1.4x the SDK server's, against
 * 1.1-1.2x with V8's sizing. Under 200 sessions x 50 calls the peak RSS stays under the 250 MiB
 * bound (a 2 GiB cap, growing 4x, or the heap grown 3x after a full collection, did not).
 * docs/ARCHITECTURE.md ("Memory and V8 flags") has the figures.
 */
export const HTTP_V8_FLAGS = "--v8-flags=--max-old-space-size=1024";

/**
 * The environment `deno task start` sets for the server (the container sets it with `ENV`).
 * `MALLOC_ARENA_MAX=1`: glibc gives every thread that allocates an arena of its own, and V8's
 * background compiler threads (TurboFan) kept freed memory resident. With one arena, one Streamable
 * HTTP session of 10,000 calls on a first start (empty Deno cache) ended at 97 MiB instead of
 * 111-114 MiB, and a few MiB lower with a warm cache; 50 concurrent sessions made as many calls a
 * second (docs/BENCHMARKS.md, "Start-up as users start it"). glibc reads it when the process starts:
 * not from main.ts.
 */
export const START_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" };

/**
 * Deno.serve's request signals abort only when a client goes away, not after every answer sent
 * (the behaviour Deno is moving to): the legacy one made a DOMException for every request whose
 * signal the SDK reads, and wrote a warning that is not a JSON log line to stderr. Nothing here
 * waits for a request's signal to learn that its answer went out (the connection's `completed`
 * promise says so).
 */
export const SERVE_FLAG = "--unstable-no-legacy-abort";

/**
 * What a start task runs: the sources, so no way of starting from a checkout runs code older than
 * lib/ (the start bundle is built where it ships: the image and the release compile).
 */
const START_ENTRY = "main.ts";

/**
 * A start task split into the variables it sets (`NAME=value` words before `deno`), the arguments
 * after `deno run` (the entry included, last), its entry and the server's arguments after the
 * entry (`serve --transport http` for start:http); undefined when it is not `deno run ... main.ts`.
 */
export function splitStartTask(
  task: string,
): { env: Record<string, string>; args: string[]; entry: string; after: string[] } | undefined {
  const words = task.split(" ");
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=\S*$/.test(words[0] ?? "")) {
    const [name, ...value] = words.shift()!.split("=");
    env[name!] = value.join("=");
  }
  const at = words.indexOf(START_ENTRY);
  if (words[0] !== "deno" || words[1] !== "run" || at === -1) return undefined;
  return { env, args: words.slice(2, at + 1), entry: START_ENTRY, after: words.slice(at + 1) };
}

/** The tasks that run or compile the server, all with `-P` (the default set) and no prompts. */
export function permissionTasks(): Record<string, string> {
  // -q keeps Deno's own notices (the permission set is "experimental") out of the JSON-lines log;
  // a manual node_modules/ is not checked against the lock on every start (deno install fills it).
  const env = Object.entries(START_ENV).map(([k, v]) => `${k}=${v} `).join("");
  const common = `-q --unstable-lazy-dynamic-imports ${SERVE_FLAG} -P --no-prompt --node-modules-dir=manual`;
  const flags = `${common} ${V8_FLAGS}`;
  const tasks: Record<string, string> = {
    start: `${env}deno run ${flags} ${START_ENTRY}`,
    // The same server serving HTTP, with the V8 flags of a shared server (HTTP_V8_FLAGS).
    "start:http": `${env}deno run ${common} ${HTTP_V8_FLAGS} ${START_ENTRY} serve --transport http`,
    // The same start, restarted when a source changes.
    dev: `${env}deno run --watch ${flags} ${START_ENTRY}`,
  };
  // The release compile (tools/compile.ts): builds the start bundle into bundle/, then `deno compile
  // -P --no-prompt` of it with the V8 flags, npm packages from the global cache, only those the
  // bundle reaches and only their run-time files.
  for (const { target } of RELEASE_TARGETS) {
    tasks[`compile:${target}`] =
      `deno run --allow-read --allow-write=bundle,bundle.partial --allow-run --allow-env tools/compile.ts ${target}`;
  }
  return tasks;
}

if (import.meta.main) {
  const path = new URL("../deno.json", import.meta.url);
  const config = JSON.parse(await Deno.readTextFile(path));
  const wantedTasks = permissionTasks();
  const wantedSet = permissionSet();
  const stale = Object.entries(wantedTasks).filter(([k, v]) => config.tasks[k] !== v).map(([k]) =>
    `tasks.${k}`
  );
  if (JSON.stringify(config.permissions) !== JSON.stringify({ default: wantedSet })) {
    stale.push("permissions");
  }
  if (Deno.args.includes("--check")) {
    if (stale.length) {
      console.error(`Stale in deno.json: ${stale.join(", ")}; run deno task permissions`);
      Deno.exit(1);
    }
  } else {
    Object.assign(config.tasks, wantedTasks);
    // `permissions` goes right after `tasks`, where readers look for what the tasks use.
    const { permissions: _old, ...rest } = config;
    const ordered: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(rest)) {
      ordered[key] = value;
      if (key === "tasks") ordered["permissions"] = { default: wantedSet };
    }
    await Deno.writeTextFile(path, `${JSON.stringify(ordered, null, 2)}\n`);
    console.log(stale.length ? `Updated: ${stale.join(", ")}` : "Already up to date");
  }
}
