// One set-up for the provider tests: a loopback fake upstream (tests/fakes/upstream.ts) serving
// routes or recorded bodies, the provider's config block pointing its base_url at the fake with
// test-sized timings, and the server answering over MCP. The server runs in this process
// (./in_process.ts) unless `spawn` asks for the real process: each provider keeps one spawned
// smoke test of its main tool, so the real entry point stays covered.
import { stringify } from "yaml";
import { FakeUpstream } from "../fakes/upstream.ts";
import type { Route } from "../fakes/upstream.ts";
import { startInProcess } from "./in_process.ts";
import type { InProcessOptions } from "./in_process.ts";
import { startStdio } from "./spawn.ts";
import type { SpawnOptions } from "./spawn.ts";
import { Client, StreamableHTTPClientTransport } from "./sdk_client.ts";

/** A config value: a scalar, a list or a nested block. */
export type SettingValue = string | number | boolean | null | SettingValue[] | {
  [key: string]: SettingValue;
};

/**
 * What every provider block starts from, so retries and timeouts never wait in tests: one
 * millisecond of backoff and a five-second deadline (a test's own `settings` override both).
 */
export const FAST_SETTINGS: Readonly<Record<string, SettingValue>> = { retry_backoff_ms: 1, timeout: 5 };

/** What the provider tests set up. */
export interface ProviderSetup extends Omit<InProcessOptions, "configYaml"> {
  /** The provider's id: its config block, and the one provider served unless `args` says otherwise. */
  provider: string;
  /** Routes for a new fake upstream (none: a fake that answers 404 to everything). */
  routes?: readonly Route[];
  /** A fake the test started itself (it stays the test's to close). */
  fake?: FakeUpstream;
  /** The provider's settings over FAST_SETTINGS and `base_url`. */
  settings?: Record<string, SettingValue>;
  /** A path after the fake's origin in `base_url` (e.g. the World Bank's `/api/v3/wds`). */
  basePath?: string;
  /** The config file's `server:` block. */
  server?: Record<string, SettingValue>;
  /**
   * Runs the real process (./spawn.ts) with these options, for a test whose point is the process:
   * the smoke test of a provider's entry point, permissions, signals, stdout.
   */
  spawn?: boolean | Omit<SpawnOptions, keyof InProcessOptions>;
}

/** The session a provider test talks to, in process or spawned. */
export interface ProviderSession {
  client: Client;
  home: string;
  /** What the server wrote; `child` is the spawned process (none in process). */
  transport: {
    readonly stdoutLines: string[];
    readonly stderr: string;
    readonly child?: Deno.ChildProcess | undefined;
  };
  /** The server's log (stderr) so far. */
  stderr(): string;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A provider's test set-up as a function of what one test adds; `settings` and `server` merge
 * key by key with the preset's.
 */
export function preset(base: ProviderSetup): (more?: Partial<ProviderSetup>) => ProviderSetup {
  return (more = {}) => {
    const server = base.server || more.server ? { server: { ...base.server, ...more.server } } : {};
    return { ...base, ...more, settings: { ...base.settings, ...more.settings }, ...server };
  };
}

/** The config YAML of `setup`: its `server` block and the provider's block pointing at `origin`. */
export function providerConfig(setup: ProviderSetup, origin: string): string {
  const block = { base_url: `${origin}${setup.basePath ?? ""}`, ...FAST_SETTINGS, ...setup.settings };
  return stringify({
    ...(setup.server ? { server: setup.server } : {}),
    providers: { [setup.provider]: block },
  });
}

/** Starts the server for `setup` with its config written, the fake already running at `origin`. */
export function startProvider(setup: ProviderSetup, origin: string): Promise<ProviderSession> {
  const {
    provider,
    routes: _routes,
    fake: _fake,
    settings: _settings,
    basePath: _basePath,
    server: _server,
    spawn,
    ...options
  } = setup;
  const start = {
    ...options,
    args: options.args ?? ["--providers", provider],
    configYaml: providerConfig(setup, origin),
  };
  if (!spawn) return startInProcess(start);
  return startStdio({ ...start, ...(spawn === true ? {} : spawn) });
}

/** A provider session with its fake upstream; disposing it closes both (a fake passed in stays open). */
export interface ProviderRun extends ProviderSession {
  fake: FakeUpstream;
}

/** Starts the fake (or takes `setup.fake`) and the server whose `setup.provider` talks to it. */
export async function openProvider(setup: ProviderSetup): Promise<ProviderRun> {
  const fake = setup.fake ?? FakeUpstream.start(setup.routes ?? []);
  const closeFake = async () => {
    if (!setup.fake) await fake.close();
  };
  let session: ProviderSession;
  try {
    session = await startProvider(setup, fake.origin);
  } catch (e) {
    await closeFake();
    throw e;
  }
  return {
    ...session,
    fake,
    async [Symbol.asyncDispose]() {
      try {
        await session[Symbol.asyncDispose]();
      } finally {
        await closeFake();
      }
    },
  };
}

/** Runs `fn` against a server whose `setup.provider` talks to a fake upstream, then closes both. */
export async function withProvider(
  setup: ProviderSetup,
  fn: (session: ProviderSession, fake: FakeUpstream) => Promise<void>,
): Promise<void> {
  await using run = await openProvider(setup);
  await fn(run, run.fake);
}

/**
 * Connects a new client to a spawned HTTP server's `/mcp` (each client is its own session);
 * `headers` go with every request (e.g. `X-Forwarded-For` behind a trusted proxy).
 */
export async function connectHttp(
  origin: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; sessionId: string }> {
  const client = new Client({ name: "opendata-mcp-tests", version: "0.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId ?? "" };
}
