// Background jobs for requests too large to finish within one tool call (seed 003's "Async Job
// Management"). A job outlives the call that started it, so it owns its AbortController: the
// call's signal is not used. Finished jobs are kept for the retention period and then dropped
// on the next access, so no timer keeps the process alive.
import { detachedFromDeadline } from "../http/request_scope.ts";
import { z } from "zod";
import type { Clock } from "../clock.ts";
import { ToolError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { stamp } from "./paths.ts";
import { anyObject } from "./schema.ts";

/**
 * The states of a job. `cancelled` and `incomplete` are this server's additions to seed 003's
 * four: `incomplete` is a job that finished but could not produce everything asked for (its
 * result says what is missing, why, and how to get the rest).
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

/** Progress as seed 003 reports it. */
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
  /** Reports rows done so far (and the expected total, when known). */
  progress(rowsFetched: number, estimatedTotal?: number | null, message?: string): void;
  /** Reports a failed attempt that will be retried after `delayMs`. */
  retrying(error: JobErrorInfo, retryCount: number, delayMs: number): void;
}

/** What {@linkcode JobManager.start} needs. */
export interface StartJobOptions {
  kind: string;
  /**
   * Who may see and cancel the job (the call's `owner`: an HTTP session or principal); undefined
   * over stdio. Others get `JOB_NOT_FOUND`, as if it did not exist.
   */
  owner?: string;
  /** The request, as shown in status answers (no secrets). */
  request: Record<string, unknown>;
  estimatedRows?: number | null;
  /**
   * The work; resolves to the job's result. Must honour `handle.signal`: when it aborts, reject
   * and release what the job holds, unless the result is already complete. `incomplete: true`
   * finishes the job as `incomplete` (the result must then say what is missing and why).
   */
  run(handle: JobHandle): Promise<JobOutcome>;
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
  /** How long finished jobs are kept (seed 003: 24 hours). */
  retentionMs: number;
  /** Start of every job id, e.g. `fred-job`. */
  idPrefix: string;
  logger?: Logger;
  /** Most finished jobs kept regardless of age (default 1,000). */
  maxRetained?: number;
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

interface Job {
  id: string;
  owner: string | undefined;
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
  controller: AbortController;
  done: Promise<void>;
  listeners: Set<() => void>;
  /** Bumped on every change, so a waiter never misses one made while it was reporting. */
  version: number;
}

const FINISHED: ReadonlySet<JobStatus> = new Set(["completed", "incomplete", "failed", "cancelled"]);

/** Runs, tracks, lists, cancels and expires background jobs. */
export class JobManager {
  #o: JobManagerOptions;
  #jobs = new Map<string, Job>();

  constructor(options: JobManagerOptions) {
    this.#o = options;
  }

  /** Starts a job and returns its `accepted` view at once; the work begins on the next tick. */
  start(options: StartJobOptions): JobView {
    this.#sweep();
    const now = this.#o.clock.now();
    const { date, time } = stamp(now);
    const id = `${this.#o.idPrefix}-${crypto.randomUUID().slice(0, 8)}-${date}-${time}`;
    let resolveDone!: () => void;
    const job: Job = {
      id,
      owner: options.owner,
      kind: options.kind,
      request: options.request,
      status: "accepted",
      message: "Job queued for processing",
      createdAt: now,
      updatedAt: now,
      rowsFetched: 0,
      estimatedTotal: options.estimatedRows ?? null,
      retryCount: 0,
      controller: new AbortController(),
      done: new Promise<void>((resolve) => (resolveDone = resolve)),
      listeners: new Set(),
      version: 0,
    };
    this.#jobs.set(id, job);
    this.#o.logger?.info("job accepted", {
      job_id: id,
      kind: options.kind,
      estimated_rows: job.estimatedTotal,
    });
    // The job outlives the call that started it: it keeps the call's `fresh` but not its deadline.
    detachedFromDeadline(() =>
      Promise.resolve().then(() => this.#run(job, options.run)).finally(resolveDone)
    );
    return this.#view(job);
  }

  /**
   * The job's current state; throws `JOB_NOT_FOUND` for an unknown or expired id, or one that
   * belongs to another owner.
   */
  get(id: string, owner?: string): JobView {
    this.#sweep();
    return this.#view(this.#find(id, owner));
  }

  /** The owner's recent jobs, newest first, optionally of one status. */
  list(
    options: { status?: JobStatus; limit?: number; owner?: string } = {},
  ): { jobs: JobView[]; total: number } {
    this.#sweep();
    const all = [...this.#jobs.values()]
      .filter((j) => j.owner === options.owner && (!options.status || j.status === options.status))
      .sort((a, b) => b.createdAt - a.createdAt);
    return { jobs: all.slice(0, options.limit ?? 10).map((j) => this.#view(j)), total: all.length };
  }

  /**
   * Cancels a queued or running job and waits for it to clean up. A finished job is left as it
   * is; its view says so.
   */
  async cancel(id: string, owner?: string): Promise<JobView> {
    this.#sweep();
    const job = this.#find(id, owner);
    if (FINISHED.has(job.status)) return this.#view(job);
    job.controller.abort(new DOMException("The job was cancelled", "AbortError"));
    this.#update(job, { status: "cancelled", message: "Cancelling at the client's request" });
    await job.done;
    return this.#view(job);
  }

  /**
   * Waits until the job finishes, `timeoutMs` passes or `signal` aborts, calling `onChange`
   * after each change meanwhile. Resolves to the job's state at that point.
   */
  async wait(id: string, options: WaitOptions): Promise<JobView> {
    this.#sweep();
    const job = this.#find(id, options.owner);
    const deadline = this.#o.clock.now() + options.timeoutMs;
    let reported = job.version;
    while (!FINISHED.has(job.status) && !options.signal?.aborted) {
      if (job.version === reported) {
        const remaining = deadline - this.#o.clock.now();
        if (remaining <= 0) break;
        const stop = new AbortController();
        const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
        let listener!: () => void;
        const changed = new Promise<"changed">((resolve) => {
          listener = () => resolve("changed");
          job.listeners.add(listener);
        });
        const slept = this.#o.clock.sleep(remaining, signal).then(
          () => "timeout" as const,
          () => "stopped" as const,
        );
        const outcome = await Promise.race([changed, slept]);
        job.listeners.delete(listener);
        stop.abort();
        if (outcome !== "changed") break;
      }
      reported = job.version;
      await options.onChange?.(this.#view(job));
    }
    return this.#view(job);
  }

  /** Resolves when the job has finished (for shutdown and tests). */
  async settled(id: string): Promise<JobView> {
    const job = this.#find(id, undefined, true);
    await job.done;
    return this.#view(job);
  }

  /** Cancels every unfinished job and waits for them to clean up. */
  async close(): Promise<void> {
    const running = [...this.#jobs.values()].filter((j) => !FINISHED.has(j.status));
    for (const job of running) {
      job.controller.abort(new DOMException("The server is shutting down", "AbortError"));
    }
    await Promise.all(running.map((j) => j.done));
  }

  async #run(job: Job, run: StartJobOptions["run"]): Promise<void> {
    const clock = this.#o.clock;
    // The work runs even when cancelled before it began: it owns resources (a half-open file)
    // that only it can release, and it returns at once on an aborted signal.
    job.startedAt = clock.now();
    if (!job.controller.signal.aborted) this.#update(job, { status: "processing", message: "Processing" });
    const handle: JobHandle = {
      id: job.id,
      signal: job.controller.signal,
      progress: (rows, total, message) => {
        if (FINISHED.has(job.status)) return;
        job.rowsFetched = rows;
        if (total !== undefined) job.estimatedTotal = total;
        delete job.nextRetryAt;
        this.#update(job, { message: message ?? job.message });
      },
      retrying: (error, retryCount, delayMs) => {
        if (FINISHED.has(job.status)) return;
        job.error = error;
        job.retryCount = retryCount;
        job.nextRetryAt = clock.now() + delayMs;
        this.#update(job, {
          message: `Attempt failed (${error.code}); retrying in ${Math.ceil(delayMs / 1000)} s`,
        });
      },
    };
    try {
      // A run that resolves has done its work (a cancel that came while it was finishing, e.g.
      // while its file was moved into place, came too late): report what exists.
      const { result, message, incomplete } = await run(handle);
      delete job.error;
      delete job.nextRetryAt;
      job.result = result;
      this.#finish(job, {
        status: incomplete ? "incomplete" : "completed",
        message: message ?? (incomplete ? "Finished without everything asked for" : "Completed"),
      });
    } catch (e) {
      delete job.nextRetryAt;
      if (job.controller.signal.aborted) {
        delete job.error;
        this.#finish(job, { status: "cancelled", message: "The job was cancelled; no file was kept" });
        return;
      }
      if (e instanceof ToolError) {
        job.error = { code: e.errorType, message: e.message };
      } else {
        this.#o.logger?.error("job failed unexpectedly", {
          job_id: job.id,
          error: e instanceof Error ? e.message : String(e),
        });
        job.error = {
          code: "INTERNAL_ERROR",
          message: "The job failed unexpectedly; the failure was logged",
        };
      }
      this.#finish(job, { status: "failed", message: `The job failed: ${job.error.message}` });
    }
  }

  #finish(job: Job, change: { status: JobStatus; message: string }): void {
    job.finishedAt = this.#o.clock.now();
    this.#update(job, change);
    this.#o.logger?.info("job finished", {
      job_id: job.id,
      kind: job.kind,
      status: job.status,
      rows: job.rowsFetched,
      duration_ms: job.finishedAt - (job.startedAt ?? job.createdAt),
      ...(job.error ? { error_type: job.error.code } : {}),
    });
  }

  #update(job: Job, change: { status?: JobStatus; message?: string }): void {
    if (change.status) job.status = change.status;
    if (change.message !== undefined) job.message = change.message;
    job.updatedAt = this.#o.clock.now();
    job.version += 1;
    for (const listener of [...job.listeners]) listener();
  }

  /** The job, if it exists and `owner` may see it (any owner with `anyOwner`). */
  #find(id: string, owner: string | undefined, anyOwner = false): Job {
    const job = this.#jobs.get(id);
    // Another owner's job is answered exactly like a missing one: its existence is not revealed.
    if (!job || (!anyOwner && job.owner !== owner)) {
      throw new ToolError("JOB_NOT_FOUND", `Job not found: "${id}"`, {
        field: "job_id",
        hint: `Jobs are kept for ${
          Math.round(this.#o.retentionMs / 3_600_000 * 10) / 10
        } hours after they finish, and over HTTP only the session that started a job sees it; list your jobs with the job list tool`,
      });
    }
    return job;
  }

  #sweep(): void {
    const now = this.#o.clock.now();
    const finished: Job[] = [];
    for (const job of this.#jobs.values()) {
      if (job.finishedAt === undefined) continue;
      if (job.finishedAt + this.#o.retentionMs <= now) this.#jobs.delete(job.id);
      else finished.push(job);
    }
    const max = this.#o.maxRetained ?? 1000;
    if (finished.length > max) {
      finished.sort((a, b) => a.finishedAt! - b.finishedAt!);
      for (const job of finished.slice(0, finished.length - max)) this.#jobs.delete(job.id);
    }
  }

  #view(job: Job): JobView {
    const now = this.#o.clock.now();
    const view: JobView = {
      job_id: job.id,
      status: job.status,
      kind: job.kind,
      message: job.message,
      created_at: new Date(job.createdAt).toISOString(),
      updated_at: new Date(job.updatedAt).toISOString(),
      request: job.request,
    };
    if (job.startedAt !== undefined) {
      const end = job.finishedAt ?? now;
      const total = job.estimatedTotal;
      view.progress = {
        rows_fetched: job.rowsFetched,
        estimated_total: total,
        percent_complete: total && total > 0
          ? Math.min(100, Math.floor((job.rowsFetched / total) * 100))
          : null,
        elapsed_seconds: Math.round((end - job.startedAt) / 100) / 10,
      };
    }
    if (job.finishedAt !== undefined) {
      view.duration_seconds = Math.round((job.finishedAt - (job.startedAt ?? job.createdAt)) / 100) / 10;
    }
    if (job.result) view.result = job.result;
    if (job.error) view.error = job.error;
    if (job.retryCount > 0 || job.status === "failed") view.retry_count = job.retryCount;
    if (job.nextRetryAt !== undefined) {
      view.next_retry_in_seconds = Math.max(0, Math.ceil((job.nextRetryAt - now) / 1000));
    } else if (job.status === "failed") {
      view.next_retry_in_seconds = null;
    }
    return view;
  }
}
