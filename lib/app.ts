import type { Clock, Random } from "./clock.ts";
import { systemClock } from "./clock.ts";
import type { Config } from "./config/parse.ts";
import type { ProviderSpec } from "./config/provider_spec.ts";
import { ConfigError } from "./errors.ts";
import { HttpRuntime } from "./http/runtime.ts";
import { userAgent } from "./version.ts";
import { ResponseCache } from "./http/cache.ts";
import { CITATION_TTL_MS } from "./output/provenance.ts";
import type { CitationStore } from "./output/provenance.ts";
import type { Logger } from "./log.ts";
import type { Provider, ToolDefinition } from "./mcp/provider.ts";
import { lazyProvider } from "./mcp/lazy.ts";
import { selectListing } from "./mcp/listing.ts";
import { CALL_TOOL, coreTools, DESCRIBE_TOOL, SEARCH_TOOL } from "./mcp/core_tools.ts";
import { readTool } from "./mcp/tools/read.ts";
import { collectTools, createServer, describeTool } from "./mcp/server.ts";
import { CORE_TOOLSET, ToolCatalog, UnknownToolsetError } from "./mcp/toolsets.ts";
import type { RequestStateSeal } from "./mcp/server.ts";
import { createRequestStateCodec } from "./mcp/sdk.ts";
import { DeferredExports } from "./output/deferred_exports.ts";
import { QuotaLedger } from "./output/quota.ts";
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

  // Loaded only when REDIS_URL is set: one process without it needs nothing more.
  const shared = config.server.redis_url
    ? await (await import("./redis/mod.ts")).openSharedState(config.server, {
      logger,
      ...(options.isNetAllowed ? { isNetAllowed: options.isNetAllowed } : {}),
    })
    : undefined;
  const http = new HttpRuntime({
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    logger,
    cacheMaxBytes: Math.round(config.server.cache_max_mb * 1024 * 1024),
    userAgent: userAgent(config.server.operator_contact),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(shared
      ? { cacheStore: shared.cacheStore, rateStore: shared.rateStore, breakerStore: shared.breakerStore }
      : {}),
  });
  // Citations live a day, in the store replicas share (Redis) or in process (4 MiB, LRU).
  const citations: CitationStore = {
    store: shared ? shared.cacheStore : new ResponseCache(4 * 1024 * 1024),
    ttlMs: CITATION_TTL_MS,
    now: () => http.clock.now(),
  };
  const providers: Provider[] = [];
  const skipped: string[] = [];
  const skip = (spec: ProviderSpec, reason: string): void => {
    // Seed 002: a provider whose module is missing (or does not load) is skipped with a
    // warning naming it; the others still serve.
    const message = `Provider "${spec.id}" was skipped: its module could not be loaded (${reason})`;
    logger.warn(message, { provider: spec.id });
    skipped.push(message);
  };
  const dataDir = config.server.data_dir ?? options.dataDir;
  const quota = quotaLedger(config.server);
  const moduleExists = options.moduleExists ?? fileModuleExists;
  for (const spec of enabledSpecs) {
    const settings = config.providers[spec.id]!;
    const providerLogger = logger.child({ provider: spec.id });
    const context = (creationLogger: Logger) => ({
      settings,
      http,
      logger: creationLogger,
      clock: http.clock,
      limits: { characterLimit: config.server.character_limit },
      dataDir,
      quota,
      ...(shared ? { sharedJobs: shared.jobs } : {}),
    });
    const create = async (creationLogger: Logger): Promise<Provider> =>
      (await spec.load()).createProvider(context(creationLogger));
    // With shared state a provider may have work to take over from other replicas (jobs): it
    // is created at start-up, as it is when its configuration differs from its listings'.
    const listing = spec.listings && !shared
      ? selectListing(spec.listings, settings as unknown as Record<string, unknown>, {
        $character_limit: config.server.character_limit,
        $data_dir: dataDir,
      })
      : undefined;
    if (listing && spec.listings) {
      if (!moduleExists(spec.listings.module)) {
        skip(spec, `Module not found "${spec.listings.module}"`);
        continue;
      }
      for (const w of spec.check?.(settings) ?? []) providerLogger.warn(w);
      for (const w of listing.warnings) providerLogger.warn(w);
      // Its creation logs these warnings again: the start-up log already gave them.
      const said = new Set(listing.warnings);
      providers.push(lazyProvider(spec.id, listing, async () => {
        const started = performance.now();
        try {
          const provider = await create(logger.child({ provider: spec.id }, said));
          providerLogger.info("provider loaded", { duration_ms: Math.round(performance.now() - started) });
          return provider;
        } catch (e) {
          providerLogger.error("provider failed to load", {
            error: e instanceof Error ? e.message : String(e),
          });
          throw e;
        }
      }));
      continue;
    }
    let module;
    try {
      module = await spec.load();
    } catch (e) {
      skip(spec, e instanceof Error ? e.message : String(e));
      continue;
    }
    for (const w of spec.check?.(settings) ?? []) providerLogger.warn(w);
    providers.push(await module.createProvider(context(providerLogger)));
  }

  const filtered = filterTools(providers, config.tools, logger);
  const allTools = collectTools(filtered);
  const catalog = new ToolCatalog(filtered);
  let defaultToolsets: Set<string>;
  try {
    defaultToolsets = catalog.resolve(config.toolsets);
  } catch (e) {
    if (!(e instanceof UnknownToolsetError)) throw e;
    throw new ConfigError("toolsets", `${e.message} (from ${config.toolsetsFrom})`);
  }
  for (const u of catalog.unavailable) {
    logger.warn(`Not served: ${u.tools.join(", ")} (toolset ${u.toolset}): ${u.reason}`, {
      provider: u.provider,
    });
  }
  const searchTimeoutMs = Math.round(config.server.search_timeout * 1000);
  // Its code (file writing, storage) loads with the first file written, listed or read.
  const exports = new DeferredExports({
    dataDir,
    clock: http.clock,
    maxMb: config.server.export_max_mb,
    quota,
  });
  // Result files read by a tool call (clients without resources/read): not listed, reached with
  // opendata_call, named as the next call of every answer that writes a file.
  // Each page names its source: the template's provider (the exports: the one the file was
  // written for) with the name and licence that provider declares for opendata_search.
  const fileTemplates = [
    ...filtered.flatMap((p) => (p.resourceTemplates ?? []).map((template) => ({ template, provider: p.id }))),
    { template: exports.resourceTemplate() },
  ];
  const reader = readTool(() => fileTemplates, (id) => filtered.find((p) => p.id === id)?.search);
  // deno-lint-ignore no-explicit-any
  const callable = new Map<string, { tool: ToolDefinition<any, any>; provider: string }>([
    ...filtered.flatMap((p) => p.tools.map((t) => [t.name, { tool: t, provider: p.id }] as const)),
    [reader.name, { tool: reader, provider: "core" }],
  ]);
  /** What one toolset selection serves; built once per distinct selection (tool schemas are cached per tool). */
  const views = new Map<string, Provider[]>();
  const viewOf = (selected: ReadonlySet<string>): Provider[] => {
    const key = [...selected].sort().join(",");
    let view = views.get(key);
    if (!view) {
      const served = catalog.serve(filtered, selected);
      const listed = new Set([...served.flatMap((p) => p.tools.map((t) => t.name)), ...CORE_TOOL_NAMES]);
      const core: Provider = {
        id: "core",
        toolsets: [{ id: CORE_TOOLSET, description: "Search every source; describe and call any tool" }],
        tools: coreTools({
          catalog,
          providers: filtered,
          served: listed,
          searchTimeoutMs,
          clock: http.clock,
          inputSchemaOf: (tool) => describeTool(tool).inputSchema as Record<string, unknown>,
          unlisted: [reader],
        }),
      };
      view = [core, ...served];
      // Bounded: selections are subsets of a few dozen toolsets, but a client could send many.
      if (views.size >= 256) views.delete(views.keys().next().value!);
      views.set(key, view);
    }
    return view;
  };
  const tools = collectTools(viewOf(defaultToolsets));
  const requestState = requestStateSeal(config.server.request_state_key);
  const serverInstructions = instructions(filtered, specs);
  const served = skipped.length === 0 ? config : {
    ...config,
    enabledProviders: providers.map((p) => p.id),
    warnings: [...config.warnings, ...skipped],
  };
  return {
    config: served,
    providers: filtered,
    http,
    catalog,
    ...(shared ? { shared } : {}),
    tools,
    allTools,
    defaultToolsets,
    newServer: (serverOptions = {}) =>
      createServer(viewOf(serverOptions.toolsets ?? defaultToolsets), {
        logger,
        characterLimit: config.server.character_limit,
        structuredContent: config.server.structured_content === "on",
        name: config.server.name,
        version: config.server.version,
        instructions: serverInstructions,
        callTimeoutMs: Math.round(config.server.call_timeout * 1000),
        clock: http.clock,
        requestState,
        exports,
        callable,
        views: { tilesUrl: config.server.map_tiles_url },
        userAgent: http.userAgent,
        citations,
        ...(serverOptions.owner === undefined ? {} : { owner: serverOptions.owner }),
        ...(serverOptions.client === undefined ? {} : { client: serverOptions.client }),
      }),
    async close() {
      for (const p of providers) await p.close?.().catch(() => {});
      await shared?.close();
    },
  };
}

const CORE_TOOL_NAMES = [SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL];

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

/**
 * The server's one quota ledger, from `server.writes` and `quota_*` (bounded's preset is already
 * in them): every storage and job manager of the server asks it.
 */
export function quotaLedger(server: Config["server"]): QuotaLedger {
  return new QuotaLedger({
    writes: server.writes === "off" ? "off" : "on",
    limits: {
      projects: server.quota_projects,
      bytes: Math.round(server.quota_mb * 1_048_576),
      jobs: server.quota_jobs,
      jobRecords: server.quota_job_records,
    },
  });
}
