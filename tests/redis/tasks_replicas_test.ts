// Tasks (docs/MCP.md, "Tasks") on two real server processes sharing one real redis-server, driven
// by a client of the extension's wire format: a FRED pull started as a task on one replica is
// watched and read from the other, another is cancelled from the other (its FRED job with it),
// one user's tasks are unknown to another, and a task whose replica dies fails with the reason.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import type { Received } from "../fakes/upstream.ts";
import { rpcError, TasksClient, terminal } from "../harness/tasks_client.ts";
import {
  fredConfig,
  routeStuckSeries,
  startFakeFred,
  syntheticObservations,
} from "../providers/fred/fake_fred.ts";
import { startRedis } from "./_redis_server.ts";
import { until as poll } from "../harness/until.ts";

const ALICE = { "X-Forwarded-For": "192.0.2.1" };
const BOB = { "X-Forwarded-For": "198.51.100.7" };

type Json = Record<string, unknown>;

/** Waits (polling, as for another process's state) until `probe` holds. */
const until = (what: string, probe: () => boolean, ms = 20_000): Promise<true> => poll(what, probe, ms, 50);

/** The FRED job a task runs as, from its status message. */
function jobOf(task: Json): string {
  const id = /job "([^"]+)"/.exec(String(task["statusMessage"]))?.[1];
  assert.ok(id, `a job id in ${JSON.stringify(task["statusMessage"])}`);
  return id;
}

Deno.test("tasks on two replicas over one Redis: any replica follows, reads and cancels them; owners stay apart", async (t) => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const stuck = routeStuckSeries(fake, 50_000);
  const offsetOf = (r: Received) => Number(r.url.searchParams.get("offset") ?? 0);
  fake.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "FLOW",
    reply: (r) => ({
      json: syntheticObservations(30_000, offsetOf(r), Number(r.url.searchParams.get("limit"))),
    }),
  });
  const stuckPages = () =>
    fake.requestsTo("/fred/series/observations").filter((r) =>
      r.url.searchParams.get("series_id") === "STUCK" && offsetOf(r) > 0
    ).length;
  const home = scratchHome(fredConfig(fake.origin, { breaker_threshold: 100, job_retries: 1 }));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: {
      REDIS_URL: redis.url,
      MCP_JOB_LEASE_TIMEOUT: "1.5",
      MCP_JOB_TAKEOVER_INTERVAL: "0.5",
      // Each client address owns its own work: two addresses are two users.
      MCP_WRITES: "bounded",
      MCP_TRUST_PROXY: "true",
    },
  };
  const [a, b] = await Promise.all([startHttpServer(options), startHttpServer(options)]);
  await using _a = a;
  await using _b = b;
  const aliceOnA = new TasksClient(a.origin, { headers: ALICE });
  const aliceOnB = new TasksClient(b.origin, { headers: ALICE });
  const bobOnB = new TasksClient(b.origin, { headers: BOB });
  // The 2025-era view of the same work: the job tools, called without the extension.
  const jobStatus = async (job: string): Promise<Json> => {
    const plain = new TasksClient(b.origin, { tasks: false, headers: ALICE });
    const result = await plain.callTool("fred_job_status", { job_id: job });
    return result["structuredContent"] as Json;
  };

  try {
    await t.step("a FRED pull started as a task on A is watched and its result read from B", async () => {
      const created = await aliceOnA.callTool("fred_series", {
        operation: "get_observations",
        series_id: "FLOW",
      });
      assert.equal(created["resultType"], "task");
      const taskId = String(created["taskId"]);
      const working = await aliceOnB.until(taskId, (task) => /job "/.test(String(task["statusMessage"])));
      const job = jobOf(working);
      const done = await aliceOnB.until(taskId, terminal);
      assert.equal(done["status"], "completed");
      const result = done["result"] as { structuredContent: Json; isError?: boolean };
      assert.equal(result.isError, undefined);
      assert.equal(result.structuredContent["status"], "success");
      assert.equal(result.structuredContent["rows_written"], 30_000);
      assert.equal((result.structuredContent["job"] as Json)["job_id"], job);
      assert.equal((await jobStatus(job))["status"], "completed", "the job tools see the same work");
    });

    await t.step("a task cancelled from B stops, and its FRED job with it", async () => {
      const created = await aliceOnA.callTool("fred_series", {
        operation: "get_observations",
        series_id: "STUCK",
      });
      const taskId = String(created["taskId"]);
      const job = jobOf(await aliceOnB.until(taskId, (task) => /job "/.test(String(task["statusMessage"]))));
      await until("the stuck page", () => stuckPages() >= 1);
      const ack = await aliceOnB.cancel(taskId);
      assert.equal(ack["resultType"], "complete");
      assert.ok(!("taskId" in ack) && !("status" in ack), "an empty ack");
      assert.equal((await aliceOnB.until(taskId, terminal))["status"], "cancelled");
      assert.equal((await aliceOnA.get(taskId))["status"], "cancelled", "A agrees");
      assert.equal((await jobStatus(job))["status"], "cancelled");
      // The store holds FRED's jobs beside the tasks: a job's id is not a task id.
      assert.equal((await rpcError(aliceOnB.get(job))).code, -32602);
      assert.equal(
        (await aliceOnA.cancel(taskId))["resultType"],
        "complete",
        "a finished task: the same ack",
      );
    });

    await t.step("another user's task is unknown on every replica, like an id that never was", async () => {
      const created = await aliceOnA.callTool("fred_series", {
        operation: "get_observations",
        series_id: "FLOW",
      });
      const taskId = String(created["taskId"]);
      const never = await rpcError(bobOnB.get("task-00000000-20260101-000000"));
      assert.equal(never.code, -32602);
      for (const method of ["tasks/get", "tasks/cancel"]) {
        const e = await rpcError(bobOnB.request(method, { taskId }));
        assert.equal(e.code, -32602, method);
        assert.ok(!e.message.includes("FLOW") && e.data === undefined, "none of the task's data");
      }
      assert.equal((await aliceOnB.until(taskId, terminal))["status"], "completed", "bob changed nothing");
    });

    await t.step("a task whose replica is killed is failed by the other, with the reason", async () => {
      const created = await aliceOnA.callTool("fred_series", {
        operation: "get_observations",
        series_id: "STUCK",
      });
      const taskId = String(created["taskId"]);
      await aliceOnB.until(taskId, (task) => /job "/.test(String(task["statusMessage"])));
      await a.stop("SIGKILL");
      const failed = await aliceOnB.until(taskId, terminal, 30_000);
      assert.equal(failed["status"], "failed");
      const error = failed["error"] as { code: number; message: string; data?: Json };
      assert.equal(typeof error.code, "number");
      assert.match(error.message, /replica running this job .* stopped before it finished/);
      assert.deepEqual(error.data, { retryable: true });
    });
  } finally {
    stuck.release();
  }
});
