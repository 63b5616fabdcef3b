// The job manager's part of the per-client quota: running jobs and kept records.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { ToolError } from "../../lib/errors.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import { QuotaLedger, UNLIMITED } from "../../lib/output/quota.ts";

function manager(clock = new FakeClock(Date.UTC(2026, 0, 1))): JobManager {
  return new JobManager({
    clock,
    retentionMs: 24 * 3_600_000,
    idPrefix: "t-job",
    quota: new QuotaLedger({
      writes: "on",
      limits: { ...UNLIMITED, jobs: 2, jobRecords: 3 },
      settings: { projects: "T_QUOTA_PROJECTS", bytes: "T_QUOTA_MB", jobs: "T_QUOTA_JOBS" },
    }),
  });
}

const quick = { kind: "quick", request: {}, run: () => Promise.resolve({ result: {} }) };

Deno.test("JobManager.start() refuses a client's job past quota_jobs with QUOTA_EXCEEDED; other clients and stdio start theirs", async () => {
  const jobs = manager();
  const release = Promise.withResolvers<void>();
  const slow = { kind: "slow", request: {}, run: async () => (await release.promise, { result: {} }) };
  jobs.start({ ...slow, owner: "session:a1", client: "ip:203.0.113.9" });
  jobs.start({ ...slow, owner: "session:a2", client: "ip:203.0.113.9" });
  const refused = (() => {
    try {
      jobs.start({ ...slow, owner: "session:a3", client: "ip:203.0.113.9" });
    } catch (e) {
      return e;
    }
  })();
  assert.ok(refused instanceof ToolError);
  const payload = refused.toPayload();
  assert.equal(payload.error_type, "QUOTA_EXCEEDED");
  assert.equal(payload.retryable, true);
  assert.equal(payload.retry_after_s, 30);
  assert.match(
    payload.message,
    /your client runs 2 background jobs, the most one client may run at once \(2\)/,
  );
  assert.match(String(payload.hint), /T_QUOTA_JOBS/);
  assert.doesNotThrow(() => jobs.checkCapacity("ip:198.51.100.1"));
  jobs.start({ ...slow, owner: "session:b", client: "ip:198.51.100.1" });
  jobs.start({ ...slow });
  jobs.start({ ...slow });
  jobs.start({ ...slow });
  release.resolve();
  await jobs.close();
});

Deno.test("JobManager keeps quota_job_records records per client, dropping that client's own oldest finished first", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const jobs = manager(clock);
  const victim = jobs.start({ ...quick, owner: "session:v", client: "ip:198.51.100.1" });
  await jobs.wait(victim.job_id, { timeoutMs: 1_000, owner: "session:v" });
  const mine: string[] = [];
  for (let i = 0; i < 10; i++) {
    clock.advance(1_000);
    const view = jobs.start({ ...quick, owner: "session:h", client: "ip:203.0.113.9" });
    mine.push(view.job_id);
    await jobs.wait(view.job_id, { timeoutMs: 1_000, owner: "session:h" });
  }
  const kept = jobs.list({ owner: "session:h", limit: 100 });
  assert.equal(kept.total, 3, "the flooding client keeps its share of records");
  assert.deepEqual(kept.jobs.map((j) => j.job_id).sort(), mine.slice(-3).sort(), "its newest ones");
  assert.equal(
    jobs.get(victim.job_id, "session:v").status,
    "completed",
    "the victim's finished job is still there",
  );
  await jobs.close();
});
