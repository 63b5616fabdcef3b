import type { Clock, Random } from "./clock.ts";
import { systemClock } from "./clock.ts";
import { type Config, configSecrets } from "./config/parse.ts";
import { SecretMasker } from "./secrets.ts";
import type { ProviderSpec } from "./config/provider_spec.ts";
import { ConfigError } from "./errors.ts";
import { HttpRuntime, loadHttpClient } from "./http/runtime.ts";
import { userAgent } from "./version.ts";
import type { Logger } from "./log.ts";

export { quotaLedger } from "./app_stores.ts";
import type { Provider, ProviderContext, ProviderModule, ToolDefinition } from "./mcp/provider.ts";
import type { CommonSettings } from "./config/provider_spec.ts";
import { lazyProvider } from "./mcp/lazy.ts";
import { selectListing } from "./mcp/listing.ts";
import type { ProviderListing } from "./mcp/listing.ts";
import { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from "./mcp/core_tools.ts";
import { fileReader, toolsetSurfaces } from "./mcp/surfaces.ts";
import { collectTools, createServer, type CreateServerOptions, type RequestStateSeal } from "./mcp/server.ts";
import { ToolCatalog, UnknownToolsetError } from "./mcp/toolsets.ts";
import { createRequestStateCodec } from "./mcp/sdk.ts";
import { DeferredExports } from "./output/deferred_exports.ts";
import { citationStore, citedHosts, quotaLedger, storageUpkeep } from "./app_stores.ts";
import type { CitationStore } from "./output/citations.ts";
import { lazyTaskJobs } from "./mcp/tasks/lazy_jobs.ts";
import type { McpServer } from "./mcp/sdk.ts";
import type { SharedState } from "./redis/mod.ts";
import type { NewServerOptions, ServedApp } from "./mcp/served_app.ts";

export type { NewServerOptions } from "./mcp/served_app.ts";

/** Options for {@linkcode createApp}. */
export interface AppOptions {
  logger: Logger;
  /** Per-user data folder, used when the config names none. */
  dataDir: string;
  clock?: Clock;
  random?: Random;
  fetch?: typeof fetch;
  /** Whether the process may connect to `host` (the `--allow-net` check); default: yes. */
  isNetAllowed?: (host: string) => boolean;
  /**
   * Whether a provider's module (a URL) is there, checked at start-up for providers loaded on
   * first use; default: a `file:` URL names an existing file.
   */
  moduleExists?: (url: string) => boolean;
}

/**
 * The running server's shared parts: providers, HTTP runtime, and a factory of MCP servers. The
 * transports take it as a {@linkcode ServedApp} (lib/mcp/served_app.ts).
 */
export interface App extends ServedApp {
  config: Config;
  providers: Provider[];
  http: HttpRuntime;
  /** The toolsets of the enabled providers, and the tools left out for want of a key. */
  catalog: ToolCatalog;
  /** The tools listed by default: the core tools and those of the configured toolsets. */
  /** State shared with other replicas (Redis), when `REDIS_URL` is set. */
  shared?: SharedState;
  // deno-lint-ignore no-explicit-any
  tools: ToolDefinition<any, any>[];
  /** Every tool of the enabled providers: callable (tools/call, opendata_call) whatever is listed. */
  // deno-lint-ignore no-explicit-any
  allTools: ToolDefinition<any, any>[];
  /** The toolsets configured for listing (the default of every server instance). */
  defaultToolsets: ReadonlySet<string>;
  /**
   * A new MCP server over the shared providers (one per connection, HTTP session or 2026-07-28
   * request); `owner` is who calls over HTTP (see `ToolCallContext.owner`), `toolsets` which
   * toolsets it lists (default: the configured ones).
   */
  newServer(options?: NewServerOptions): McpServer;
  /** Closes every provider. */
  close(): Promise<void>;
}

/**
 * Loads and creates the enabled providers, applies tool filters and checks the allowlist. A
 * provider whose module cannot be loaded is skipped with a warning; `App.config` then lists only
 * the providers served.
 */
export async function createApp(
  config: Config,
  specs: readonly ProviderSpec[],
  options: AppOptions,
): Promise<App> {
  const { logger } = options;
  const enabledSpecs = config.enabledProviders.map((id) => specs.find((s) => s.id === id)!);
  checkAllowlist(config, enabledSpecs, options.isNetAllowed ?? (() => true));
  const shared = await openShared(config, options);
  const http = httpRuntime(config, options, shared);
  const citations = citationStore(http, shared, citedHosts(config, enabledSpecs));
  const dataDir = config.server.data_dir ?? options.dataDir;
  const quota = quotaLedger(config.server);
  const secrets = new SecretMasker(configSecrets(config, specs));
  const upkeep = storageUpkeep(config, enabledSpecs, { dataDir, quota, clock: http.clock, logger });
  const context = (settings: ProviderSettings, creationLogger: Logger): ProviderContext<CommonSettings> => ({
    settings,
    http,
    logger: creationLogger,
    clock: http.clock,
    limits: { characterLimit: config.server.character_limit },
    dataDir,
    quota,
    secrets,
    ...(shared ? { sharedJobs: shared.jobs } : {}),
  });
  const { providers, skipped } = await loadProviders(enabledSpecs, {
    config,
    logger,
    dataDir,
    shared,
    moduleExists: options.moduleExists ?? fileModuleExists,
    context,
  });
  const filtered = filterTools(providers, config.tools, logger);
  const allTools = collectTools(filtered);
  const catalog = new ToolCatalog(filtered);
  const defaultToolsets = configuredToolsets(catalog, config);
  warnUnavailable(catalog, logger);
  // Its code (file writing, storage) loads with the first file written, listed or read.
  const exports = new DeferredExports({
    dataDir,
    clock: http.clock,
    maxMb: config.server.export_max_mb,
    quota,
    secrets,
  });
  const reader = fileReader(filtered, exports);
  const surfaceOf = toolsetSurfaces({
    catalog,
    providers: filtered,
    reader,
    searchTimeoutMs: Math.round(config.server.search_timeout * 1000),
    clock: http.clock,
  });
  const tools = collectTools(surfaceOf(defaultToolsets));
  // Tool calls run as tasks (docs/MCP.md, "Tasks"), on the job machinery every replica shares.
  const tasks = lazyTaskJobs({
    clock: http.clock,
    logger,
    quota,
    ...(shared ? { shared: shared.jobs, relay: shared.taskRelay } : {}),
  });
  const serverOptions = newServerOptions(config, {
    logger,
    http,
    exports,
    citations,
    callable: callableTools(filtered, reader),
    requestState: requestStateSeal(config.server.request_state_key),
    instructions: instructions(filtered, specs),
  });
  return {
    config: servedConfig(config, providers, skipped),
    providers: filtered,
    http,
    catalog,
    ...(shared ? { shared } : {}),
    tools,
    allTools,
    defaultToolsets,
    newServer: (caller = {}) =>
      createServer(surfaceOf(caller.toolsets ?? defaultToolsets), {
        ...serverOptions,
        secrets,
        tasks: tasks.engine,
        ...(caller.owner === undefined ? {} : { owner: caller.owner }),
        ...(caller.client === undefined ? {} : { client: caller.client }),
        ...(caller.toolsOnly ? { toolsOnly: true } : {}),
      }),
    async close() {
      upkeep.close();
      for (const p of providers) await p.close?.().catch(() => {});
      await tasks.close();
      await shared?.close();
    },
  };
}

/** Opens the state replicas share when REDIS_URL is set: one process without it loads nothing more. */
async function openShared(config: Config, options: AppOptions): Promise<SharedState | undefined> {
  if (!config.server.redis_url) return undefined;
  return await (await import("./redis/mod.ts")).openSharedState(config.server, {
    logger: options.logger,
    ...(options.isNetAllowed ? { isNetAllowed: options.isNetAllowed } : {}),
  });
}

/** The HTTP runtime every provider's client is made from, on the shared stores where there are. */
function httpRuntime(config: Config, options: AppOptions, shared: SharedState | undefined): HttpRuntime {
  return new HttpRuntime({
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    logger: options.logger,
    cacheMaxBytes: Math.round(config.server.cache_max_mb * 1024 * 1024),
    userAgent: userAgent(config.server.operator_contact),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(shared
      ? { cacheStore: shared.cacheStore, rateStore: shared.rateStore, breakerStore: shared.breakerStore }
      : {}),
  });
}

/** One provider's validated config block. */
type ProviderSettings = Config["providers"][string];

/** What loading the enabled providers needs. */
interface ProviderLoading {
  config: Config;
  logger: Logger;
  dataDir: string;
  shared: SharedState | undefined;
  moduleExists: (url: string) => boolean;
  /** What a provider is created with, logging to `creationLogger`. */
  context: (settings: ProviderSettings, creationLogger: Logger) => ProviderContext<CommonSettings>;
}

/**
 * The enabled providers, in order, and the warnings of those skipped: a provider whose module is
 * missing (or does not load) is skipped with a warning naming it; the others still serve.
 */
async function loadProviders(
  specs: readonly ProviderSpec[],
  loading: ProviderLoading,
): Promise<{ providers: Provider[]; skipped: string[] }> {
  const providers: Provider[] = [];
  const skipped: string[] = [];
  for (const spec of specs) {
    const loaded = await loadProvider(spec, loading);
    if ("skipped" in loaded) skipped.push(loaded.skipped);
    else providers.push(loaded.provider);
  }
  return { providers, skipped };
}

/** A provider's module, with the HTTP client's code that creating the provider needs (lib/http/runtime.ts). */
async function providerModule(spec: ProviderSpec): Promise<ProviderModule<CommonSettings>> {
  const [module] = await Promise.all([spec.load(), loadHttpClient()]);
  return module;
}

/** The warning of a provider whose module could not be loaded, logged as it is returned. */
function skip(spec: ProviderSpec, reason: string, logger: Logger): { skipped: string } {
  const message = `Provider "${spec.id}" was skipped: its module could not be loaded (${reason})`;
  logger.warn(message, { provider: spec.id });
  return { skipped: message };
}

/**
 * One enabled provider: from its generated listings, loaded on first use, where its
 * configuration selects one; else created now.
 */
async function loadProvider(
  spec: ProviderSpec,
  loading: ProviderLoading,
): Promise<{ provider: Provider } | { skipped: string }> {
  const { config, logger } = loading;
  const settings = config.providers[spec.id]!;
  const providerLogger = logger.child({ provider: spec.id });
  // With shared state a provider may have work to take over from other replicas (jobs): it
  // is created at start-up, as it is when its configuration differs from its listings'.
  const listing = spec.listings && !loading.shared
    ? selectListing(spec.listings, settings as unknown as Record<string, unknown>, {
      $character_limit: config.server.character_limit,
      $data_dir: loading.dataDir,
    })
    : undefined;
  if (listing && spec.listings) return listedProvider(spec, listing, loading);
  let module;
  try {
    module = await providerModule(spec);
  } catch (e) {
    return skip(spec, e instanceof Error ? e.message : String(e), logger);
  }
  for (const w of spec.check?.(settings) ?? []) providerLogger.warn(w);
  return { provider: await module.createProvider(loading.context(settings, providerLogger)) };
}

/** A provider served from its listings, its code loaded (and the load logged) on first use. */
function listedProvider(
  spec: ProviderSpec,
  listing: ProviderListing,
  loading: ProviderLoading,
): { provider: Provider } | { skipped: string } {
  const { logger } = loading;
  const module = spec.listings!.module;
  if (!loading.moduleExists(module)) return skip(spec, `Module not found "${module}"`, logger);
  const settings = loading.config.providers[spec.id]!;
  const providerLogger = logger.child({ provider: spec.id });
  for (const w of spec.check?.(settings) ?? []) providerLogger.warn(w);
  for (const w of listing.warnings) providerLogger.warn(w);
  // Its creation logs these warnings again: the start-up log already gave them.
  const said = new Set(listing.warnings);
  return {
    provider: lazyProvider(spec.id, listing, async () => {
      const started = performance.now();
      try {
        const creationLogger = logger.child({ provider: spec.id }, said);
        const provider = await (await providerModule(spec)).createProvider(
          loading.context(settings, creationLogger),
        );
        providerLogger.info("provider loaded", { duration_ms: Math.round(performance.now() - started) });
        return provider;
      } catch (e) {
        providerLogger.error("provider failed to load", {
          error: e instanceof Error ? e.message : String(e),
        });
        throw e;
      }
    }),
  };
}

/** The toolsets listed by default, as configured; an unknown one is a configuration error. */
function configuredToolsets(catalog: ToolCatalog, config: Config): Set<string> {
  try {
    return catalog.resolve(config.toolsets);
  } catch (e) {
    if (!(e instanceof UnknownToolsetError)) throw e;
    throw new ConfigError("toolsets", `${e.message} (from ${config.toolsetsFrom})`);
  }
}

/** Says at start-up which tools are not served for want of a key, and how to serve them. */
function warnUnavailable(catalog: ToolCatalog, logger: Logger): void {
  for (const u of catalog.unavailable) {
    logger.warn(`Not served: ${u.tools.join(", ")} (toolset ${u.toolset}): ${u.reason}`, {
      provider: u.provider,
    });
  }
}

/** Every tool of the enabled providers by name, with opendata_read: callable whatever is listed. */
function callableTools(
  providers: readonly Provider[],
  // deno-lint-ignore no-explicit-any
  reader: ToolDefinition<any, any>,
): Map<string, CallableTool> {
  return new Map<string, CallableTool>([
    ...providers.flatMap((p) => p.tools.map((t) => [t.name, { tool: t, provider: p.id }] as const)),
    [reader.name, { tool: reader, provider: "core" }],
  ]);
}

/** A tool callable by name, with the provider whose files it writes. */
// deno-lint-ignore no-explicit-any
type CallableTool = { tool: ToolDefinition<any, any>; provider: string };

/** The parts of the app every server instance shares. */
interface ServerParts {
  logger: Logger;
  http: HttpRuntime;
  exports: DeferredExports;
  citations: CitationStore;
  callable: ReadonlyMap<string, CallableTool>;
  requestState: RequestStateSeal;
  instructions: string;
}

/** What every server instance is made with (the caller's owner and client aside). */
function newServerOptions(config: Config, parts: ServerParts): CreateServerOptions {
  return {
    logger: parts.logger,
    characterLimit: config.server.character_limit,
    structuredContent: config.server.structured_content === "on",
    resourceLinks: config.server.resource_links === "on",
    name: config.server.name,
    version: config.server.version,
    instructions: parts.instructions,
    callTimeoutMs: Math.round(config.server.call_timeout * 1000),
    clock: parts.http.clock,
    requestState: parts.requestState,
    exports: parts.exports,
    callable: parts.callable,
    views: { tilesUrl: config.server.map_tiles_url },
    userAgent: parts.http.userAgent,
    citations: parts.citations,
  };
}

/** The configuration as served: without the providers skipped, whose warnings it carries. */
function servedConfig(config: Config, providers: readonly Provider[], skipped: readonly string[]): Config {
  if (skipped.length === 0) return config;
  return {
    ...config,
    enabledProviders: providers.map((p) => p.id),
    warnings: [...config.warnings, ...skipped],
  };
}

/**
 * Whether a module's file is there. A compiled binary carries every module it was built with
 * (a missing one fails the build), and other schemes are left to the import to judge.
 */
function fileModuleExists(url: string): boolean {
  if (Deno.build.standalone || !url.startsWith("file:")) return true;
  try {
    return Deno.statSync(new URL(url)).isFile;
  } catch (e) {
    // Only a missing file counts as missing: a refused stat is left to the import to report.
    return !(e instanceof Deno.errors.NotFound);
  }
}

/**
 * HMAC sealing of multi round-trip `requestState`, bound to the method it was minted for and
 * valid for ten minutes. With no configured key a random one is made: enough for one process,
 * not for replicas (they must share `server.request_state_key`).
 */
function requestStateSeal(key: string | null): RequestStateSeal {
  const codec = createRequestStateCodec<unknown>({
    key: key ?? crypto.getRandomValues(new Uint8Array(32)),
    ttlSeconds: 600,
    bind: (ctx) => ctx.mcpReq.method,
  });
  return {
    seal: (payload, ctx) => codec.mint(payload, ctx),
    open: (state, ctx) => codec.verify(state, ctx),
  };
}

/**
 * Refuses a configured upstream host the process may not reach, at start-up, with the fix,
 * instead of failing on the first call.
 */
export function checkAllowlist(
  config: Config,
  specs: readonly ProviderSpec[],
  isNetAllowed: (host: string) => boolean,
): void {
  for (const spec of specs) {
    const settings = config.providers[spec.id]!;
    for (const host of spec.hosts(settings)) {
      if (!isNetAllowed(host)) {
        throw new ConfigError(
          `providers.${spec.id}.base_url`,
          `The host "${host}" of providers.${spec.id}.base_url is outside this process's network allowlist. ` +
            `Add it to "permissions.default.net" in deno.json (deno task start, deno task compile), ` +
            `or run with a flag that replaces that list, e.g. deno run -P --allow-net=${host},<the list> main.ts, ` +
            `or use the default base_url`,
        );
      }
    }
  }
}

/** Whether `name` matches a pattern with `*` wildcards. */
export function matchesPattern(name: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`,
  );
  return re.test(name);
}

function filterTools(
  providers: readonly Provider[],
  filter: Config["tools"],
  logger: Logger,
): Provider[] {
  const all = providers.flatMap((p) => p.tools.map((t) => t.name));
  for (const pattern of [...filter.include, ...filter.exclude]) {
    if (!all.some((n) => matchesPattern(n, pattern))) {
      logger.warn(`Tool filter "${pattern}" matches no served tool`, { tools: all });
    }
  }
  return providers.map((p) => ({
    ...p,
    tools: p.tools.filter((t) =>
      (filter.include.length === 0 || filter.include.some((pat) => matchesPattern(t.name, pat))) &&
      !filter.exclude.some((pat) => matchesPattern(t.name, pat))
    ),
  }));
}

function instructions(providers: readonly Provider[], specs: readonly ProviderSpec[]): string {
  const lines = providers.map((p) => {
    const spec = specs.find((s) => s.id === p.id);
    return `- ${spec?.title ?? p.id}: ${spec?.description ?? ""}`;
  });
  return [
    "Public open-data tools. Each result says where its data came from and under what licence; cite it.",
    "Results are limited in size: when a result says it was cut, follow its advice (offset, cursor, filters, or file output).",
    `Start with ${SEARCH_TOOL} (all sources at once; each hit names the next call). Tools that are not listed are ` +
    `reached with ${DESCRIBE_TOOL} (their arguments) and ${CALL_TOOL}.`,
    "Sources:",
    ...lines,
  ].join("\n");
}
