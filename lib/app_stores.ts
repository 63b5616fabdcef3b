// What the app keeps for callers beyond one call, apart from app.ts: where citations live (and
// which hosts a citation read back may name), the one quota ledger, and the storages' upkeep
// from start-up on (lib/output/storage_upkeep.ts).
import type { Config } from "./config/parse.ts";
import type { ProviderSpec } from "./config/provider_spec.ts";
import { ResponseCache } from "./http/cache.ts";
import type { HttpRuntime } from "./http/runtime.ts";
import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";
import { CITATION_TTL_MS } from "./output/citations.ts";
import type { CitationStore } from "./output/citations.ts";
import { exportsRoot } from "./output/paths.ts";
import { QuotaLedger } from "./output/quota.ts";
import { startStorageUpkeep } from "./output/storage_upkeep.ts";
import type { StorageUpkeep } from "./output/storage_upkeep.ts";
import type { SharedState } from "./redis/mod.ts";

/** Citations live a day, in the store replicas share (Redis) or in process (4 MiB, LRU). */
export function citationStore(
  http: HttpRuntime,
  shared: SharedState | undefined,
  hosts: ReadonlyMap<string, readonly string[]>,
): CitationStore {
  return {
    store: shared ? shared.cacheStore : new ResponseCache(4 * 1024 * 1024),
    kept: shared ? "shared" : "process",
    ttlMs: CITATION_TTL_MS,
    now: () => http.clock.now(),
    // A citation read back names only a host its provider is allowed (a forged one is refused);
    // one of no enabled provider names none.
    hostsOf: (provider) => hosts.get(provider) ?? [],
  };
}

/** Each enabled provider's hosts (`host[:port]`), as its allowlist has them. */
export function citedHosts(config: Config, specs: readonly ProviderSpec[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const spec of specs) {
    const settings = config.providers[spec.id];
    if (settings) out.set(spec.id, spec.hosts(settings as never));
  }
  return out;
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

/**
 * Starts the upkeep of every storage the enabled providers and the result files keep clients'
 * files in: counted towards the quota and reclaimed when stale from now on.
 */
export function storageUpkeep(
  config: Config,
  specs: readonly ProviderSpec[],
  options: { dataDir: string; quota: QuotaLedger; clock: Clock; logger: Logger },
): StorageUpkeep {
  return startStorageUpkeep({
    roots: [
      ...specs.flatMap((spec) =>
        (spec.storageRoots?.(config.providers[spec.id] as never, options.dataDir) ?? []).map((root) => ({
          root,
          callerProjects: true,
        }))
      ),
      { root: exportsRoot(options.dataDir), callerProjects: false },
    ],
    quota: options.quota,
    reclaimAfterMs: Math.round(config.server.quota_reclaim_days * 86_400_000),
    clock: options.clock,
    logger: options.logger,
  });
}
