// JobManagers standing for replicas over one Redis, for the tests of jobs shared by replicas.
import { systemClock } from "../../lib/clock.ts";
import { Logger } from "../../lib/log.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import type { JobHandle } from "../../lib/output/jobs.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { RedisJobStore } from "../../lib/redis/job_store.ts";
import type { RedisServer } from "./_redis_server.ts";

/** Work that runs until its job is stopped. */
export function forever(job: JobHandle): Promise<never> {
  job.progress(1, 10, "Working");
  return new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason)));
}

/** Makes JobManagers standing for replicas on `url`; their connections go into `conns`. */
export function replicas(
  url: string,
  prefix: string,
  conns: RedisConnection[],
): (name: string, signingKey?: CryptoKey) => Promise<JobManager> {
  return async (name, signingKey) => {
    const conn = await RedisConnection.connect({
      url,
      prefix,
      timeoutMs: 1000,
      retryMaxMs: 200,
      logger: new Logger(),
    });
    conns.push(conn);
    return new JobManager({
      clock: systemClock,
      retentionMs: 3_600_000,
      idPrefix: "fred-job",
      shared: {
        store: new RedisJobStore(conn, name),
        leaseMs: 300,
        takeoverIntervalMs: 100,
        ...(signingKey ? { signingKey } : {}),
      },
    });
  };
}

/** Job `id`'s record as stored under `prefix`, or an empty object before it is written. */
export async function storedJob(
  redis: RedisServer,
  prefix: string,
  id: string,
): Promise<Record<string, unknown>> {
  const found = /\{.*\}/s.exec(await redis.command("GET", `${prefix}job:${id}`));
  return found ? JSON.parse(found[0]) : {};
}
