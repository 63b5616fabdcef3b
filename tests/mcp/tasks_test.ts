// The Tasks extension (docs/MCP.md, "Tasks") over real HTTP, driven by a client of the
// extension's wire format (tests/harness/tasks_client.ts) against the conformance fixtures: task
// creation and results, tool errors and protocol failures, input through tasks/update,
// cancellation, the capability gate, unknown ids and another client's ids.
import assert from "node:assert/strict";
import { startHttpInProcess } from "../harness/in_process.ts";
import { rpcError, TASKS, TasksClient, terminal } from "../harness/tasks_client.ts";

const STATELESS = ["--providers", "conformance", "--stateless"];

/** An answer without its `_meta` (the SDK names the server there on every result). */
function bare(result: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _, ...rest } = result;
  return rest;
}

Deno.test("tools/call of a task-supporting tool answers a task whose tasks/get inlines the result", async () => {
  await using server = await startHttpInProcess({ args: STATELESS });
  const client = new TasksClient(server.origin);
  const created = await client.callTool("slow_compute", { seconds: 0.2, label: "x" });
  assert.equal(created["resultType"], "task");
  assert.equal(typeof created["taskId"], "string");
  assert.equal(created["status"], "working");
  for (const key of ["result", "error", "inputRequests", "requestState", "task", "ttl", "pollInterval"]) {
    assert.ok(!(key in created), `no ${key} on CreateTaskResult`);
  }
  assert.ok(Number.isInteger(created["ttlMs"]) && Number(created["ttlMs"]) > 0);
  const done = await client.until(String(created["taskId"]), terminal);
  assert.equal(done["status"], "completed");
  assert.equal(done["resultType"], "complete");
  assert.deepEqual((done["result"] as { content: unknown[] }).content, [
    { type: "text", text: "Computed x after 0.2 s" },
  ]);
  // The same tool without the extension: a plain result, no task.
  const plain = await new TasksClient(server.origin, { tasks: false }).callTool("slow_compute", {
    seconds: 0,
  });
  assert.equal(plain["resultType"], "complete");
  assert.ok(!("taskId" in plain));
});

Deno.test("a task's tool error completes it with isError; a protocol failure fails it with an error object", async () => {
  await using server = await startHttpInProcess({ args: STATELESS });
  const client = new TasksClient(server.origin);
  const failing = await client.callTool("failing_job");
  const completed = await client.until(String(failing["taskId"]), terminal);
  assert.equal(completed["status"], "completed");
  assert.equal((completed["result"] as { isError?: boolean }).isError, true);
  const broken = await client.callTool("protocol_error_job");
  const failed = await client.until(String(broken["taskId"]), terminal);
  assert.equal(failed["status"], "failed");
  assert.ok(!("result" in failed));
  assert.deepEqual(failed["error"], { code: -32603, message: "The job broke on purpose" });
});

Deno.test("tasks/update answers a task's input requests one at a time, then it completes", async () => {
  await using server = await startHttpInProcess({ args: STATELESS });
  const client = new TasksClient(server.origin);
  const { taskId } = await client.callTool("multi_input") as { taskId: string };
  const asking = await client.until(taskId, (t) => t["status"] === "input_required");
  assert.equal(asking["statusMessage"], "Waiting for input: name, confirm");
  assert.deepEqual(Object.keys(asking["inputRequests"] as object).sort(), ["confirm", "name"]);
  assert.equal(
    (asking["inputRequests"] as Record<string, { method: string }>)["name"]!.method,
    "elicitation/create",
  );
  const ack = await client.update(taskId, { name: { action: "accept", content: { name: "Ada" } } });
  assert.deepEqual(bare(ack), { resultType: "complete" });
  const half = await client.get(taskId);
  assert.equal(half["status"], "input_required");
  assert.deepEqual(Object.keys(half["inputRequests"] as object), ["confirm"]);
  await client.update(taskId, { confirm: { action: "accept", content: { confirm: true } } });
  const done = await client.until(taskId, terminal);
  assert.deepEqual((done["result"] as { content: unknown[] }).content, [
    { type: "text", text: "Confirmed for Ada" },
  ]);
});

Deno.test("tasks/cancel stops a running task with an empty ack, and acks a finished one the same", async () => {
  await using server = await startHttpInProcess({ args: STATELESS });
  const client = new TasksClient(server.origin);
  const { taskId } = await client.callTool("slow_compute", { seconds: 600 }) as { taskId: string };
  assert.deepEqual(bare(await client.cancel(taskId)), { resultType: "complete" });
  assert.equal((await client.until(taskId, terminal))["status"], "cancelled");
  assert.deepEqual(bare(await client.cancel(taskId)), { resultType: "complete" }, "idempotent");
  assert.equal((await client.get(taskId))["status"], "cancelled");
});

Deno.test("the task methods need the extension, a required-task tool refuses clients without it", async () => {
  await using server = await startHttpInProcess({ args: STATELESS });
  const without = new TasksClient(server.origin, { tasks: false });
  for (const method of ["tasks/get", "tasks/cancel"]) {
    const e = await rpcError(without.request(method, { taskId: "task-x" }));
    assert.equal(e.code, -32021, method);
    assert.deepEqual(e.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
  }
  const e = await rpcError(without.callTool("failing_job"));
  assert.equal(e.code, -32021);
  assert.match(e.message, /"failing_job" runs only as a task/);
});

Deno.test("tasks/get and tasks/cancel answer -32602 for unknown ids and for another client's tasks", async () => {
  await using server = await startHttpInProcess({
    args: STATELESS,
    // Each client address owns its own work: two addresses are two users.
    env: { MCP_WRITES: "bounded", MCP_TRUST_PROXY: "true" },
  });
  const alice = new TasksClient(server.origin, { headers: { "X-Forwarded-For": "192.0.2.1" } });
  const bob = new TasksClient(server.origin, { headers: { "X-Forwarded-For": "198.51.100.7" } });
  const unknown = await rpcError(alice.get("task-00000000-20260101-000000"));
  assert.equal(unknown.code, -32602);
  const { taskId } = await alice.callTool("slow_compute", { seconds: 600, label: "secret-label" }) as {
    taskId: string;
  };
  for (const method of ["tasks/get", "tasks/cancel"]) {
    const e = await rpcError(bob.request(method, { taskId }));
    assert.equal(e.code, -32602, method);
    assert.equal(
      e.message.replace(taskId, "ID"),
      unknown.message.replace("task-00000000-20260101-000000", "ID"),
    );
    assert.ok(!JSON.stringify({ m: e.message, d: e.data }).includes("secret-label"));
  }
  assert.equal((await alice.get(taskId))["status"], "working", "bob's cancel changed nothing");
  await alice.cancel(taskId);
});

Deno.test("bad task params answer -32602 naming the field; the v1 tasks/list and tasks/result are -32601", async () => {
  await using server = await startHttpInProcess({ args: STATELESS });
  const client = new TasksClient(server.origin);
  const cases: [string, Record<string, unknown>, number, RegExp][] = [
    ["tasks/get", { taskId: 123 }, -32602, /taskId/],
    ["tasks/get", {}, -32602, /taskId/],
    ["tasks/get", { taskId: "x".repeat(5000) }, -32602, /taskId: Too big/],
    ["tasks/cancel", { taskId: "" }, -32602, /taskId/],
    ["tasks/list", {}, -32601, /Method not found/],
    ["tasks/result", { taskId: "task-1" }, -32601, /Method not found/],
  ];
  for (const [method, params, code, message] of cases) {
    const e = await rpcError(client.request(method, params));
    assert.equal(e.code, code, `${method} ${JSON.stringify(params).slice(0, 40)}`);
    assert.match(e.message, message);
    assert.ok(!/\bat \S+:\d+/.test(e.message), "no stack trace");
  }
});

Deno.test("a client at its running-jobs share gets a tool error; a read-only server runs optional tasks as plain calls", async () => {
  {
    await using server = await startHttpInProcess({ args: STATELESS, env: { MCP_QUOTA_JOBS: "1" } });
    const client = new TasksClient(server.origin);
    const first = await client.callTool("slow_compute", { seconds: 600 });
    assert.equal(first["resultType"], "task");
    const second = await client.callTool("slow_compute", { seconds: 600 });
    assert.equal(second["resultType"], "complete");
    assert.equal(second["isError"], true);
    assert.match(JSON.stringify(second["content"]), /QUOTA_EXCEEDED/);
    await client.cancel(String(first["taskId"]));
  }
  await using server = await startHttpInProcess({ args: STATELESS, env: { MCP_WRITES: "off" } });
  const client = new TasksClient(server.origin);
  const plain = await client.callTool("slow_compute", { seconds: 0, label: "ro" });
  assert.equal(plain["resultType"], "complete");
  assert.deepEqual(plain["content"], [{ type: "text", text: "Computed ro after 0 s" }]);
  const required = await client.callTool("failing_job");
  assert.equal(required["isError"], true);
  assert.match(JSON.stringify(required["content"]), /read-only/);
});
