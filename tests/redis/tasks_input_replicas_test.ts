// A task that waits for input runs on one replica, and its requests and answers may land on any:
// the replica a tasks/get or tasks/update reaches asks the one running the task through Redis
// (lib/redis/task_relay.ts), so behind a round-robin balancer with no stickiness every task
// completes with its answers. Another user's answers never reach it, a cancel from any replica
// stops it, and a running replica that is stopped or killed is a clear retryable error, not a
// hang. Three real server processes (the conformance fixtures) over one real redis-server, behind
// a real HAProxy.
import assert from "node:assert/strict";
import { startBalancer } from "../harness/balancer.ts";
import { startHttpServer } from "../harness/spawn_http.ts";
import type { HttpServerProcess } from "../harness/spawn_http.ts";
import { rpcError, TasksClient } from "../harness/tasks_client.ts";
import { startRedis } from "./_redis_server.ts";

type Json = Record<string, unknown>;

const ALICE = { "X-Forwarded-For": "192.0.2.1" };
const BOB = { "X-Forwarded-For": "198.51.100.7" };

const accept = (content: Json): Json => ({ action: "accept", content });
const waitsFor = (...keys: string[]) => (task: Json): boolean =>
  task["status"] === "input_required" &&
  JSON.stringify(Object.keys(task["inputRequests"] as Json).sort()) === JSON.stringify([...keys].sort());
const textOf = (task: Json): string => JSON.stringify(task["result"]);

/** Calls `tool` as a task through `client`; its task id. */
async function start(client: TasksClient, tool: string, args: Json): Promise<string> {
  const created = await client.callTool(tool, args);
  assert.equal(created["resultType"], "task", JSON.stringify(created).slice(0, 300));
  return String(created["taskId"]);
}

Deno.test("tasks waiting for input behind HAProxy: any replica shows and answers them, for their owner only", async (t) => {
  await using redis = await startRedis();
  const options = {
    args: ["--providers", "conformance", "--stateless"],
    env: {
      REDIS_URL: redis.url,
      MCP_REQUEST_STATE_KEY: "k".repeat(40),
      // Each client address owns its work: two addresses are two users.
      MCP_WRITES: "bounded",
      MCP_TRUST_PROXY: "true",
    },
  };
  const replicas: HttpServerProcess[] = await Promise.all([0, 1, 2].map(() => startHttpServer(options)));
  await using _replicas = {
    [Symbol.asyncDispose]: async () => {
      // SIGKILL: one may be stopped (SIGSTOP), which a SIGTERM would not end.
      await Promise.all(replicas.map((r) => r.stop("SIGKILL")));
    },
  };
  const [a, b, c] = replicas as [HttpServerProcess, HttpServerProcess, HttpServerProcess];
  await using lb = await startBalancer(replicas.map((r) => r.port));
  const alice = (origin: string) => new TasksClient(origin, { headers: ALICE });
  const bob = (origin: string) => new TasksClient(origin, { headers: BOB });

  await t.step(
    "a task started on A is shown and answered on B and C, and completes with the answers",
    async () => {
      const taskId = await start(alice(a.origin), "multi_input", {});
      await alice(b.origin).until(taskId, waitsFor("name", "confirm"), 10_000);
      await alice(c.origin).until(taskId, waitsFor("name", "confirm"), 10_000);
      const ack = await alice(b.origin).update(taskId, { name: accept({ name: "Ada" }) });
      assert.equal(ack["resultType"], "complete");
      assert.ok(waitsFor("confirm")(await alice(c.origin).get(taskId)), "C shows what is left");
      await alice(c.origin).update(taskId, { confirm: accept({ confirm: true }) });
      const done = await alice(b.origin).until(taskId, (task) => task["status"] === "completed");
      assert.match(textOf(done), /Confirmed for Ada/);
    },
  );

  await t.step(
    "through the balancer every task waiting for input completes, wherever its requests land",
    async () => {
      const client = alice(lb.origin);
      for (let i = 0; i < 3; i++) {
        const taskId = await start(client, "confirm_delete", { filename: `f${i}.txt` });
        await client.until(taskId, waitsFor("confirm"));
        // Three gets in a row reach the three replicas: each shows the input requests.
        for (let k = 0; k < 3; k++) assert.ok(waitsFor("confirm")(await client.get(taskId)), `get ${k}`);
        const ack = await client.update(taskId, { confirm: accept({ confirm: true }) });
        assert.equal(ack["resultType"], "complete");
        const done = await client.until(taskId, (task) => task["status"] === "completed");
        assert.match(textOf(done), new RegExp(`Deleted f${i}\\.txt`));
      }
    },
  );

  await t.step(
    "another user's answers are refused on every replica; a cancel from another replica stops it",
    async () => {
      const taskId = await start(alice(a.origin), "confirm_delete", { filename: "x.txt" });
      await alice(b.origin).until(taskId, waitsFor("confirm"));
      for (const r of [a, b, c]) {
        const refused = await rpcError(bob(r.origin).update(taskId, { confirm: accept({ confirm: true }) }));
        assert.equal(refused.code, -32602);
        assert.match(refused.message, /^Unknown task/);
        assert.equal(refused.data, undefined, "none of the task's data");
      }
      assert.ok(waitsFor("confirm")(await alice(c.origin).get(taskId)), "still waits for alice's answer");
      assert.equal((await alice(b.origin).cancel(taskId))["resultType"], "complete");
      const cancelled = await alice(c.origin).until(taskId, (task) => task["status"] === "cancelled");
      assert.equal(cancelled["inputRequests"], undefined);
    },
  );

  await t.step("a running replica stopped, then killed: a retryable error at once, not a hang", async () => {
    const taskId = await start(alice(a.origin), "confirm_delete", { filename: "y.txt" });
    await alice(b.origin).until(taskId, waitsFor("confirm"));
    const answer = { confirm: accept({ confirm: true }) };
    a.child.kill("SIGSTOP");
    let started = Date.now();
    const silent = await rpcError(alice(b.origin).update(taskId, answer));
    assert.equal(silent.code, -32602);
    assert.match(
      silent.message,
      /waits for input on another replica of this server, which did not answer within 2 s/,
    );
    assert.deepEqual(silent.data, { retryable: true });
    assert.ok(Date.now() - started < 10_000, "within the relay's 2 s, with margin");
    await a.stop("SIGKILL");
    started = Date.now();
    const gone = await rpcError(alice(c.origin).update(taskId, answer));
    assert.equal(gone.code, -32602);
    assert.match(gone.message, /which no longer listens \(it may have stopped\).*retry tasks\/update/);
    assert.deepEqual(gone.data, { retryable: true });
    assert.ok(Date.now() - started < 2000, "without waiting for a reply");
  });
});
