import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import type { Clock } from "../../lib/clock.ts";
import { ToolError } from "../../lib/errors.ts";
import { Logger } from "../../lib/log.ts";
import { JobManager, jobViewSchema, parseJobRecord } from "../../lib/output/jobs.ts";
import type { JobHandle } from "../../lib/output/jobs.ts";

const HOUR = 3_600_000;

function manager(
  clock: Clock = new FakeClock(Date.UTC(2025, 9, 8, 14, 30, 22)),
  logger?: Logger,
): JobManager {
  return new JobManager({
    clock,
    retentionMs: 24 * HOUR,
    idPrefix: "fred-job",
    ...(logger ? { logger } : {}),
  });
}

/** A promise the test resolves when it wants the job to go on. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A clock whose sleeps end only when aborted, so waits end on job events alone. */
class StillClock implements Clock {
  now(): number {
    return Date.UTC(2025, 9, 8);
  }
  sleep(_ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((_, reject) =>
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true })
    );
  }
}

Deno.test("JobManager.start() answers accepted at once and runs the job to completion", async () => {
  const clock = new FakeClock(Date.UTC(2025, 9, 8, 14, 30, 22));
  const jobs = manager(clock);
  const view = jobs.start({
    kind: "observations",
    request: { series_id: "GNPCA" },
    estimatedRows: 200,
    run: (job) => {
      clock.advance(2000);
      job.progress(100, 200, "Half");
      clock.advance(2000);
      job.progress(200);
      return Promise.resolve({ result: { rows_written: 200 }, message: "Done" });
    },
  });
  assert.match(view.job_id, /^fred-job-[0-9a-f]{8}-20251008-143022$/);
  assert.equal(view.status, "accepted");
  assert.equal(view.message, "Job queued for processing");
  assert.equal(view.progress, undefined);
  jobViewSchema.parse(view);
  const done = await jobs.settled(view.job_id);
  assert.equal(done.status, "completed");
  assert.equal(done.message, "Done");
  assert.deepEqual(done.result, { rows_written: 200 });
  assert.deepEqual(done.progress, {
    rows_fetched: 200,
    estimated_total: 200,
    percent_complete: 100,
    elapsed_seconds: 4,
  });
  assert.equal(done.duration_seconds, 4);
  assert.equal(done.error, undefined);
  jobViewSchema.parse(done);
});

Deno.test("JobManager reports progress while a job is processing", async () => {
  const jobs = manager();
  const g = gate();
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    estimatedRows: 75_000,
    run: async (job) => {
      job.progress(35_000, undefined, "Fetching observations from FRED API...");
      await g.wait;
      return { result: {} };
    },
  });
  await Promise.resolve();
  await Promise.resolve();
  const view = jobs.get(job_id);
  assert.equal(view.status, "processing");
  assert.equal(view.message, "Fetching observations from FRED API...");
  assert.equal(view.progress?.percent_complete, 46);
  g.open();
  assert.equal((await jobs.settled(job_id)).status, "completed");
});

Deno.test("JobManager marks a job failed with the ToolError's code, or INTERNAL_ERROR and a log line", async () => {
  const lines: string[] = [];
  const jobs = manager(undefined, new Logger({ write: (l) => lines.push(l) }));
  const a = jobs.start({
    kind: "k",
    request: {},
    run: () =>
      Promise.reject(
        new ToolError("RATE_LIMIT_EXCEEDED", "FRED API rate limit exceeded", { retryable: true }),
      ),
  });
  const failed = await jobs.settled(a.job_id);
  assert.equal(failed.status, "failed");
  assert.deepEqual(failed.error, { code: "RATE_LIMIT_EXCEEDED", message: "FRED API rate limit exceeded" });
  assert.equal(failed.retry_count, 0);
  assert.equal(failed.next_retry_in_seconds, null);
  jobViewSchema.parse(failed);

  const b = jobs.start({
    kind: "k",
    request: {},
    run: () => Promise.reject(new Error("disk on fire /secret/path")),
  });
  const crashed = await jobs.settled(b.job_id);
  assert.equal(crashed.error?.code, "INTERNAL_ERROR");
  assert.ok(!crashed.error?.message.includes("/secret/path"), "internals stay in the log");
  assert.ok(lines.some((l) => l.includes("job failed unexpectedly") && l.includes("disk on fire")));
});

Deno.test("JobManager shows a pending retry with its count and wait", async () => {
  const clock = new FakeClock();
  const jobs = manager(clock);
  const g = gate();
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    run: async (job) => {
      job.retrying({ code: "SERVER_ERROR", message: "FRED API server error (HTTP 503)" }, 1, 30_000);
      await g.wait;
      job.progress(10, 10);
      return { result: {} };
    },
  });
  await Promise.resolve();
  await Promise.resolve();
  clock.advance(10_000);
  const view = jobs.get(job_id);
  assert.equal(view.status, "processing");
  assert.equal(view.retry_count, 1);
  assert.equal(view.next_retry_in_seconds, 20);
  assert.equal(view.error?.code, "SERVER_ERROR");
  assert.match(view.message, /retrying in 30 s/);
  g.open();
  const done = await jobs.settled(job_id);
  assert.equal(done.status, "completed");
  assert.equal(done.error, undefined, "a retry that succeeded leaves no error");
  assert.equal(done.next_retry_in_seconds, undefined);
});

Deno.test("JobManager.cancel() aborts a running job, waits for its cleanup, and leaves finished jobs alone", async () => {
  const jobs = manager();
  let cleanedUp = false;
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    run: (job: JobHandle) =>
      new Promise((_, reject) => {
        job.signal.addEventListener("abort", () => {
          cleanedUp = true;
          reject(job.signal.reason);
        });
      }),
  });
  await Promise.resolve();
  const view = await jobs.cancel(job_id);
  assert.equal(view.status, "cancelled");
  assert.equal(cleanedUp, true, "cancel resolved after the job cleaned up");
  assert.match(view.message, /cancelled/);

  const quick = jobs.start({ kind: "k", request: {}, run: () => Promise.resolve({ result: { ok: 1 } }) });
  await jobs.settled(quick.job_id);
  assert.equal((await jobs.cancel(quick.job_id)).status, "completed");
});

Deno.test("JobManager reports a job that finished its work while being cancelled as completed", async () => {
  const jobs = manager();
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    // Its file was already in place when the cancel came: the result exists.
    run: (job: JobHandle) =>
      new Promise((resolve) => {
        job.signal.addEventListener("abort", () => resolve({ result: { file_path: "/data/x.csv" } }));
      }),
  });
  await Promise.resolve();
  const view = await jobs.cancel(job_id);
  assert.equal(view.status, "completed");
  assert.deepEqual(view.result, { file_path: "/data/x.csv" });
  assert.doesNotMatch(view.message, /no file was kept/);
});

Deno.test("JobManager runs a job cancelled before it started, so it can release what it holds", async () => {
  const jobs = manager();
  let sawAbort = false;
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    run: (job) => {
      sawAbort = job.signal.aborted;
      return Promise.reject(job.signal.reason);
    },
  });
  const view = await jobs.cancel(job_id);
  assert.equal(view.status, "cancelled");
  assert.equal(sawAbort, true);
});

Deno.test("JobManager keeps finished jobs 24 hours, then answers JOB_NOT_FOUND", async () => {
  const clock = new FakeClock();
  const jobs = manager(clock);
  const g = gate();
  const done = jobs.start({ kind: "k", request: {}, run: () => Promise.resolve({ result: {} }) });
  const running = jobs.start({ kind: "k", request: {}, run: async () => (await g.wait, { result: {} }) });
  await jobs.settled(done.job_id);
  clock.advance(24 * HOUR - 1);
  assert.equal(jobs.get(done.job_id).status, "completed");
  clock.advance(1);
  assert.throws(() => jobs.get(done.job_id), (e: unknown) => {
    assert.ok(e instanceof ToolError);
    assert.equal(e.errorType, "JOB_NOT_FOUND");
    assert.match(e.hint ?? "", /24 hours/);
    return true;
  });
  assert.equal(jobs.get(running.job_id).status, "processing", "running jobs never expire");
  g.open();
  await jobs.settled(running.job_id);
});

Deno.test("JobManager.list() filters by status, limits, and puts the newest first", async () => {
  const clock = new FakeClock();
  const jobs = manager(clock);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(jobs.start({ kind: `k${i}`, request: {}, run: () => Promise.resolve({ result: {} }) }).job_id);
    clock.advance(1000);
  }
  const failing = jobs.start({
    kind: "bad",
    request: {},
    run: () => Promise.reject(new ToolError("X", "x")),
  });
  for (const id of [...ids, failing.job_id]) await jobs.settled(id);
  const all = jobs.list({ limit: 2 });
  assert.equal(all.total, 4);
  assert.deepEqual(all.jobs.map((j) => j.kind), ["bad", "k2"]);
  const completed = jobs.list({ status: "completed" });
  assert.deepEqual(completed.jobs.map((j) => j.kind), ["k2", "k1", "k0"]);
  assert.equal(jobs.list({ status: "failed" }).total, 1);
});

Deno.test("JobManager.wait() reports each change and returns when the job finishes", async () => {
  const jobs = manager(new StillClock());
  const gates = [gate(), gate(), gate()];
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    estimatedRows: 2,
    run: async (job) => {
      await gates[0]!.wait;
      job.progress(1);
      await gates[1]!.wait;
      job.progress(2);
      await gates[2]!.wait;
      return { result: { rows_written: 2 } };
    },
  });
  const seen: number[] = [];
  const waiting = jobs.wait(job_id, {
    timeoutMs: 60_000,
    onChange: (v) => {
      const rows = v.progress?.rows_fetched ?? -1;
      seen.push(rows);
      gates[rows]?.open();
    },
  });
  gates[0]!.open();
  const view = await waiting;
  assert.equal(view.status, "completed");
  assert.ok(seen.includes(1) && seen.includes(2), `every change was reported: ${seen.join(",")}`);
  assert.equal(seen.at(-1), 2, "the last report is the finished state");
});

Deno.test("JobManager.wait() returns the current state at the timeout or when its signal aborts", async () => {
  const jobs = manager(new FakeClock());
  const g = gate();
  const { job_id } = jobs.start({ kind: "k", request: {}, run: async () => (await g.wait, { result: {} }) });
  await Promise.resolve();
  // The fake clock's sleep ends at once: the timeout passes without a real wait.
  assert.equal((await jobs.wait(job_id, { timeoutMs: 30_000 })).status, "processing");
  const stop = new AbortController();
  stop.abort();
  assert.equal((await jobs.wait(job_id, { timeoutMs: 30_000, signal: stop.signal })).status, "processing");
  g.open();
  await jobs.settled(job_id);
});

Deno.test("JobManager.close() cancels unfinished jobs and waits for them", async () => {
  const jobs = manager();
  const { job_id } = jobs.start({
    kind: "k",
    request: {},
    run: (job) =>
      new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason))),
  });
  await Promise.resolve();
  await jobs.close();
  assert.equal(jobs.get(job_id).status, "cancelled");
});

Deno.test("JobManager answers another owner's job as not found, and lists each owner's own", async () => {
  const jobs = manager();
  const a = jobs.start({
    kind: "k",
    request: {},
    owner: "session-a",
    // Runs until cancelled.
    run: (job) =>
      new Promise((_, reject) =>
        job.signal.addEventListener("abort", () => reject(job.signal.reason), { once: true })
      ),
  });
  jobs.start({ kind: "k", request: {}, run: () => Promise.resolve({ result: {} }) });
  for (const attempt of [() => jobs.get(a.job_id, "session-b"), () => jobs.get(a.job_id)]) {
    assert.throws(attempt, (e: unknown) => e instanceof ToolError && e.errorType === "JOB_NOT_FOUND");
  }
  await assert.rejects(jobs.cancel(a.job_id, "session-b"), (e: unknown) => e instanceof ToolError);
  await assert.rejects(
    jobs.wait(a.job_id, { timeoutMs: 1, owner: "session-b" }),
    (e: unknown) => e instanceof ToolError,
  );
  assert.equal(jobs.list({ owner: "session-b" }).total, 0);
  assert.equal(jobs.list({ owner: "session-a" }).total, 1);
  assert.equal(jobs.list().total, 1, "no owner (stdio) sees the jobs started without one");
  assert.equal(jobs.get(a.job_id, "session-a").job_id, a.job_id);
  assert.equal((await jobs.cancel(a.job_id, "session-a")).status, "cancelled");
});

Deno.test("JobManager finishes a job that produced less than asked for as incomplete", async () => {
  const jobs = manager();
  const view = jobs.start({
    kind: "k",
    request: {},
    run: () =>
      Promise.resolve({ result: { missing: { rows: 5 } }, message: "Saved 10 of 15", incomplete: true }),
  });
  const done = await jobs.settled(view.job_id);
  assert.equal(done.status, "incomplete");
  assert.equal(done.message, "Saved 10 of 15");
  assert.deepEqual(done.result, { missing: { rows: 5 } });
  assert.equal(jobs.list({ status: "incomplete" }).total, 1);
  assert.equal((await jobs.cancel(view.job_id)).status, "incomplete", "a finished job is left as it is");
  assert.ok(jobViewSchema.safeParse(done).success);
});

Deno.test("parseJobRecord() takes a record's client hash and refuses one that is not a hash", () => {
  const base = {
    id: "fred-job-1",
    owner: "",
    kind: "fred_series",
    request: {},
    status: "completed",
    message: "done",
    createdAt: 1,
    updatedAt: 2,
    rowsFetched: 0,
    estimatedTotal: null,
    retryCount: 0,
  };
  const client = "0123456789abcdef0123456789abcdef";
  const good = parseJobRecord(JSON.stringify({ ...base, client }), "fred-job-1");
  assert.ok(!("problem" in good));
  assert.equal(good.client, client);
  const forged = parseJobRecord(JSON.stringify({ ...base, client: "../../etc/passwd" }), "fred-job-1");
  assert.ok("problem" in forged && forged.problem.startsWith("client"), JSON.stringify(forged));
});
