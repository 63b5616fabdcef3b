// JobManager over the Redis job store: managers stand for replicas (takeovers, signed recipes).
import assert from "node:assert/strict";
import { JobManager } from "../../lib/output/jobs.ts";
import { ownerHash } from "../../lib/output/storage.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { recipeSigningKey } from "../../lib/output/job_signing.ts";
import { startRedis } from "./_redis_server.ts";
import { forever, replicas, storedJob } from "./_job_replicas.ts";
import { until } from "../harness/until.ts";

Deno.test("JobManager with a shared store fails or resumes a job whose replica went away", async (t) => {
  await using redis = await startRedis();
  const conns: RedisConnection[] = [];
  const replica = replicas(redis.url, "jobs-test:", conns);
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

// Takeover recipes are signed with a key derived from the replicas' shared secret
// (lib/output/job_signing.ts): a record forged in Redis (unsigned, with a wrong signature, or a
// signed recipe moved to another owner or job) is failed by the replica that takes it over, and
// its recipe never runs.
const PREFIX = "signed-test:";
const SECRET = "a-shared-secret-of-at-least-32-characters";

Deno.test("JobManager refuses to resume a forged or moved takeover recipe", async (t) => {
  await using redis = await startRedis();
  const conns: RedisConnection[] = [];
  const key = await recipeSigningKey(SECRET);
  const replica = async (name: string, signingKey: CryptoKey | undefined = key): Promise<JobManager> =>
    await replicas(redis.url, PREFIX, conns)(name, signingKey);
  const stored = (id: string) => storedJob(redis, PREFIX, id);
  /** Writes `record` as a running job whose replica is gone, for the other replica to take over. */
  const forge = async (record: Record<string, unknown>): Promise<void> => {
    const id = String(record["id"]);
    const owner = String(record["owner"]);
    await redis.command("SET", `${PREFIX}job:${id}`, JSON.stringify(record));
    await redis.command("ZADD", `${PREFIX}jobs:owner:${owner === "" ? "-" : owner}`, String(Date.now()), id);
    await redis.command("ZADD", `${PREFIX}jobs:active`, String(Date.now()), id);
  };
  try {
    // A genuine job on replica a, finished there, to copy its signed record from.
    const a = await replica("a");
    const genuine = a.start({
      kind: "observations",
      owner: "session:alice",
      client: "ip:10.0.0.1",
      request: { series_id: "Y" },
      resume: { kind: "test.kind", data: { series_id: "Y", project: "default" } },
      run: () => Promise.resolve({ result: { rows_written: 1 } }),
    });
    await a.settled(genuine.job_id);
    await a.persisted(genuine.job_id);
    const signed = await stored(genuine.job_id);
    assert.match(String(signed["resumeSig"]), /^[0-9a-f]{64}$/, "the stored recipe is signed");
    await a.close();

    const b = await replica("b");
    const ran: unknown[] = [];
    b.resumable("test.kind", (data, job, owner) => {
      ran.push({ data, owner: owner.hash, id: job.id });
      return Promise.resolve({ result: { rows_written: 1 } });
    });
    const mallory = ownerHash("session:mallory");
    const base = { ...signed, status: "processing", replica: "replica-gone", finishedAt: undefined };
    const cases: [string, Record<string, unknown>][] = [
      ["unsigned", { ...base, id: "fred-job-unsigned", resumeSig: undefined }],
      ["wrong signature", { ...base, id: "fred-job-wrongsig", resumeSig: "0".repeat(64) }],
      ["moved to another owner", { ...base, id: genuine.job_id, owner: mallory }],
      ["moved to another job", { ...base, id: "fred-job-copied" }],
      [
        "a changed recipe",
        { ...base, id: "fred-job-changed", resume: { kind: "test.kind", data: { series_id: "Z" } } },
      ],
    ];
    for (const [label, record] of cases) {
      await t.step(`${label}: failed, never run`, async () => {
        await forge(record);
        const owner = String(record["owner"]);
        const failed = await until(`the takeover of ${label}`, async () => {
          const r = await stored(String(record["id"]));
          return r["status"] === "failed" ? r : undefined;
        });
        assert.match(JSON.stringify(failed["error"]), /not signed with the replicas' shared key/);
        assert.equal(failed["owner"], owner);
      });
    }
    assert.equal(ran.length, 0, `no forged recipe ran: ${JSON.stringify(ran)}`);
    await b.close();

    await t.step("the genuine signed recipe is resumed by a replica with the same key", async () => {
      const c = await replica("c");
      c.resumable("test.kind", (data) => {
        ran.push(data);
        return Promise.resolve({ result: { rows_written: 1 } });
      });
      const view = c.start({
        kind: "observations",
        owner: "session:bob",
        request: {},
        resume: { kind: "test.kind", data: { series_id: "Q" } },
        run: forever,
      });
      await c.persisted(view.job_id);
      await c.close();
      const d = await replica("d");
      d.resumable("test.kind", (data) => {
        ran.push(data);
        return Promise.resolve({ result: { rows_written: 1 } });
      });
      const done = await d.wait(view.job_id, { timeoutMs: 10_000, owner: "session:bob" });
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.deepEqual(ran, [{ series_id: "Q" }]);
      await d.close();
    });
  } finally {
    for (const c of conns) await c.close();
  }
});
