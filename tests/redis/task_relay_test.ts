// The relay between replicas for tasks that wait for input (lib/redis/task_relay.ts) and the
// task store on it (lib/mcp/tasks/job_store.ts), in process over one real redis-server: the
// replica a tasks/get or tasks/update reaches asks the one running the task, for the task's owner
// only; a running replica that is gone or silent is a retryable error, not a wait; with the
// replicas' key only signed messages count.
import assert from "node:assert/strict";
import { systemClock } from "../../lib/clock.ts";
import { Logger } from "../../lib/log.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import { ownerHash } from "../../lib/output/owner_hash.ts";
import { recipeSigningKey } from "../../lib/output/job_signing.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { RedisJobStore } from "../../lib/redis/job_store.ts";
import { RedisTaskRelay } from "../../lib/redis/task_relay.ts";
import { JobTaskStore } from "../../lib/mcp/tasks/job_store.ts";
import type { TaskRelayRequest } from "../../lib/mcp/tasks/types.ts";
import { ProtocolError } from "../../lib/mcp/sdk.ts";
import { until } from "../harness/until.ts";
import { startRedis } from "./_redis_server.ts";

const PREFIX = "relay-test:";
const ASK = { method: "elicitation/create", params: { message: "?" } };

/** Connections made by a test, closed at its end. */
function connections(url: string): { connect(): Promise<RedisConnection>; close(): Promise<void> } {
  const made: RedisConnection[] = [];
  return {
    connect: async () => {
      const conn = await RedisConnection.connect({
        url,
        prefix: PREFIX,
        timeoutMs: 1000,
        retryMaxMs: 200,
        logger: new Logger({ write: () => {} }),
      });
      made.push(conn);
      return conn;
    },
    close: async () => void await Promise.all(made.map((c) => c.close())),
  };
}

/** A replica's task store: jobs shared through Redis, its relay on a connection of its own. */
async function replica(
  conns: ReturnType<typeof connections>,
  name: string,
): Promise<{ tasks: JobTaskStore; jobs: JobManager; relayConn: RedisConnection }> {
  const conn = await conns.connect();
  const relayConn = await conns.connect();
  const store = new RedisJobStore(conn, name);
  const jobs = new JobManager({
    clock: systemClock,
    retentionMs: 3_600_000,
    idPrefix: "task",
    shared: { store, leaseMs: 60_000, takeoverIntervalMs: 60_000 },
  });
  const relay = new RedisTaskRelay(relayConn, name, { timeoutMs: 300 });
  const tasks = new JobTaskStore(jobs, {
    clock: systemClock,
    ttlMs: 60_000,
    relay: { relay, records: store },
  });
  return { tasks, jobs, relayConn };
}

type Replica = Awaited<ReturnType<typeof replica>>;

/** Replicas r1 and r2 over `url`, and their connections; `close` ends them all. */
async function twoReplicas(url: string): Promise<
  { conns: ReturnType<typeof connections>; r1: Replica; r2: Replica; close(): Promise<void> }
> {
  const conns = connections(url);
  const r1 = await replica(conns, "r1");
  const r2 = await replica(conns, "r2");
  const close = async (): Promise<void> => {
    await r1.jobs.close();
    await r2.jobs.close();
    await conns.close();
  };
  return { conns, r1, r2, close };
}

/** A task of alice's on `tasks` that asks for a name and a confirmation, and answers with them. */
async function askingTask(tasks: JobTaskStore): Promise<string> {
  const task = await tasks.createTask({
    owner: "alice",
    request: { tool: "multi_input" },
    run: async (running) => {
      const answers = await running.askInput({ name: ASK, confirm: ASK });
      return { result: { content: [{ type: "text", text: JSON.stringify(answers) }] } };
    },
  });
  return task.taskId;
}

async function rejection(p: Promise<unknown>): Promise<ProtocolError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
  throw new Error("Expected a ProtocolError");
}

Deno.test("JobTaskStore on another replica shows and answers a task's input through the relay, for its owner only", async () => {
  await using redis = await startRedis();
  const pair = await twoReplicas(redis.url);
  const { conns, r1, r2 } = pair;
  const probe = new RedisTaskRelay(await conns.connect(), "r3", { timeoutMs: 300 });
  try {
    const id = await askingTask(r1.tasks);
    const seen = await until("input_required on r2", async () => {
      const task = await r2.tasks.getTask(id, "alice");
      return task?.status === "input_required" ? task : undefined;
    });
    assert.deepEqual(seen.inputRequests, { name: ASK, confirm: ASK });
    assert.equal(await r2.tasks.getTask(id, "bob"), undefined, "another user's task is unknown");

    assert.equal(await r2.tasks.updateTask(id, { name: "Ada" }, "alice"), true);
    assert.deepEqual((await r2.tasks.getTask(id, "alice"))?.inputRequests, { confirm: ASK });
    assert.equal(await r2.tasks.updateTask(id, { confirm: "bob's" }, "bob"), false);
    // A request that names another owner reaches the running replica only by forging it there.
    const forged: TaskRelayRequest = {
      op: "update",
      taskId: id,
      owner: ownerHash("bob"),
      responses: { confirm: "forged" },
    };
    assert.deepEqual(await probe.ask("r1", forged), { found: false, pending: {} });
    assert.deepEqual((await r1.tasks.getTask(id, "alice"))?.inputRequests, { confirm: ASK }, "still waits");

    assert.equal(await r2.tasks.updateTask(id, { confirm: true }, "alice"), true);
    await r1.jobs.settled(id);
    const done = await r2.tasks.getTask(id, "alice");
    assert.equal(done?.status, "completed");
    assert.deepEqual(done?.result, { content: [{ type: "text", text: '{"name":"Ada","confirm":true}' }] });
    assert.equal(await r2.tasks.updateTask(id, { confirm: false }, "alice"), true, "a finished task: an ack");
  } finally {
    await pair.close();
  }
});

Deno.test("JobTaskStore refuses an update as retryable when the running replica is silent or gone", async () => {
  await using redis = await startRedis();
  const pair = await twoReplicas(redis.url);
  const { conns, r1, r2 } = pair;
  try {
    const id = await askingTask(r1.tasks);
    await until("the waiting record", async () => {
      const task = await r2.tasks.getTask(id, "alice");
      return /^Waiting for input/.test(task?.statusMessage ?? "") ? task : undefined;
    });
    // r1 stops listening while its job goes on; something else listens on its channel, mute.
    await r1.relayConn.close();
    const mute = await conns.connect();
    const unsubscribe = await mute.subscribe("task-relay:r1", () => {});
    const started = Date.now();
    const silent = await rejection(r2.tasks.updateTask(id, { name: "Ada" }, "alice"));
    assert.equal(silent.code, -32602);
    assert.match(silent.message, /another replica of this server, which did not answer within 0\.3 s/);
    assert.match(silent.message, /retry tasks\/update/);
    assert.deepEqual(silent.data, { retryable: true });
    assert.ok(Date.now() - started < 5000, "no longer than the relay's timeout, with margin");

    unsubscribe();
    await mute.close();
    const gone = await rejection(r2.tasks.updateTask(id, { name: "Ada" }, "alice"));
    assert.equal(gone.code, -32602);
    assert.match(gone.message, /which no longer listens \(it may have stopped\)/);
    assert.deepEqual(gone.data, { retryable: true });
    // tasks/get still answers: the status message says what the task waits for.
    const shown = await r2.tasks.getTask(id, "alice");
    assert.equal(shown?.status, "working");
    assert.match(shown?.statusMessage ?? "", /^Waiting for input: name, confirm/);
    await r1.tasks.cancelTask(id, "alice");
  } finally {
    await pair.close();
  }
});

Deno.test("RedisTaskRelay with the replicas' key takes signed requests only", async () => {
  await using redis = await startRedis();
  const conns = connections(redis.url);
  const key = await recipeSigningKey("k".repeat(40));
  const served: TaskRelayRequest[] = [];
  let skew = 0;
  const server = new RedisTaskRelay(await conns.connect(), "r1", {
    timeoutMs: 300,
    signingKey: key,
    now: () => Date.now() + skew,
  });
  await server.serve((request) => {
    served.push(request);
    return { found: true, pending: { confirm: ASK } };
  });
  const request: TaskRelayRequest = { op: "get", taskId: "task-1", owner: "o" };
  try {
    const unsigned = new RedisTaskRelay(await conns.connect(), "r2", { timeoutMs: 300 });
    assert.equal(await unsigned.ask("r1", request), "timeout");
    const otherKey = await recipeSigningKey("x".repeat(40));
    const wrong = new RedisTaskRelay(await conns.connect(), "r3", { timeoutMs: 300, signingKey: otherKey });
    assert.equal(await wrong.ask("r1", request), "timeout");
    assert.deepEqual(served, [], "neither reached the handler");
    const signed = new RedisTaskRelay(await conns.connect(), "r4", { timeoutMs: 300, signingKey: key });
    const heard: string[] = [];
    const reader = await conns.connect();
    await reader.subscribe("task-relay:r1", (raw) => heard.push(raw));
    assert.deepEqual(await signed.ask("r1", request), { found: true, pending: { confirm: ASK } });
    assert.deepEqual(served, [request]);
    // Whoever reads Redis may send a signed request again: it is not served twice.
    assert.equal(heard.length, 1, "the signed request, as Redis carried it");
    await reader.publish("task-relay:r1", heard[0]!);
    assert.equal(
      await signed.ask("r1", request).then((r) => typeof r),
      "object",
      "a later request is served",
    );
    assert.equal(served.length, 2, "the replay was not");
    // Ids are remembered for a minute; past that a request is refused as too old.
    skew = 61_000;
    assert.equal(await signed.ask("r1", request), "timeout", "sent a minute before r1's clock");
    assert.equal(served.length, 2);
    assert.equal(await signed.ask("nobody", request), "gone", "no replica of that name listens");
  } finally {
    await conns.close();
  }
});
