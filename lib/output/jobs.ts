// Background jobs for requests too large to finish within one tool call (FRED's large pulls,
// docs/apis/fred.md). A job outlives the call that started it, so it owns its AbortController: the
// call's signal is not used. Finished jobs are kept for the retention period and then dropped
// on the next access, so no timer keeps the process alive.
//
// With a shared store (Redis, when `REDIS_URL` is set) every change is also written there, so
// any replica answers status, list and cancel; the replica running a job holds a lease on it and
// renews it while it works. Each replica scans for jobs whose lease ran out (their replica died)
// and takes them over: it resumes them when the job left a way to (`resume`), and otherwise
// marks them `failed` with `retryable: true` and the reason. A cancel asked on another replica
// reaches the worker by pub/sub at once, and by the lease renewal's answer at the latest.
//
// Longer than the 500 lines the house keeps to, on purpose: JobManager is one class whose every
// operation (start, status, list, cancel, wait, takeover) has a local and a shared path over the
// same private job table, leases and waiters; splitting it would expose that state. What a job
// is (statuses, views, records, the shared store's interface, options) is in job_types.ts.
import { detachedFromDeadline } from "../http/request_scope.ts";
import { metrics } from "../metrics/mod.ts";
import { ToolError } from "../errors.ts";
import { stamp } from "./paths.ts";
import { ownerHash } from "./owner_hash.ts";
import { clientHash, QuotaLedger, UNLIMITED } from "./quota.ts";
import { checkpointSignatureValid, recipeSignatureValid, signCheckpoint, signRecipe } from "./job_signing.ts";
import type {
  Abandoner,
  JobCheckpoint,
  JobHandle,
  JobManagerOptions,
  JobRecord,
  JobStatus,
  JobView,
  LeaseState,
  OwnerRef,
  Resumer,
  StartJobOptions,
  WaitOptions,
} from "./job_types.ts";

export { JOB_STATUSES, jobViewSchema, parseJobRecord } from "./job_types.ts";
export type {
  Abandoner,
  JobCheckpoint,
  JobErrorInfo,
  JobHandle,
  JobManagerOptions,
  JobOutcome,
  JobProgress,
  JobRecord,
  JobStatus,
  JobView,
  LeaseState,
  OwnerRef,
  Resumer,
  SharedJobsOptions,
  SharedJobStore,
  StartJobOptions,
  WaitOptions,
} from "./job_types.ts";

interface Job extends JobRecord {
  controller: AbortController;
  done: Promise<void>;
  listeners: Set<() => void>;
  /** Bumped on every change, so a waiter never misses one made while it was reporting. */
  version: number;
  /** Writes to the shared store, in order. */
  saving: Promise<void>;
  /** Why the worker stops without finishing the job here: another replica has or gets it. */
  leaving?: "lost" | "handover";
  stopRenewal?: () => void;
}

/** Takeovers after which a job is failed rather than resumed again (it may be what kills replicas). */
const MAX_TAKEOVERS = 3;

/** The key jobs are owned under: the owner's hash, "" for stdio. */
function ownerKey(owner: string | undefined): string {
  return owner === undefined ? "" : ownerHash(owner);
}

const FINISHED: ReadonlySet<JobStatus> = new Set(["completed", "incomplete", "failed", "cancelled"]);

/** Runs, tracks, lists, cancels and expires background jobs. */
export class JobManager {
  #o: JobManagerOptions;
  #jobs = new Map<string, Job>();
  #resumers = new Map<string, Resumer>();
  #abandoners = new Map<string, Abandoner>();
  /** Callers waiting on jobs another replica runs, woken by its change announcements. */
  #remoteWaiters = new Map<string, Set<() => void>>();
  #stopScan: (() => void) | undefined;
  #unsubscribe: Promise<() => void> | undefined;
  #closed = false;
  #quota: QuotaLedger;

  constructor(options: JobManagerOptions) {
    this.#o = options;
    this.#quota = options.quota ?? new QuotaLedger({ writes: "on", limits: UNLIMITED });
    // Jobs of this replica: with shared jobs each replica counts the jobs it runs.
    this.#quota.addJobs({
      runningOf: (client) => {
        let running = 0;
        for (const job of this.#jobs.values()) {
          if (job.client === client && !FINISHED.has(job.status)) running++;
        }
        return running;
      },
    });
    metrics?.trackJobs(this);
    const shared = options.shared;
    if (shared) {
      this.#unsubscribe = shared.store.subscribe((event, id) => this.#onEvent(event, id)).catch(
        () => () => {},
      );
      this.#stopScan = every(shared.takeoverIntervalMs, () => void this.#scan());
    }
  }

  /** Whether jobs are shared with other replicas. */
  get shared(): boolean {
    return this.#o.shared !== undefined;
  }

  /**
   * Registers how jobs of `kind` carry on on this replica when the replica running them died
   * (see {@linkcode StartJobOptions.resume}), and how what they left is cleaned up when such a
   * job is ended instead.
   */
  resumable(kind: string, resume: Resumer, abandon?: Abandoner): void {
    this.#resumers.set(kind, resume);
    if (abandon) this.#abandoners.set(kind, abandon);
  }

  /**
   * Throws what the quota refuses `client` (writes off, or its most jobs running): call it
   * before reserving what the job would use, so a refused caller leaves nothing reserved.
   * Undefined (stdio) is never capped.
   */
  checkCapacity(client: string | undefined): void {
    this.#quota.checkJobs(client === undefined ? undefined : clientHash(client));
  }

  /** Starts a job and returns its `accepted` view at once; the work begins on the next tick. */
  start(options: StartJobOptions): JobView {
    this.checkCapacity(options.client);
    this.#sweep();
    const now = this.#o.clock.now();
    const { date, time } = stamp(now);
    const id = `${this.#o.idPrefix}-${crypto.randomUUID().slice(0, 8)}-${date}-${time}`;
    const job = this.#newJob({
      id,
      owner: ownerKey(options.owner),
      ...(options.client === undefined ? {} : { client: clientHash(options.client) }),
      kind: options.kind,
      request: options.request,
      status: "accepted",
      message: "Job queued for processing",
      createdAt: now,
      updatedAt: now,
      rowsFetched: 0,
      estimatedTotal: options.estimatedRows ?? null,
      retryCount: 0,
      ...(options.resume ? { resume: options.resume } : {}),
    });
    this.#o.logger?.info("job accepted", {
      job_id: id,
      kind: options.kind,
      estimated_rows: job.estimatedTotal,
    });
    if (job.client !== undefined) this.#trimClient(job.client);
    metrics?.jobTransitions.inc(1, "accepted");
    this.#launch(job, options.run);
    return this.#view(job);
  }

  /** Drops `client`'s oldest finished jobs beyond its share of records (this replica's). */
  #trimClient(client: string): void {
    const max = this.#quota.limits.jobRecords;
    if (max === Infinity) return;
    const mine = [...this.#jobs.values()].filter((j) => j.client === client);
    if (mine.length <= max) return;
    const finished = mine.filter((j) => j.finishedAt !== undefined).sort((a, b) =>
      a.finishedAt! - b.finishedAt!
    );
    for (const job of finished.slice(0, mine.length - max)) {
      this.#jobs.delete(job.id);
      this.#o.logger?.info("job record dropped: its client holds its most job records", {
        job_id: job.id,
        max_records_per_client: max,
      });
    }
  }

  /** Resolves once the job's latest state is in the shared store (at once without one). */
  async persisted(id: string): Promise<void> {
    await this.#jobs.get(id)?.saving;
  }

  /**
   * The job's current state; throws `JOB_NOT_FOUND` for an unknown or expired id, or one that
   * belongs to another owner. Jobs of this process only: {@linkcode JobManager.status} asks
   * the shared store too.
   */
  get(id: string, owner?: string): JobView {
    this.#sweep();
    return this.#view(this.#find(id, owner));
  }

  /** The job's current state, wherever it runs; see {@linkcode JobManager.get}. */
  async status(id: string, owner?: string): Promise<JobView> {
    return this.#view(await this.#lookup(id, owner));
  }

  /** The owner's recent jobs, newest first, optionally of one status (this process's only). */
  list(
    options: { status?: JobStatus; limit?: number; owner?: string } = {},
  ): { jobs: JobView[]; total: number } {
    this.#sweep();
    return this.#listed([...this.#jobs.values()], options);
  }

  /** The owner's recent jobs on every replica; see {@linkcode JobManager.list}. */
  async query(
    options: { status?: JobStatus; limit?: number; owner?: string } = {},
  ): Promise<{ jobs: JobView[]; total: number }> {
    this.#sweep();
    const shared = this.#o.shared;
    if (!shared) return this.list(options);
    const key = ownerKey(options.owner);
    let records: JobRecord[];
    try {
      records = await shared.store.list(key, this.#o.maxRetained ?? 1000);
    } catch {
      return this.list(options);
    }
    // This replica's running jobs are fresher than their stored copies.
    const byId = new Map<string, JobRecord>(records.map((r) => [r.id, r]));
    for (const job of this.#jobs.values()) {
      if (job.owner === key && (!FINISHED.has(job.status) || !byId.has(job.id))) byId.set(job.id, job);
    }
    return this.#listed([...byId.values()], options);
  }

  /**
   * Cancels a queued or running job and waits for it to clean up. A finished job is left as it
   * is; its view says so. A job running on another replica is stopped there.
   */
  async cancel(id: string, owner?: string): Promise<JobView> {
    this.#sweep();
    const local = this.#jobs.get(id);
    if (local && local.owner === ownerKey(owner) && !FINISHED.has(local.status)) {
      this.#cancelLocal(local);
      await local.done;
      return this.#view(local);
    }
    const record = await this.#lookup(id, owner);
    const shared = this.#o.shared;
    if (FINISHED.has(record.status) || !shared) return this.#view(record);
    await this.#unavailableOnFailure(() => shared.store.requestCancel(id, this.#o.retentionMs));
    // The worker stops at once (pub/sub) or at its next lease renewal; a dead worker's job is
    // finished as cancelled by the replica that takes it over.
    const view = await this.wait(id, {
      timeoutMs: Math.round(shared.leaseMs / 3) + 2000,
      ...(owner === undefined ? {} : { owner }),
    });
    if (view.duration_seconds !== undefined) return view;
    return {
      ...view,
      status: "cancelled",
      message: "Cancel requested: the replica running the job stops it at its next step",
    };
  }

  /**
   * Waits until the job finishes, `timeoutMs` passes or `signal` aborts, calling `onChange`
   * after each change meanwhile. Resolves to the job's state at that point.
   */
  async wait(id: string, options: WaitOptions): Promise<JobView> {
    this.#sweep();
    const local = this.#jobs.get(id);
    if (!local || local.owner !== ownerKey(options.owner)) {
      if (this.#o.shared) return await this.#waitRemote(id, options);
    }
    const job = this.#find(id, options.owner);
    const deadline = this.#o.clock.now() + options.timeoutMs;
    let reported = job.version;
    while (!FINISHED.has(job.status) && !options.signal?.aborted && !job.leaving) {
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
    if (job.leaving === "lost" && this.#o.shared) return await this.#waitRemote(id, options);
    return this.#view(job);
  }

  /** Resolves when the job has finished (for shutdown and tests). */
  async settled(id: string): Promise<JobView> {
    const job = this.#find(id, undefined, true);
    await job.done;
    return this.#view(job);
  }

  /**
   * Stops every unfinished job and waits for them to clean up. Without a shared store they are
   * cancelled; with one they are handed over: their leases are given back, so another replica
   * takes them over at its next scan.
   */
  async close(): Promise<void> {
    this.#closed = true;
    metrics?.untrackJobs(this);
    this.#stopScan?.();
    const running = [...this.#jobs.values()].filter((j) => !FINISHED.has(j.status) && !j.leaving);
    for (const job of running) {
      if (this.#o.shared) job.leaving = "handover";
      job.controller.abort(new DOMException("The server is shutting down", "AbortError"));
    }
    await Promise.all(running.map((j) => j.done));
    (await this.#unsubscribe)?.();
  }

  #newJob(record: JobRecord): Job {
    let resolveDone!: () => void;
    const job: Job = {
      ...record,
      controller: new AbortController(),
      done: new Promise<void>((resolve) => (resolveDone = resolve)),
      listeners: new Set(),
      version: 0,
      saving: Promise.resolve(),
    };
    (job as Job & { resolveDone: () => void }).resolveDone = resolveDone;
    this.#jobs.set(record.id, job);
    return job;
  }

  /** Runs the work outside the starting call and, with a shared store, under a lease. */
  #launch(job: Job, run: StartJobOptions["run"]): void {
    const shared = this.#o.shared;
    if (shared) {
      job.replica = shared.store.replica;
      this.#save(job, async () => {
        if (job.resume && shared.signingKey) job.resumeSig = await signRecipe(shared.signingKey, job);
        await shared.store.lease(job.id, shared.leaseMs);
      });
      job.stopRenewal = every(Math.max(50, Math.round(shared.leaseMs / 3)), () => void this.#renew(job));
    }
    const resolveDone = (job as Job & { resolveDone: () => void }).resolveDone;
    // The job outlives the call that started it: it keeps the call's `fresh` but not its deadline.
    detachedFromDeadline(() =>
      Promise.resolve()
        .then(() => this.#run(job, run))
        .finally(async () => {
          job.stopRenewal?.();
          if (shared) {
            await job.saving;
            if (job.leaving !== "lost") await shared.store.release(job.id).catch(() => {});
            // Only a job this replica finished stays here; another replica has the others.
            if (job.leaving) this.#jobs.delete(job.id);
          }
          resolveDone();
        })
    );
  }

  async #run(job: Job, run: StartJobOptions["run"]): Promise<void> {
    const clock = this.#o.clock;
    // The work runs even when cancelled before it began: it owns resources (a half-open file)
    // that only it can release, and it returns at once on an aborted signal.
    job.startedAt = clock.now();
    if (!job.controller.signal.aborted) {
      this.#update(job, {
        status: "processing",
        message: job.message === "Job queued for processing" ? "Processing" : job.message,
      });
    }
    const handle: JobHandle = {
      id: job.id,
      signal: job.controller.signal,
      get handedOver() {
        return job.leaving !== undefined;
      },
      progress: (rows, total, message) => {
        if (FINISHED.has(job.status) || job.leaving) return;
        // Fewer rows than the checkpoint holds: the work started again, and its file with it.
        if (job.checkpoint && rows < job.checkpoint.rows) delete job.checkpoint;
        job.rowsFetched = rows;
        if (total !== undefined) job.estimatedTotal = total;
        delete job.nextRetryAt;
        this.#update(job, { message: message ?? job.message });
      },
      checkpoint: (point, total, message) => {
        if (FINISHED.has(job.status) || job.leaving) return;
        // Only a job another replica could resume needs it kept (and it is written with the progress).
        if (job.resume) job.checkpoint = structuredClone(point);
        handle.progress(point.rows, total, message);
      },
      retrying: (error, retryCount, delayMs) => {
        if (FINISHED.has(job.status) || job.leaving) return;
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
      if (job.leaving === "lost") return;
      // Finished before the shutdown reached it: it is this replica's to report after all.
      delete job.leaving;
      delete job.error;
      delete job.nextRetryAt;
      job.result = result;
      this.#finish(job, {
        status: incomplete ? "incomplete" : "completed",
        message: message ?? (incomplete ? "Finished without everything asked for" : "Completed"),
      });
    } catch (e) {
      delete job.nextRetryAt;
      if (job.leaving) {
        // Another replica has the job (or gets it at its next scan): nothing is final here.
        this.#o.logger?.info("job handed over", { job_id: job.id, reason: job.leaving });
        return;
      }
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
    // Nothing carries on from a finished job: its record keeps no file state.
    delete job.checkpoint;
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

  /** This replica's jobs by state, for `opendata_jobs`. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const job of this.#jobs.values()) out[job.status] = (out[job.status] ?? 0) + 1;
    return out;
  }

  #update(job: Job, change: { status?: JobStatus; message?: string }): void {
    if (change.status && change.status !== job.status) metrics?.jobTransitions.inc(1, change.status);
    if (change.status) job.status = change.status;
    if (change.message !== undefined) job.message = change.message;
    job.updatedAt = this.#o.clock.now();
    job.version += 1;
    for (const listener of [...job.listeners]) listener();
    if (this.#o.shared && !job.leaving) this.#save(job);
  }

  /**
   * Writes the job's state to the shared store after the writes before it. A failed write is
   * not retried: the next change writes the whole record again.
   */
  #save(job: Job, before?: () => Promise<void>): void {
    const shared = this.#o.shared!;
    job.saving = job.saving.then(async () => {
      try {
        await before?.();
        if (job.leaving === "lost") return;
        const record = recordOf(job);
        if (record.checkpoint && shared.signingKey) {
          record.checkpointSig = await signCheckpoint(shared.signingKey, record);
        }
        await shared.store.save(record, this.#o.retentionMs, !FINISHED.has(job.status));
        await shared.store.changed(job.id);
      } catch {
        // Out of reach: status answers come from this replica until it is back.
      }
    });
  }

  #cancelLocal(job: Job): void {
    job.controller.abort(new DOMException("The job was cancelled", "AbortError"));
    this.#update(job, { status: "cancelled", message: "Cancelling at the client's request" });
  }

  async #renew(job: Job): Promise<void> {
    const shared = this.#o.shared!;
    if (FINISHED.has(job.status) || job.leaving) return;
    let lease: LeaseState;
    try {
      lease = await shared.store.lease(job.id, shared.leaseMs);
    } catch {
      return; // Out of reach: the job goes on; the lease is taken again once the store is back.
    }
    if (FINISHED.has(job.status) || job.leaving) return;
    if (!lease.held) {
      // Our lease ran out (the store was out of reach for longer than it) and another replica
      // took the job over: stop without touching its record.
      job.leaving = "lost";
      this.#o.logger?.warn("job lease lost to another replica: stopping here", { job_id: job.id });
      job.controller.abort(new DOMException("Another replica took the job over", "AbortError"));
      return;
    }
    if (lease.cancel) this.#cancelLocal(job);
  }

  #onEvent(event: "changed" | "cancel", id: string): void {
    if (event === "cancel") {
      const job = this.#jobs.get(id);
      if (job && !FINISHED.has(job.status) && !job.leaving) void this.#renew(job);
      return;
    }
    for (const wake of [...(this.#remoteWaiters.get(id) ?? [])]) wake();
  }

  /** Looks for jobs whose replica died and takes them over. */
  async #scan(): Promise<void> {
    const shared = this.#o.shared!;
    if (this.#closed) return;
    let ids: string[];
    try {
      ids = await shared.store.orphans(this.#o.idPrefix);
    } catch {
      return;
    }
    for (const id of ids) {
      if (this.#closed) return;
      const mine = this.#jobs.get(id);
      if (mine && !FINISHED.has(mine.status) && !mine.leaving) {
        await this.#renew(mine);
        continue;
      }
      try {
        if (!(await shared.store.claim(id, shared.leaseMs))) continue;
        const record = await shared.store.load(id);
        if (!record || FINISHED.has(record.status)) {
          await shared.store.forget(id);
          await shared.store.release(id);
          continue;
        }
        await this.#adopt(record);
      } catch (e) {
        this.#o.logger?.warn("job takeover failed", {
          job_id: id,
          error: e instanceof Error ? e.message : String(e),
        });
      }
    }
  }

  /** Carries on with (or ends) a job whose replica died; this replica holds its lease. */
  async #adopt(record: JobRecord): Promise<void> {
    const shared = this.#o.shared!;
    const lease = await shared.store.lease(record.id, shared.leaseMs);
    const from = record.replica ?? "unknown";
    const takeovers = (record.takeovers ?? 0) + 1;
    const refused = await this.#refusedRecipe(record);
    const resumer = record.resume && !refused ? this.#resumers.get(record.resume.kind) : undefined;
    const now = this.#o.clock.now();
    const base: JobRecord = { ...record, takeovers, replica: shared.store.replica, updatedAt: now };
    delete base.nextRetryAt;
    if (lease.cancel || !resumer || takeovers > MAX_TAKEOVERS) {
      const final: JobRecord = lease.cancel
        ? {
          ...base,
          status: "cancelled",
          message: "The job was cancelled; no file was kept",
          finishedAt: now,
        }
        : {
          ...base,
          status: "failed",
          finishedAt: now,
          message: "The job failed: the server replica running it stopped before it finished",
          error: {
            code: "WORKER_LOST",
            message: refused
              ? `The server replica running this job stopped before it finished, and its stored recipe was not resumed: ${refused}; start the same request again`
              : !resumer
              ? `The server replica running this job (${from}) stopped before it finished, and this job cannot be resumed elsewhere; start the same request again`
              : `The server replica running this job stopped before it finished, ${
                takeovers - 1
              } times; start the same request again`,
            retryable: true,
          },
        };
      // Only a trusted recipe's: a refused one names nothing to touch.
      if (resumer) await this.#abandon(record);
      await shared.store.save(final, this.#o.retentionMs, false);
      await shared.store.changed(record.id);
      await shared.store.release(record.id);
      this.#o.logger?.warn("job taken over from a replica that stopped", {
        job_id: record.id,
        from_replica: from,
        action: final.status,
      });
      return;
    }
    const checkpoint = await this.#trustedCheckpoint(record);
    this.#o.logger?.warn("job taken over from a replica that stopped", {
      job_id: record.id,
      from_replica: from,
      action: "resumed",
      takeovers,
      from_row: checkpoint?.rows ?? 0,
    });
    const job = this.#newJob({
      ...base,
      status: "processing",
      message: checkpoint
        ? `Resumed on this replica after the replica running it (${from}) stopped; carrying on from row ${checkpoint.rows}`
        : `Resumed on this replica after the replica running it (${from}) stopped; fetching again`,
      rowsFetched: checkpoint?.rows ?? 0,
    });
    delete job.error;
    delete job.startedAt;
    delete job.checkpointSig;
    if (!checkpoint) delete job.checkpoint;
    this.#launch(job, (handle) => resumer(record.resume!.data, handle, ownerRefOf(record), checkpoint));
  }

  /** Runs the abandoner of a job ended at its takeover; a failure is logged, never thrown. */
  async #abandon(record: JobRecord): Promise<void> {
    const abandon = record.resume && this.#abandoners.get(record.resume.kind);
    if (!abandon) return;
    try {
      await abandon(record.resume!.data, ownerRefOf(record));
    } catch (e) {
      this.#o.logger?.warn("job cleanup after its takeover failed", {
        job_id: record.id,
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }

  /**
   * The taken-over record's checkpoint, when it may be trusted: with a shared key it must carry
   * a valid signature; an untrusted one is dropped and the work starts again from its first row.
   */
  async #trustedCheckpoint(record: JobRecord): Promise<JobCheckpoint | undefined> {
    const key = this.#o.shared?.signingKey;
    if (!record.checkpoint || !key || (await checkpointSignatureValid(key, record))) return record.checkpoint;
    this.#o.logger?.warn("job checkpoint not trusted: starting again from the first row", {
      job_id: record.id,
      reason: "it is not signed with the replicas' shared key (MCP_REQUEST_STATE_KEY)",
    });
    return undefined;
  }

  /**
   * Why a taken-over record's recipe must not run, if so: the recipe is run with the operator's
   * upstream keys and writes into the owner's folder, and the record comes from the shared store.
   */
  async #refusedRecipe(record: JobRecord): Promise<string | undefined> {
    if (!record.resume) return undefined;
    const key = this.#o.shared?.signingKey;
    let why: string | undefined;
    // A job of no owner is a stdio server's: its files are that user's storage root, which no
    // other replica writes into.
    if (record.owner === "") why = "a job started over stdio is resumed only by the process that started it";
    else if (key && !(await recipeSignatureValid(key, record))) {
      why = "it is not signed with the replicas' shared key (MCP_REQUEST_STATE_KEY)";
    }
    if (why) {
      this.#o.logger?.warn("job takeover refused: its recipe is not trusted", {
        job_id: record.id,
        reason: why,
      });
    }
    return why;
  }

  async #waitRemote(id: string, options: WaitOptions): Promise<JobView> {
    const shared = this.#o.shared!;
    const clock = this.#o.clock;
    const deadline = clock.now() + options.timeoutMs;
    let view = this.#view(await this.#lookup(id, options.owner));
    let seen = view.updated_at + JSON.stringify(view.progress ?? null);
    const poll = Math.max(50, Math.min(1000, Math.round(shared.leaseMs / 3)));
    // Finished means written as final by its worker (a job being cancelled reads `cancelled` first).
    while (view.duration_seconds === undefined && !options.signal?.aborted) {
      const remaining = deadline - clock.now();
      if (remaining <= 0) break;
      const stop = new AbortController();
      const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const waiters = this.#remoteWaiters.get(id) ?? new Set();
      waiters.add(wake);
      this.#remoteWaiters.set(id, waiters);
      await Promise.race([woken, clock.sleep(Math.min(poll, remaining), signal).catch(() => {})]);
      waiters.delete(wake);
      if (waiters.size === 0) this.#remoteWaiters.delete(id);
      stop.abort();
      if (options.signal?.aborted) break;
      view = this.#view(await this.#lookup(id, options.owner));
      const now = view.updated_at + JSON.stringify(view.progress?.rows_fetched ?? null);
      if (now !== seen) {
        seen = now;
        await options.onChange?.(view);
      }
    }
    return view;
  }

  /**
   * The freshest state of a job: this replica's while it runs the job here, else the shared
   * store's, else this replica's memory (the store may be out of reach).
   */
  async #lookup(id: string, owner: string | undefined): Promise<JobRecord> {
    this.#sweep();
    const shared = this.#o.shared;
    const local = this.#jobs.get(id);
    if (!shared || (local && !FINISHED.has(local.status) && !local.leaving)) return this.#find(id, owner);
    let record: JobRecord | undefined;
    try {
      record = await shared.store.load(id);
    } catch (e) {
      if (local) return this.#find(id, owner);
      throw unavailable(e);
    }
    if (!record) return this.#find(id, owner);
    if (record.owner !== ownerKey(owner)) throw this.#notFound(id);
    return record;
  }

  async #unavailableOnFailure(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      throw unavailable(e);
    }
  }

  #listed(
    all: JobRecord[],
    options: { status?: JobStatus; limit?: number; owner?: string },
  ): { jobs: JobView[]; total: number } {
    const key = ownerKey(options.owner);
    const matching = all
      .filter((j) => j.owner === key && (!options.status || j.status === options.status))
      .sort((a, b) => b.createdAt - a.createdAt);
    return { jobs: matching.slice(0, options.limit ?? 10).map((j) => this.#view(j)), total: matching.length };
  }

  /** The job, if it exists and `owner` may see it (any owner with `anyOwner`). */
  #find(id: string, owner: string | undefined, anyOwner = false): Job {
    const job = this.#jobs.get(id);
    // Another owner's job is answered exactly like a missing one: its existence is not revealed.
    if (!job || (!anyOwner && job.owner !== ownerKey(owner))) throw this.#notFound(id);
    return job;
  }

  #notFound(id: string): ToolError {
    return new ToolError("JOB_NOT_FOUND", `Job not found: "${id}"`, {
      field: "job_id",
      hint: `Jobs are kept for ${
        Math.round(this.#o.retentionMs / 3_600_000 * 10) / 10
      } hours after they finish, and over HTTP only the session that started a job sees it; list your jobs with the job list tool`,
    });
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
      for (const job of evictable(finished, finished.length - max)) this.#jobs.delete(job.id);
    }
  }

  #view(job: JobRecord): JobView {
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

/**
 * The `count` finished jobs to drop past the replica's cap: one at a time, the oldest of the
 * client holding the most (stdio's jobs count as one client), so a flood of one client or a few
 * pushes out its own records and never a smaller client's while another holds more.
 */
function evictable(finished: readonly JobRecord[], count: number): JobRecord[] {
  const byClient = new Map<string, JobRecord[]>();
  for (const job of finished) {
    const key = job.client ?? `owner:${job.owner}`;
    const list = byClient.get(key) ?? [];
    list.push(job);
    byClient.set(key, list);
  }
  for (const list of byClient.values()) list.sort((a, b) => b.finishedAt! - a.finishedAt!);
  const out: JobRecord[] = [];
  for (let i = 0; i < count; i++) {
    let top: JobRecord[] | undefined;
    for (const list of byClient.values()) {
      // Ties go to the client whose oldest record is older.
      if (
        !top || list.length > top.length ||
        (list.length === top.length && list.length > 0 && list.at(-1)!.finishedAt! < top.at(-1)!.finishedAt!)
      ) top = list;
    }
    const job = top?.pop();
    if (!job) break;
    out.push(job);
  }
  return out;
}

/** Whose job a stored record is, as a resumer is told. */
function ownerRefOf(record: JobRecord): OwnerRef {
  return {
    hash: record.owner === "" ? undefined : record.owner,
    ...(record.client === undefined ? {} : { client: record.client }),
  };
}

/** The storable part of a job. */
function recordOf(job: Job): JobRecord {
  const {
    controller: _c,
    done: _d,
    listeners: _l,
    version: _v,
    saving: _s,
    leaving: _g,
    stopRenewal: _r,
    ...record
  } = job;
  delete (record as Record<string, unknown>)["resolveDone"];
  return record;
}

function unavailable(cause: unknown): ToolError {
  return new ToolError(
    "SERVICE_UNAVAILABLE",
    "The shared job store (Redis) is out of reach, and this job is not running on the replica that answered",
    {
      retryable: true,
      retryAfterS: 5,
      hint: "Try again in a few seconds",
      cause,
    },
  );
}

/** Runs `fn` every `ms` milliseconds without keeping the process alive; returns the stop function. */
function every(ms: number, fn: () => void): () => void {
  const id = setInterval(fn, ms);
  Deno.unrefTimer(id);
  return () => clearInterval(id);
}
