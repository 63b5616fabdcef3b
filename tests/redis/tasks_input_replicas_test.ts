// A task that waits for input lives on the replica running it: a `tasks/update` that reaches
// another replica (a balancer that ignores Mcp-Name) is refused there with the way to route it,
// never acknowledged and lost; sent to the running replica, the task goes on. Two real server
// processes (the conformance fixtures) sharing one real redis-server.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import { rpcError, TasksClient } from "../harness/tasks_client.ts";
import { startRedis } from "./_redis_server.ts";

Deno.test("tasks/update on a replica that does not run the task says where to send it; on its own, it resumes", async () => {
  await using redis = await startRedis();
  const options = {
    args: ["--providers", "conformance", "--stateless"],
    env: { REDIS_URL: redis.url, MCP_REQUEST_STATE_KEY: "k".repeat(40) },
  };
  const [a, b] = await Promise.all([startHttpServer(options), startHttpServer(options)]);
  await using _a = a;
  await using _b = b;
  const onA = new TasksClient(a.origin);
  const onB = new TasksClient(b.origin);
  const created = await onA.callTool("confirm_delete", { filename: "x.txt" });
  const taskId = String(created["taskId"]);
  assert.ok(taskId.startsWith("task-"), JSON.stringify(created));
  const waiting = await onA.until(taskId, (t) => t["status"] === "input_required");
  const key = Object.keys(waiting["inputRequests"] as Record<string, unknown>)[0]!;
  // B sees the same task through Redis, and what it waits for in its status message.
  await onB.until(taskId, (t) => /Waiting for input/.test(String(t["statusMessage"])));
  const refused = await rpcError(
    onB.update(taskId, { [key]: { action: "accept", content: { confirm: true } } }),
  );
  assert.equal(refused.code, -32602);
  assert.match(refused.message, /waits for input on another replica.*Mcp-Name/);
  // Sent where it runs, the answer goes through.
  const ack = await onA.update(taskId, { [key]: { action: "accept", content: { confirm: true } } });
  assert.equal(ack["resultType"], "complete");
  const done = await onA.until(taskId, (t) => t["status"] === "completed");
  assert.match(JSON.stringify(done["result"]), /Deleted x\.txt/);
});
