// A job's checkpoint (the point its work can carry on from) travels through Redis to the replica
// that takes the job over, signed with the recipe when replicas share a key: a checkpoint changed
// in Redis (a byte length or cursor someone forged) is dropped and the job starts again from its
// first row, never from where the forger pointed.
import assert from "node:assert/strict";
import type { JobCheckpoint, JobHandle, JobManager } from "../../lib/output/jobs.ts";
import { recipeSigningKey } from "../../lib/output/job_signing.ts";
import type { RedisConnection } from "../../lib/redis/connection.ts";
import { startRedis } from "./_redis_server.ts";
import { replicas, storedJob } from "./_job_replicas.ts";
import { until } from "../harness/until.ts";

const PREFIX = "checkpoint-test:";
const POINT: JobCheckpoint = {
  rows: 3000,
  cursor: { offset: 3000 },
  file: { bytes: 120_000, rows: 3000, state: { columns: ["date", "value"], segments: [[12, 2]] } },
};

/** Work that records a checkpoint, then runs until its job is stopped. */
function checkpointed(job: JobHandle): Promise<never> {
  job.checkpoint(POINT, 10_000, "Working");
  return new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason)));
}

Deno.test("JobManager hands a taken-over job's checkpoint to its resumer, and drops a forged one", async (t) => {
  await using redis = await startRedis();
  const conns: RedisConnection[] = [];
  const key = await recipeSigningKey("a-shared-secret-of-at-least-32-characters");
  const replica = replicas(redis.url, PREFIX, conns);
  const stored = (id: string) => storedJob(redis, PREFIX, id);
  /** Starts a checkpointed job on a replica that then goes away; resolves to its id. */
  const abandoned = async (name: string, signingKey?: CryptoKey): Promise<string> => {
    const a = await replica(name, signingKey);
    const view = a.start({
      kind: "observations",
      owner: "session:1",
      request: {},
      resume: { kind: "test.kind", data: { series_id: "Y" } },
      run: checkpointed,
    });
    await until(
      "the checkpoint in Redis",
      async () => (await stored(view.job_id))["checkpoint"] ? true : undefined,
    );
    await a.close();
    return view.job_id;
  };
  /** Lets a new replica take the job over; resolves to what its resumer was handed. */
  const takenOver = async (id: string, signingKey?: CryptoKey): Promise<JobCheckpoint | undefined> => {
    const handed: (JobCheckpoint | undefined)[] = [];
    const b: JobManager = await replica(`taker-${id}`, signingKey);
    b.resumable("test.kind", (_data, job, _owner, from) => {
      // Jobs of earlier steps left behind are taken over too: only this one's counts.
      if (job.id === id) handed.push(from);
      assert.equal(job.signal.aborted, false);
      return Promise.resolve({ result: { rows_written: 1 } });
    });
    try {
      const done = await b.wait(id, { timeoutMs: 10_000, owner: "session:1" });
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.equal(handed.length, 1);
      return handed[0];
    } finally {
      await b.close();
    }
  };
  try {
    await t.step("a signed checkpoint reaches the resumer, with the rows done so far", async () => {
      const id = await abandoned("a1", key);
      const record = await stored(id);
      assert.match(String(record["checkpointSig"]), /^[0-9a-f]{64}$/, "the checkpoint is signed");
      assert.equal(record["rowsFetched"], 3000, "written with the progress");
      assert.deepEqual(await takenOver(id, key), POINT);
    });

    await t.step("a checkpoint changed in Redis is dropped: the job starts again", async () => {
      for (
        const forged of [
          { ...POINT, file: { ...POINT.file!, bytes: 1 } },
          { ...POINT, cursor: { offset: 9_000_000 } },
          { ...POINT, rows: 0 },
        ]
      ) {
        const id = await abandoned(`a2-${forged.rows}-${forged.file!.bytes}`, key);
        const record = await stored(id);
        await redis.command("SET", `${PREFIX}job:${id}`, JSON.stringify({ ...record, checkpoint: forged }));
        assert.equal(await takenOver(id, key), undefined, `forged ${JSON.stringify(forged)}`);
      }
    });

    await t.step("a checkpoint moved from another job is dropped", async () => {
      const first = await stored(await abandoned("a3", key));
      const id = await abandoned("a4", key);
      const record = await stored(id);
      await redis.command(
        "SET",
        `${PREFIX}job:${id}`,
        JSON.stringify({ ...record, checkpoint: POINT, checkpointSig: first["checkpointSig"] }),
      );
      assert.equal(await takenOver(id, key), undefined);
    });

    await t.step(
      "a resumed job that starts again from row 0 drops the checkpoint it was handed",
      async () => {
        const id = await abandoned("a6", key);
        const b = await replica("taker-a6", key);
        const seen = Promise.withResolvers<Record<string, unknown>>();
        b.resumable("test.kind", async (_data, job) => {
          if (job.id !== id) return { result: {} };
          job.progress(0, 10_000, "Starting again from the first row");
          await b.persisted(id);
          seen.resolve(await stored(id));
          return { result: { rows_written: 1 } };
        });
        try {
          const record = await seen.promise;
          assert.equal(record["checkpoint"], undefined, "no stale checkpoint for a later takeover");
          assert.equal(record["rowsFetched"], 0);
          const done = await b.wait(id, { timeoutMs: 10_000, owner: "session:1" });
          assert.equal(done.status, "completed");
        } finally {
          await b.close();
        }
      },
    );

    await t.step("a handed-over job cancelled before its takeover is cleaned up, not resumed", async () => {
      const id = await abandoned("a7", key);
      await redis.command("SET", `${PREFIX}cancel:${id}`, "1");
      const b = await replica("taker-a7", key);
      const resumed: string[] = [];
      const cleaned: Record<string, unknown>[] = [];
      b.resumable("test.kind", (_data, job) => {
        resumed.push(job.id);
        return Promise.resolve({ result: {} });
      }, (data) => {
        cleaned.push(data);
        return Promise.resolve();
      });
      try {
        const done = await b.wait(id, { timeoutMs: 10_000, owner: "session:1" });
        assert.equal(done.status, "cancelled");
        assert.ok(!resumed.includes(id), "never resumed");
        assert.deepEqual(cleaned, [{ series_id: "Y" }], "its recipe's leftovers cleaned up once");
      } finally {
        await b.close();
      }
    });

    await t.step("without a shared key the checkpoint is handed on, for the resumer to check", async () => {
      const id = await abandoned("a5");
      assert.equal((await stored(id))["checkpointSig"], undefined);
      assert.deepEqual(await takenOver(id), POINT);
    });
  } finally {
    for (const c of conns) await c.close();
  }
});
