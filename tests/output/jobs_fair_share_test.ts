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

Deno.test("JobManager past its replica-wide cap drops the finished jobs of the client holding the most, never a smaller client's", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  // 11 flooders at 9 records each (under their own share of 10) against a cap of 50 records.
  const jobs = new JobManager({
    clock,
    retentionMs: 24 * 3_600_000,
    idPrefix: "t-job",
    maxRetained: 50,
    quota: new QuotaLedger({ writes: "on", limits: { ...UNLIMITED, jobRecords: 10 } }),
  });
  const victim = jobs.start({ ...quick, owner: "session:v", client: "ip:198.51.100.1" });
  await jobs.settled(victim.job_id);
  clock.advance(1000);
  for (let round = 0; round < 9; round++) {
    for (let flooder = 1; flooder <= 11; flooder++) {
      const view = jobs.start({ ...quick, owner: `session:f${flooder}`, client: `ip:203.0.113.${flooder}` });
      await jobs.settled(view.job_id);
      clock.advance(1000);
    }
  }
  // The victim's one finished job outlived 99 newer ones of others.
  assert.equal(jobs.get(victim.job_id, "session:v").status, "completed");
  const kept = Array.from(
    { length: 11 },
    (_, i) => jobs.list({ owner: `session:f${i + 1}`, limit: 100 }).total,
  );
  assert.equal(kept.reduce((a, b) => a + b, 0), 49, "the cap holds: 50 records with the victim's");
  assert.ok(Math.max(...kept) - Math.min(...kept) <= 1, `the flooders share what is left: ${kept.join(",")}`);
  await jobs.close();
});
