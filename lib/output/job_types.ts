// What a background job is, as the status tools report it, as the shared store (Redis) keeps it
// and as JobManager (jobs.ts) is asked to run it: statuses, views, records and their parser, the
// shared store's interface and the options.
import { jsonTooDeepAt, MAX_JSON_DEPTH } from "../http/json_depth.ts";
import { z } from "zod";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { QuotaLedger } from "./quota.ts";
import { anyObject } from "./schema.ts";

/**
 * The states of a job. `cancelled` and `incomplete` are this server's additions to the four of
 * FRED's job design (accepted, processing, completed, failed): `incomplete` is a job that finished
 * but could not produce everything asked for (its result says what is missing, why, and how to get
 * the rest).
 */
export const JOB_STATUSES = [
  "accepted",
  "processing",
  "completed",
  "incomplete",
  "failed",
  "cancelled",
] as const;

/** One of {@linkcode JOB_STATUSES}. */
export type JobStatus = typeof JOB_STATUSES[number];

/** Progress as a FRED job reports it (docs/apis/fred.md, "Background jobs"). */
export interface JobProgress {
  rows_fetched: number;
  estimated_total: number | null;
  percent_complete: number | null;
  elapsed_seconds: number;
}

/** Why a job failed (or why its last attempt did, while it waits to retry). */
export interface JobErrorInfo {
  code: string;
  message: string;
  /** True when calling the data tool again may well succeed (e.g. the replica running it died). */
  retryable?: boolean;
}

/** A job as the status tools report it. */
export interface JobView {
  job_id: string;
  status: JobStatus;
  kind: string;
  message: string;
  created_at: string;
  updated_at: string;
  request: Record<string, unknown>;
  progress?: JobProgress;
  duration_seconds?: number;
  result?: Record<string, unknown>;
  error?: JobErrorInfo;
  retry_count?: number;
  next_retry_in_seconds?: number | null;
}

/**
 * zod shape of {@linkcode JobView} for tool output schemas: open, naming the principal fields
 * without descriptions (compact; the interface above documents the rest).
 */
export const jobViewSchema: z.ZodType<JobView> = z.looseObject({
  job_id: z.string(),
  status: z.enum(JOB_STATUSES),
  message: z.string(),
  progress: anyObject().optional(),
  result: anyObject().optional(),
  error: anyObject().optional(),
  // Open: it checks the fields named here and lets the rest of a JobView through.
}) as unknown as z.ZodType<JobView>;

/** What a running job may report. */
export interface JobHandle {
  readonly id: string;
  /** Aborted when the job is cancelled or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * True once another replica has the job or gets it (this one lost its lease, or is shutting
   * down and hands it over): what the work leaves behind (its partial file) is where that replica
   * carries on from, so it is kept, not removed.
   */
  readonly handedOver: boolean;
  /** Reports rows done so far (and the expected total, when known). */
  progress(rowsFetched: number, estimatedTotal?: number | null, message?: string): void;
  /** Reports a failed attempt that will be retried after `delayMs`. */
  retrying(error: JobErrorInfo, retryCount: number, delayMs: number): void;
  /**
   * Reports rows done at a point the work can carry on from (after a completed upstream page):
   * with a shared store it is kept there, in the same write as the progress, and a replica that
   * takes the job over hands it to the job's resumer.
   */
  checkpoint(point: JobCheckpoint, estimatedTotal?: number | null, message?: string): void;
}

/**
 * Where a job can carry on from: rows done, the cursor of the next upstream page (the
 * provider's, e.g. `{ offset }`) and the state of the file being written at that boundary
 * (row_writers.ts). Read back from a shared store it is checked before use, and signed with the
 * recipe when replicas share a key.
 */
export interface JobCheckpoint {
  rows: number;
  cursor: Record<string, unknown>;
  file?: { bytes: number; rows: number; state: Record<string, unknown> };
}

/** What {@linkcode JobManager.start} needs. */
export interface StartJobOptions {
  kind: string;
  /**
   * Who may see and cancel the job (the call's `owner`: an HTTP session or principal); undefined
   * over stdio. Others get `JOB_NOT_FOUND`, as if it did not exist.
   */
  owner?: string;
  /**
   * The client the job counts against for the per-client caps (`ToolCallContext.client`: an
   * address, IPv6 by prefix, or a principal); undefined over stdio (no per-client caps).
   */
  client?: string;
  /** The request, as shown in status answers (no secrets). */
  request: Record<string, unknown>;
  estimatedRows?: number | null;
  /**
   * The work; resolves to the job's result. Must honour `handle.signal`: when it aborts, reject
   * and release what the job holds, unless the result is already complete. `incomplete: true`
   * finishes the job as `incomplete` (the result must then say what is missing and why).
   */
  run(handle: JobHandle): Promise<JobOutcome>;
  /**
   * How another replica carries on with the job if this one dies: a resumer registered under
   * `kind` (see {@linkcode JobManager.resumable}) gets `data`. Without it such a job fails
   * (retryable). Never put secrets in `data`: it is stored in the shared store.
   */
  resume?: { kind: string; data: Record<string, unknown> };
}

/**
 * Carries on with a job taken over from a replica that died; resolves like `run`. `from` is the
 * job's last checkpoint, when it left a trusted one; without it the work starts again.
 */
export type Resumer = (
  data: Record<string, unknown>,
  handle: JobHandle,
  owner: OwnerRef,
  from?: JobCheckpoint,
) => Promise<JobOutcome>;

/**
 * Cleans up after a job of a recipe this replica could resume but ends instead (cancelled meanwhile,
 * or taken over too often): e.g. removes the partial file the replica that died left behind.
 */
export type Abandoner = (data: Record<string, unknown>, owner: OwnerRef) => Promise<void>;

/** Whose job a resumed job is: the owner's hash (the raw id is never stored). */
export interface OwnerRef {
  /** {@linkcode ownerHash} of the owner, or undefined for stdio (no owner). */
  hash: string | undefined;
  /**
   * The hash of the client the job counts against (`ProjectStorage.forOwnerHash`'s
   * `clientHash`), or undefined (stdio, or a record of an older replica).
   */
  client?: string;
}

/** A job as the shared store keeps it: everything but the worker's live parts. */
export interface JobRecord {
  id: string;
  /** {@linkcode ownerHash} of the owner; "" over stdio. */
  owner: string;
  /** Hash of the client it counts against (absent over stdio). */
  client?: string;
  kind: string;
  request: Record<string, unknown>;
  status: JobStatus;
  message: string;
  createdAt: number;
  updatedAt: number;
  startedAt?: number;
  finishedAt?: number;
  rowsFetched: number;
  estimatedTotal: number | null;
  result?: Record<string, unknown>;
  error?: JobErrorInfo;
  retryCount: number;
  nextRetryAt?: number;
  resume?: { kind: string; data: Record<string, unknown> };
  /** HMAC-SHA-256 (hex) of the recipe with the job's id and owner (job_signing.ts), when replicas share a key. */
  resumeSig?: string;
  /** The last point the work can carry on from (see {@linkcode JobHandle.checkpoint}). */
  checkpoint?: JobCheckpoint;
  /** HMAC-SHA-256 (hex) of the checkpoint with the recipe, id and owner, when replicas share a key. */
  checkpointSig?: string;
  /** Times another replica took the job over. */
  takeovers?: number;
  /** The replica running (or that last ran) the job. */
  replica?: string;
}

const time = z.number().min(0).max(8.64e15);
const count = z.number().min(0).max(Number.MAX_SAFE_INTEGER);
const record = z.record(z.string(), z.unknown());

/**
 * A stored {@linkcode JobRecord} as read back: every field a listing, a view or a takeover uses
 * is checked (a shared store is outside this process, and a record without `createdAt` once
 * broke its owner's job list for good). Unknown fields pass, for replicas of a newer version.
 */
const jobRecordSchema = z.looseObject({
  id: z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/),
  owner: z.string().regex(/^(|[0-9a-f]{32})$/),
  client: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  kind: z.string().max(1000),
  request: record,
  status: z.enum(JOB_STATUSES),
  message: z.string(),
  createdAt: time,
  updatedAt: time,
  startedAt: time.optional(),
  finishedAt: time.optional(),
  rowsFetched: count,
  estimatedTotal: count.nullable(),
  result: record.optional(),
  error: z.looseObject({ code: z.string(), message: z.string(), retryable: z.boolean().optional() })
    .optional(),
  retryCount: count,
  nextRetryAt: time.optional(),
  resume: z.object({ kind: z.string(), data: record }).optional(),
  resumeSig: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  checkpoint: z.object({
    rows: count,
    cursor: record,
    file: z.object({ bytes: count, rows: count, state: record }).optional(),
  }).optional(),
  checkpointSig: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  takeovers: count.optional(),
  replica: z.string().max(200).optional(),
});

/**
 * Reads a job record back from a shared store's text: the record when it is one, else why not
 * (not JSON, nested past {@linkcode MAX_JSON_DEPTH}, a field missing or of the wrong type, or
 * another id than the one asked for). Callers skip and log what fails, never trust it.
 */
export function parseJobRecord(text: string, id?: string): JobRecord | { problem: string } {
  if (jsonTooDeepAt(text) >= 0) return { problem: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "not JSON" };
  }
  const parsed = jobRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { problem: `${issue?.path.join(".") || "record"}: ${issue?.message ?? "invalid"}` };
  }
  if (id !== undefined && parsed.data.id !== id) return { problem: `holds the id "${parsed.data.id}"` };
  return parsed.data as unknown as JobRecord;
}

/** What the lease answer says. */
export interface LeaseState {
  /** This replica holds the lease (renewed for another lease period). */
  held: boolean;
  /** Someone asked to cancel the job. */
  cancel: boolean;
}

/**
 * Where jobs live for every replica (Redis: lib/redis/job_store.ts). Methods throw when the
 * store is out of reach; the manager then serves what this replica knows.
 */
export interface SharedJobStore {
  /** This process's id in leases and records. */
  readonly replica: string;
  /** Writes the record, kept `ttlMs`; `active` jobs are the ones the takeover scan watches. */
  save(record: JobRecord, ttlMs: number, active: boolean): Promise<void>;
  load(id: string): Promise<JobRecord | undefined>;
  /** The owner's jobs, newest first, at most `max`. */
  list(owner: string, max: number): Promise<JobRecord[]>;
  /** Takes the lease when free or renews it when held; `held: false` when another replica has it. */
  lease(id: string, ms: number): Promise<LeaseState>;
  /** Takes the lease only when free (a takeover). */
  claim(id: string, ms: number): Promise<boolean>;
  /** Gives the lease back when this replica holds it. */
  release(id: string): Promise<void>;
  /** Active jobs whose id starts with `idPrefix` and whose lease ran out. */
  orphans(idPrefix: string): Promise<string[]>;
  /** Stops watching a job (its record is gone or finished). */
  forget(id: string): Promise<void>;
  /** Asks the replica running `id` to cancel it. */
  requestCancel(id: string, ttlMs: number): Promise<void>;
  /** Tells other replicas that `id` changed. */
  changed(id: string): Promise<void>;
  /** Calls `listener` on every change or cancel request any replica announces. */
  subscribe(listener: (event: "changed" | "cancel", id: string) => void): Promise<() => void>;
}

/** The shared store and its timings (all required when a store is given). */
export interface SharedJobsOptions {
  store: SharedJobStore;
  /** How long a lease lasts unless renewed; renewed every third of it. */
  leaseMs: number;
  /** How often this replica looks for jobs whose lease ran out. */
  takeoverIntervalMs: number;
  /**
   * Signs takeover recipes and refuses to resume one without a valid signature
   * (job_signing.ts); absent: recipes are unsigned and resumed from their checked fields.
   */
  signingKey?: CryptoKey;
}

/** What a job's work resolves to. */
export interface JobOutcome {
  result: Record<string, unknown>;
  message?: string;
  /** The job finished but produced less than was asked for. */
  incomplete?: boolean;
}

/** Options for {@linkcode JobManager}. */
export interface JobManagerOptions {
  clock: Clock;
  /** How long finished jobs are kept (24 hours by default). */
  retentionMs: number;
  /** Start of every job id, e.g. `fred-job`. */
  idPrefix: string;
  logger?: Logger;
  /** Most finished jobs kept regardless of age, all clients together (default 1,000). */
  maxRetained?: number;
  /** Shares jobs with other replicas (Redis); default: this process only. */
  shared?: SharedJobsOptions;
  /**
   * The server's per-client quota and `server.writes` (running jobs, job records kept; one
   * ledger for every job manager and storage of the server). Default: writes on, no quota.
   */
  quota?: QuotaLedger;
}

/** Options for {@linkcode JobManager.wait}. */
export interface WaitOptions {
  timeoutMs: number;
  /** Stops waiting (not the job), e.g. when the waiting call is cancelled. */
  signal?: AbortSignal;
  /** Called with the job's state after each change while waiting. */
  onChange?: (view: JobView) => void | Promise<void>;
  /** The caller's owner; see {@linkcode StartJobOptions.owner}. */
  owner?: string;
}
