import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { createApp } from "./app.ts";
import type { App } from "./app.ts";
import {
  configSecrets,
  OTHER_ENV,
  parseConfig,
  redactConfig,
  SERVER_ENV,
  SERVER_FLAGS,
} from "./config/parse.ts";
import type { Config } from "./config/parse.ts";
import { configCandidates, userDataDir } from "./config/paths.ts";
import { loadYaml } from "./config/yaml.ts";
import type { ProviderSpec } from "./config/provider_spec.ts";
import { ConfigError, UsageError } from "./errors.ts";
import { Logger } from "./log.ts";
import { SecretMasker } from "./secrets.ts";
import type { LogLevel } from "./log.ts";
import { firstSentence } from "./mcp/shaping.ts";
import { callTool, describeTool } from "./mcp/server.ts";
import type { McpExtra } from "./mcp/provider.ts";
import { isInputRequiredResult } from "./mcp/sdk.ts";
import { CALL_TOOL, callInput, callTarget } from "./mcp/core_tools.ts";
import { serveStdio } from "./mcp/stdio.ts";
import type { StdioStreams } from "./mcp/stdio.ts";
import { SERVER_NAME, VERSION } from "./version.ts";
import { ResponseCache } from "./http/cache.ts";

/** What the CLI needs from the process; `main.ts` supplies the real one, tests a fake. */
export interface CliIo {
  env: Record<string, string | undefined>;
  /** `linux`, `darwin`, `windows`, ... */
  os: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** The file's text, or undefined when it does not exist. */
  readTextFile(path: string): string | undefined;
  /**
   * The working directory's `config/apis.yaml`, looked for when running from source; compiled
   * binaries leave it out (see {@linkcode configCandidates}).
   */
  projectConfig?: string;
  /** Whether the process may connect to `host` (`host[:port]`). */
  isNetAllowed(host: string): boolean;
  /** Aborted on SIGINT/SIGTERM: servers shut down gracefully. */
  shutdown: AbortSignal;
  /** The process's V8 heap limit in MiB (asked only when the response cache is large). */
  heapLimitMiB?(): Promise<number>;
  /**
   * Told when the process starts to serve HTTP: from then on its log may be written
   * asynchronously, so a line may reach stderr after the response it describes.
   */
  serving?(): void;
  /** Where stdio's protocol messages come from and go (default the process's stdin and stdout). */
  stdio?: StdioStreams;
}

/** Options of the command itself; the server's own flags come from SERVER_FLAGS so none is offered but refused. */
const COMMAND_OPTIONS = {
  config: { type: "string" },
  providers: { type: "string" },
  tools: { type: "string" },
  toolsets: { type: "string" },
  "exclude-tools": { type: "string" },
  json: { type: "boolean" },
  args: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
} as const;

const GLOBAL_OPTIONS: NonNullable<ParseArgsConfig["options"]> = {
  ...COMMAND_OPTIONS,
  ...Object.fromEntries(
    SERVER_FLAGS.map((f) => [f.name, { type: f.kind === "bool" ? "boolean" as const : "string" as const }]),
  ),
};

/**
 * Runs the `opendata-mcp` command line and resolves to the exit code: 0 ok, 1 runtime failure
 * or error result, 2 usage or configuration error.
 */
export async function run(
  argv: readonly string[],
  io: CliIo,
  specs: readonly ProviderSpec[],
): Promise<number> {
  try {
    return await dispatch(argv, io, specs);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`opendata-mcp: ${e.message}\nRun "opendata-mcp --help" for usage.`);
      return 2;
    }
    if (e instanceof ConfigError) {
      io.stderr(`opendata-mcp: configuration error at "${e.path}": ${e.message}`);
      return 2;
    }
    io.stderr(`opendata-mcp: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

async function dispatch(argv: readonly string[], io: CliIo, specs: readonly ProviderSpec[]): Promise<number> {
  const options: NonNullable<ParseArgsConfig["options"]> = { ...GLOBAL_OPTIONS };
  for (const spec of specs) {
    for (const flag of spec.flags) options[flag.name] = { type: "string" };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message.replace(/\. To specify.*$/s, "") : String(e));
  }
  const flags = parsed.values as Record<string, string | boolean | undefined>;
  const [command = "serve", ...rest] = parsed.positionals;

  if (flags["version"]) {
    io.stdout(`${SERVER_NAME} ${VERSION}`);
    return 0;
  }
  if (flags["help"]) {
    io.stdout(helpText(specs));
    return 0;
  }

  switch (command) {
    case "serve": {
      expectArgs(rest, 0, "serve");
      const { app, logger } = await boot(flags, io, specs, true);
      let metricsListener: { close(): Promise<void> } | undefined;
      try {
        // The counts are kept only when something serves them (boot): then their module is loaded.
        const served = app.config.server.metrics_port !== null
          ? (await import("./metrics/mod.ts")).metrics
          : undefined;
        if (served) {
          const { serveMetrics } = await import("./metrics/serve.ts");
          metricsListener = serveMetrics(served, app.config.server, logger, io.isNetAllowed);
        }
        if (app.config.server.transport === "http") {
          io.serving?.();
          const { serveHttp } = await import("./mcp/http/mod.ts");
          await serveHttp(app, { logger, shutdown: io.shutdown, isNetAllowed: io.isNetAllowed });
        } else {
          await serveStdio(app, {
            logger,
            shutdown: io.shutdown,
            ...(io.stdio ? { streams: io.stdio } : {}),
          });
        }
      } finally {
        await metricsListener?.close();
        await app.close();
      }
      return 0;
    }
    case "tools": {
      expectArgs(rest, 0, "tools");
      const { app } = await boot(flags, io, specs);
      try {
        io.stdout(
          flags["json"]
            ? JSON.stringify(app.tools.map(describeTool), null, 2)
            : app.tools.map((t) => `${t.name}\n  ${firstSentence(t.description)}`).join("\n") ||
              "No tools are served with this configuration.",
        );
      } finally {
        await app.close();
      }
      return 0;
    }
    case "call":
      return await callCommand(rest, flags, io, specs);
    case "config": {
      if (rest[0] !== "check" || rest.length !== 1) {
        throw new UsageError(`Unknown config command "${rest.join(" ")}"; the only one is "config check"`);
      }
      const { config } = await loadConfig(flags, io, specs);
      for (const w of config.warnings) io.stderr(`warning: ${w}`);
      io.stdout(JSON.stringify(redactConfig(config, specs), null, 2));
      return 0;
    }
    default:
      throw new UsageError(`Unknown command "${command}"; commands: serve, tools, call, config check`);
  }
}

async function callCommand(
  rest: string[],
  flags: Record<string, string | boolean | undefined>,
  io: CliIo,
  specs: readonly ProviderSpec[],
): Promise<number> {
  const [name] = rest;
  if (!name || rest.length > 1) {
    throw new UsageError('Usage: opendata-mcp call TOOL --args \'{"key": "value"}\'');
  }
  let args: unknown = {};
  if (typeof flags["args"] === "string") {
    try {
      args = JSON.parse(flags["args"]);
    } catch (e) {
      throw new UsageError(`Cannot parse --args as JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const { app, logger } = await boot(flags, io, specs);
  try {
    let tool = [...app.tools, ...app.allTools].find((t) => t.name === name);
    if (!tool) {
      throw new UsageError(
        `Unknown tool "${name}"; tools: ${app.allTools.map((t) => t.name).join(", ") || "(none)"}`,
      );
    }
    if (tool.name === CALL_TOOL) {
      // opendata_call from the command line: run the target as the server would.
      const target = callTarget(
        callInput().parse(args),
        new Map(app.allTools.map((t) => [t.name, t])),
        app.catalog.unavailable,
      );
      tool = target.tool;
      args = target.arguments;
    }
    const controller = new AbortController();
    io.shutdown.addEventListener("abort", () => controller.abort(), { once: true });
    const noClient = () => Promise.reject(new Error("No MCP client is connected to answer this request"));
    const extra = {
      mcpReq: {
        id: 1,
        method: "tools/call",
        signal: controller.signal,
        requestState: () => undefined,
        send: noClient,
        notify: () => Promise.resolve(),
        log: () => Promise.resolve(),
        elicitInput: noClient,
        requestSampling: noClient,
      },
    } as unknown as McpExtra;
    const outcome = await callTool(tool, args, extra, {
      logger,
      characterLimit: app.config.server.character_limit,
      callTimeoutMs: Math.round(app.config.server.call_timeout * 1000),
      clock: app.http.clock,
      secrets: new SecretMasker(configSecrets(app.config, specs)),
    });
    if (isInputRequiredResult(outcome)) {
      io.stderr(
        `The tool "${name}" asks the client for input, which needs an MCP client: call it over stdio or HTTP`,
      );
      return 1;
    }
    const result = outcome;
    if (flags["json"]) {
      io.stdout(JSON.stringify(result, null, 2));
    } else {
      io.stdout(
        result.content.map((c) => (c.type === "text" ? c.text : `[${c.type} content]`)).join("\n\n"),
      );
    }
    return result.isError ? 1 : 0;
  } finally {
    await app.close();
  }
}

async function loadConfig(
  flags: Record<string, string | boolean | undefined>,
  io: CliIo,
  specs: readonly ProviderSpec[],
): Promise<{ config: Config }> {
  let path: string | undefined;
  let text: string | undefined;
  const candidates = configCandidates({
    flag: typeof flags["config"] === "string" ? flags["config"] : undefined,
    env: io.env,
    os: io.os,
    projectConfig: io.projectConfig,
  });
  for (const candidate of candidates) {
    text = io.readTextFile(candidate.path);
    if (text !== undefined) {
      path = candidate.path;
      break;
    }
    if (candidate.required) {
      throw new ConfigError(
        candidate.origin,
        `Config file "${candidate.path}" (from ${candidate.origin}) does not exist`,
      );
    }
  }
  if (text !== undefined) await loadYaml(text);
  const config = parseConfig(
    {
      flags,
      env: io.env,
      ...(text === undefined ? {} : { fileText: text }),
      ...(path ? { filePath: path } : {}),
    },
    specs,
  );
  return { config };
}

async function boot(
  flags: Record<string, string | boolean | undefined>,
  io: CliIo,
  specs: readonly ProviderSpec[],
  serving = false,
): Promise<{ app: App; logger: Logger; dataDir: string }> {
  const { config } = await loadConfig(flags, io, specs);
  const logger = new Logger({
    level: config.server.log_level as LogLevel,
    write: config.server.log_format === "text" ? (line) => io.stderr(textLine(line)) : io.stderr,
    secrets: configSecrets(config, specs),
  });
  logger.info("configuration loaded", {
    config_file: config.file ?? "(none: built-in defaults)",
    providers: config.enabledProviders,
  });
  for (const w of config.warnings) logger.warn(w);
  await warnOfHeap(config.server.cache_max_mb, io, logger);
  const dataDir = userDataDir(io.env, io.os) ?? "./opendata-mcp-data";
  const server = config.server;
  // Counting starts before the providers exist (their job managers register), and only when
  // something serves the counts: /metrics over HTTP, or a metrics listener.
  const counted = serving && server.metrics && (server.transport === "http" || server.metrics_port !== null)
    ? (await import("./metrics/mod.ts")).enableMetrics()
    : undefined;
  if (serving && await tracingAsked(io.env)) {
    await (await import("./metrics/tracing.ts")).enableTracing();
    logger.info(
      "OpenTelemetry traces on: a span per tool call and per upstream attempt, exported by Deno (OTLP)",
    );
  }
  const app = await createApp(config, specs, { logger, dataDir, isNetAllowed: io.isNetAllowed });
  if (counted) {
    const cache = app.http.cache;
    counted.cacheSize = () =>
      cache instanceof ResponseCache ? { bytes: cache.bytes, entries: cache.size } : undefined;
    counted.breakers = () => app.http.breakers();
  }
  return { app, logger, dataDir: config.server.data_dir ?? dataDir };
}

/**
 * Whether the environment asks for traces (lib/metrics/tracing.ts checks how): the module is
 * loaded only when OTEL_DENO is set at all.
 */
async function tracingAsked(env: Record<string, string | undefined>): Promise<boolean> {
  if (env["OTEL_DENO"] === undefined) return false;
  return (await import("./metrics/tracing.ts")).checkTracingEnv(env);
}

/**
 * The response cache lives in the V8 heap, which the run tasks cap (tools/permissions.ts):
 * a cache that could take more than a quarter of it is said at start-up, not found out under load.
 */
async function warnOfHeap(cacheMiB: number, io: CliIo, logger: Logger): Promise<void> {
  if (cacheMiB <= 128 || !io.heapLimitMiB) return;
  const limit = Math.round(await io.heapLimitMiB());
  if (cacheMiB * 4 <= limit) return;
  logger.warn(
    `server.cache_max_mb is ${cacheMiB} MiB, more than a quarter of this process's V8 heap limit ` +
      `(${limit} MiB): under load the process may run out of memory. Lower cache_max_mb, or, running from ` +
      `source, raise the limit with --v8-flags=--max-old-space-size=${
        cacheMiB * 4
      } on the deno run command ` +
      `(a compiled binary keeps the limit it was built with)`,
  );
}

function textLine(json: string): string {
  try {
    const { time, level, msg, ...rest } = JSON.parse(json) as Record<string, unknown>;
    const extras = Object.entries(rest).map(([k, v]) =>
      `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`
    );
    return [time, String(level).toUpperCase(), msg, ...extras].join(" ");
  } catch {
    return json;
  }
}

function expectArgs(rest: readonly string[], n: number, command: string): void {
  if (rest.length > n) throw new UsageError(`Unexpected argument "${rest[n]}" after "${command}"`);
}

/** The `--help` text, generated from the same tables the parser uses. */
export function helpText(specs: readonly ProviderSpec[]): string {
  const pad = (s: string) => s.padEnd(30);
  const lines = [
    `${SERVER_NAME} ${VERSION}: an MCP server for public open data`,
    "",
    "Usage:",
    "  opendata-mcp [serve] [options]        Serve MCP (stdio by default; --transport http for HTTP)",
    "  opendata-mcp tools [--json]           List the tools that would be served",
    "  opendata-mcp call TOOL --args JSON    Call one tool and print its result (--json: whole result)",
    "  opendata-mcp config check             Validate the configuration and print it, secrets masked",
    "",
    "Options (before or after the command):",
    `  ${pad("--config FILE")}Config file (else OPENDATA_MCP_CONFIG, else ./config/apis.yaml from source,`,
    `  ${pad("")}else the per-user file)`,
    `  ${pad("--providers a,b")}Providers to serve`,
    `  ${pad("--toolsets a,b")}List these toolsets' tools besides the core ones (all = every toolset)`,
    `  ${pad("--tools a,b")}Serve only these tools (* wildcards)`,
    `  ${pad("--exclude-tools a,b")}Do not serve these tools (* wildcards)`,
    ...SERVER_FLAGS.map((f) => `  ${pad(`--${f.name}${f.kind === "bool" ? "" : " VALUE"}`)}${f.description}`),
    `  ${pad("-h, --help")}This text`,
    `  ${pad("-V, --version")}The version`,
    "",
    "Provider options:",
    ...specs.flatMap((s) => s.flags.map((f) => `  ${pad(`--${f.name} VALUE`)}${f.description}`)),
    "",
    "Providers:",
    ...specs.map((s) =>
      `  ${pad(s.id)}${s.description}${s.defaultEnabled ? "" : " [not enabled by default]"}`
    ),
    "",
    "Environment variables:",
    ...[...SERVER_ENV, ...OTHER_ENV, ...specs.flatMap((s) => s.env)].map((e) =>
      `  ${pad(e.name)}${e.description}`
    ),
    "",
    "Exit codes: 0 ok, 1 runtime failure or error result, 2 usage or configuration error.",
  ];
  return lines.join("\n");
}
