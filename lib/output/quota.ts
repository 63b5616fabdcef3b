// One quota per client for everything a caller keeps on the server: projects, bytes stored
// (FRED's projects and the result files of `output: "file"` together), jobs running and job
// records kept. A client is what `ToolCallContext.client` names (the OAuth principal, else the
// address, IPv6 by prefix), hashed as `ownerHash("client:<key>")`; over stdio there is none and
// no quota applies, only the storage's own limits for the whole server.
//
// The ledger holds no counts of its own: every storage and job manager of the server registers
// how to count what a client holds there, and the ledger adds them up before a write or a start.
// So one client's projects and files count once, whichever provider or tool wrote them, and the
// counts stay what the disk and the job table say (a replica sharing the folder sees the files
// another wrote).
//
// Ownership (who may see a file or a job) is not the ledger's business: that is the owner folder
// of storage.ts and the job's owner in jobs.ts.
import { ToolError } from "../errors.ts";
import { ownerHash } from "./owner_hash.ts";

/** Per-client limits; `Infinity` is none. */
export interface QuotaLimits {
  /** Projects one client keeps (FRED projects; result-file folders are the server's). */
  projects: number;
  /** Bytes one client stores, in the 4 KiB blocks the storage counts. */
  bytes: number;
  /** Jobs one client has running at once. */
  jobs: number;
  /** Job records kept for one client; past it its oldest finished jobs are dropped. */
  jobRecords: number;
}

/** The settings an operator raises, named in the error's hint. */
export interface QuotaSettingNames {
  projects: string;
  bytes: string;
  jobs: string;
}

/** Options for {@linkcode QuotaLedger}. */
export interface QuotaLedgerOptions {
  /** `server.writes`: off refuses every write and job (a read-only deployment). */
  writes: "on" | "off";
  limits: QuotaLimits;
  /** Default: the `MCP_QUOTA_*` environment variables. */
  settings?: QuotaSettingNames;
}

/** How a storage counts what one client keeps in it. */
export interface StorageUsage {
  /** Bytes `client` (a client hash) stores here: as last counted, plus files being written. */
  bytesOf(client: string): number;
  /** Counts the stored bytes afresh from the disk (files may have been deleted meanwhile). */
  recount(): Promise<void>;
  /** Projects `client` keeps here; absent for a storage whose folders are not the caller's projects. */
  projectsOf?(client: string): Promise<number>;
}

/** How a job manager counts one client's running jobs. */
export interface JobUsage {
  runningOf(client: string): number;
}

const DEFAULT_SETTINGS: QuotaSettingNames = {
  projects: "MCP_QUOTA_PROJECTS",
  bytes: "MCP_QUOTA_MB",
  jobs: "MCP_QUOTA_JOBS",
};

/** No writes refused, no per-client limit: what a storage or job manager made without a ledger uses. */
export const UNLIMITED: QuotaLimits = {
  projects: Infinity,
  bytes: Infinity,
  jobs: Infinity,
  jobRecords: Infinity,
};

/**
 * The fewest clients that fill a global cap (a storage's projects or bytes): one client's share
 * of it is at most this fraction, so one address, or a few, cannot fill it for everyone.
 */
export const CLIENTS_TO_FILL = 16;

/** One client's share of a global cap of `max` (at least `least`: one project, one block). */
export function shareOf(max: number, least = 1): number {
  return Math.max(least, Math.floor(max / CLIENTS_TO_FILL));
}

/** The hash a client is counted under (never the raw address or principal). */
export function clientHash(client: string): string {
  return ownerHash(`client:${client}`);
}

/** Rounds bytes to MiB with three decimals, as the storage reports sizes. */
function mb(bytes: number): number {
  return Math.round((bytes / 1_048_576) * 1000) / 1000;
}

/** The one per-client quota of a server; see the module comment. */
export class QuotaLedger {
  #o: QuotaLedgerOptions;
  #settings: QuotaSettingNames;
  #storages = new Map<StorageUsage | string, StorageUsage>();
  #jobs: JobUsage[] = [];

  constructor(options: QuotaLedgerOptions) {
    this.#o = options;
    this.#settings = options.settings ?? DEFAULT_SETTINGS;
  }

  /** Whether callers may write at all (`server.writes`). */
  get writes(): "on" | "off" {
    return this.#o.writes;
  }

  /** The per-client limits. */
  get limits(): Readonly<QuotaLimits> {
    return this.#o.limits;
  }

  /**
   * Counts `usage` towards every client's quota from now on. `root` names the folder it counts:
   * a later storage of the same folder takes its place (what start-up counted before the
   * provider that writes there was loaded gives way to that provider's own storage).
   */
  addStorage(usage: StorageUsage, root?: string): void {
    this.#storages.set(root ?? usage, usage);
  }

  /** Whether a storage of folder `root` counts already (see {@linkcode addStorage}). */
  hasStorage(root: string): boolean {
    return this.#storages.has(root);
  }

  /** Counts `usage`'s running jobs towards every client's quota from now on. */
  addJobs(usage: JobUsage): void {
    this.#jobs.push(usage);
  }

  /** Refuses any write when `server.writes` is off; `what` completes "it does not ...". */
  checkWrites(what: string): void {
    if (this.#o.writes === "off") throw writesOff(what);
  }

  /** Refuses a new project when `client` (a client hash; undefined over stdio) keeps its most. */
  async checkProject(client: string | undefined): Promise<void> {
    this.checkWrites("create projects");
    const max = this.#o.limits.projects;
    if (client === undefined || max === Infinity) return;
    let held = 0;
    for (const s of this.#storages.values()) held += (await s.projectsOf?.(client)) ?? 0;
    if (held < max) return;
    throw quotaExceeded(
      `your client keeps ${held} projects, the most one client may (${max}); no new project was created`,
      "Save into one of your existing projects (list them with the project list tool; every session of your client counts together)",
      this.#settings.projects,
    );
  }

  /** Counts every storage's bytes afresh (before a new file: files may have been deleted). */
  async recount(): Promise<void> {
    for (const s of this.#storages.values()) await s.recount();
  }

  /**
   * Refuses `more` bytes (0: a new file) when `client`'s files in every storage together would
   * pass its quota. Synchronous, from the last count: it runs while a file is being written.
   */
  checkBytes(client: string | undefined, more: number): void {
    const max = this.#o.limits.bytes;
    if (client === undefined || max === Infinity) return;
    let used = 0;
    for (const s of this.#storages.values()) used += s.bytesOf(client);
    if (used + more <= max && (more > 0 || used < max)) return;
    throw quotaExceeded(
      `your client's files take ${mb(used)} MiB of the ${
        mb(max)
      } MiB one client may store (projects and result files together)`,
      "List your projects and files (the project list and project files tools) and ask the operator to remove those you no longer need",
      this.#settings.bytes,
    );
  }

  /** Refuses a job start (and any write) when `client` already runs its most jobs at once. */
  checkJobs(client: string | undefined): void {
    this.checkWrites("start background jobs (they write their results to files)");
    const max = this.#o.limits.jobs;
    if (client === undefined || max === Infinity) return;
    let running = 0;
    for (const j of this.#jobs) running += j.runningOf(client);
    if (running < max) return;
    throw quotaExceeded(
      `your client runs ${running} background jobs, the most one client may run at once (${max}); no job was started`,
      'Wait for one to finish (follow it with the job status tool, or list yours with the job list tool and status "running"), or cancel one you no longer need with the job cancel tool',
      this.#settings.jobs,
      // Running jobs end on their own: the same call goes through once one has.
      { retryAfterS: JOB_RETRY_AFTER_S },
    );
  }
}

/** The error of a write on a read-only deployment (`server.writes: off`). */
export function writesOff(what: string): ToolError {
  return new ToolError(
    "CONFIGURATION_ERROR",
    `This server is read-only (MCP_WRITES=off): it does not ${what}`,
    {
      hint:
        'Ask for the answer inline (output: "screen") and narrow the request (fewer rows, a shorter date range) so it fits one answer',
    },
  );
}

/** When a client at its running-jobs quota may try again: jobs run for seconds to minutes. */
const JOB_RETRY_AFTER_S = 30;

/**
 * The one error of a full quota: `QUOTA_EXCEEDED`, with what is full, the limit and the way on.
 * Not retryable where only the caller frees room (projects, bytes); retryable after `retryAfterS`
 * where room frees itself (a running job ends).
 */
export function quotaExceeded(
  what: string,
  free: string,
  setting: string,
  options: { retryAfterS?: number } = {},
): ToolError {
  return new ToolError("QUOTA_EXCEEDED", `Your quota on this server is full: ${what}`, {
    ...(options.retryAfterS === undefined ? {} : { retryable: true, retryAfterS: options.retryAfterS }),
    hint:
      `${free}, or ask the server's operator to raise ${setting}; other clients' quotas are not used for yours`,
  });
}
