// The storages' upkeep from start-up on, before any provider's code is loaded: clients' projects
// nobody touched for `server.quota_reclaim_days` are removed (at start, then hourly), so caps a
// flood filled do not stay full across restarts; and what clients keep in each folder counts
// towards their quota at once (a provider's own storage takes over that count when it loads,
// quota.ts `addStorage`), not only after that provider's first call.
import * as nodePath from "node:path";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { QuotaLedger } from "./quota.ts";
import { clientProjects, holdings, removeProjects } from "./storage_scan.ts";
import type { Holding } from "./storage_scan.ts";

/** One folder the upkeep watches. */
export interface UpkeptRoot {
  root: string;
  /** Whether its project folders are the clients' own projects (false: one per provider, exports). */
  callerProjects: boolean;
}

/** Options for {@linkcode startStorageUpkeep}. */
export interface StorageUpkeepOptions {
  roots: readonly UpkeptRoot[];
  quota: QuotaLedger;
  /** Milliseconds after which an untouched client project is removed; 0: never. */
  reclaimAfterMs: number;
  clock: Clock;
  logger: Logger;
}

/** The running upkeep: `ready` once the first pass is done; `close` stops the hourly pass. */
export interface StorageUpkeep {
  ready: Promise<void>;
  close(): void;
}

/** How often stale projects are looked for: hourly, or sooner when the age is shorter. */
const PASS_MS = 3_600_000;

/** Starts the upkeep; see the module comment. */
export function startStorageUpkeep(options: StorageUpkeepOptions): StorageUpkeep {
  const roots = options.roots.map((r) => ({ ...r, root: nodePath.resolve(r.root) }));
  const counted = new Map<string, Map<string, Holding>>();
  for (const { root, callerProjects } of roots) {
    counted.set(root, new Map());
    const recount = async () => void counted.set(root, holdings(await clientProjects(root)));
    // Only where no storage of that folder counts yet (one made at start-up counts better).
    if (options.quota.hasStorage(root)) continue;
    options.quota.addStorage({
      bytesOf: (client) => counted.get(root)?.get(client)?.bytes ?? 0,
      recount,
      ...(callerProjects
        ? {
          projectsOf: async (
            client: string,
          ) => (await recount(), counted.get(root)?.get(client)?.projects ?? 0),
        }
        : {}),
    }, root);
  }
  const pass = async (): Promise<void> => {
    for (const { root } of roots) {
      const projects = await clientProjects(root);
      if (options.reclaimAfterMs > 0) {
        const before = options.clock.now() - options.reclaimAfterMs;
        const stale = projects.filter((p) => p.touched < before);
        const removed = await removeProjects(stale);
        if (removed > 0) {
          options.logger.info("stale client projects reclaimed", {
            removed,
            untouched_days: Math.round(options.reclaimAfterMs / 86_400_000 * 100) / 100,
          });
        }
      }
      counted.set(root, holdings(await clientProjects(root)));
    }
  };
  const ready = pass().catch((e) => {
    options.logger.warn("storage upkeep failed", { error: e instanceof Error ? e.message : String(e) });
  });
  if (options.reclaimAfterMs <= 0) return { ready, close: () => {} };
  const id = setInterval(
    () => void pass().catch(() => {}),
    Math.min(PASS_MS, Math.max(1000, options.reclaimAfterMs / 4)),
  );
  Deno.unrefTimer(id);
  return { ready, close: () => clearInterval(id) };
}
