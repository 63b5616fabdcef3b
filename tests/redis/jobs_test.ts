// JobManager over the Redis job store: two managers stand for two replicas.
import assert from "node:assert/strict";
import { systemClock } from "../../lib/clock.ts";
import { Logger } from "../../lib/log.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import { ownerHash } from "../../lib/output/storage.ts";
import type { JobHandle } from "../../lib/output/jobs.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { RedisJobStore } from "../../lib/redis/job_store.ts";
import { startRedis } from "./_redis_server.ts";

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Work that runs until its job is stopped. */
function forever(job: JobHandle): Promise<never> {
  job.progress(1, 10, "Working");
  return new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason)));
}

Deno.test("JobManager with a shared store fails or resumes a job whose replica went away", async (t) => {
  await using redis = await startRedis();
  const conns: RedisConnection[] = [];
  const replica = async (name: string): Promise<JobManager> => {
    const conn = await RedisConnection.connect({
      url: redis.url,
      prefix: "jobs-test:",
      timeoutMs: 1000,
      retryMaxMs: 200,
      logger: new Logger(),
    });
    conns.push(conn);
    return new JobManager({
      clock: systemClock,
      retentionMs: 3_600_000,
      idPrefix: "fred-job",
      shared: { store: new RedisJobStore(conn, name), leaseMs: 300, takeoverIntervalMs: 100 },
    });
  };
  try {
    await t.step("a job that cannot be resumed is failed, retryable, with the reason", async () => {
      const a = await replica("a");
      const b = await replica("b");
      const view = a.start({
        kind: "observations",
        owner: "session:1",
        request: { series_id: "X" },
        run: forever,
      });
      await a.persisted(view.job_id);
      await a.close(); // the replica goes away; its lease is given back
      const failed = await until("the takeover", async () => {
        const v = await b.status(view.job_id, "session:1");
        return v.status === "failed" ? v : undefined;
      });
      assert.equal(failed.error?.code, "WORKER_LOST");
      assert.equal(failed.error?.retryable, true);
      assert.match(failed.error?.message ?? "", /stopped before it finished.*start the same request again/);
      await assert.rejects(
        () => b.status(view.job_id, "session:2"),
        /Job not found/,
        "still its owner's only",
      );
      await b.close();
    });

    await t.step("a resumable job is carried on by the other replica with the data it left", async () => {
      const a = await replica("a2");
      const b = await replica("b2");
      const seen: Record<string, unknown>[] = [];
      b.resumable("test.kind", (data, job, owner) => {
        seen.push({ data, owner: owner.hash, client: owner.client });
        job.progress(10, 10, "Redone");
        return Promise.resolve({ result: { rows_written: 10 } });
      });
      const view = a.start({
        kind: "observations",
        owner: "session:1",
        client: "ip:10.0.0.1",
        request: { series_id: "Y" },
        resume: { kind: "test.kind", data: { series_id: "Y" } },
        run: forever,
      });
      await a.persisted(view.job_id);
      await a.close();
      const done = await b.wait(view.job_id, { timeoutMs: 10_000, owner: "session:1" });
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.deepEqual(done.result, { rows_written: 10 });
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0]!["data"], { series_id: "Y" });
      assert.match(String(seen[0]!["owner"]), /^[0-9a-f]{32}$/, "the owner travels as a hash");
      // So does the client, as the storage counts it: the resumed job's file stays in its share.
      assert.equal(seen[0]!["client"], ownerHash("client:ip:10.0.0.1"));
      assert.doesNotMatch(await redis.command("KEYS", "*"), /session:1/, "no raw owner id in Redis");
      await b.close();
    });
  } finally {
    for (const c of conns) await c.close();
  }
});
