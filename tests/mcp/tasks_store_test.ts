// JobTaskStore (lib/mcp/tasks/job_store.ts) on its own: tasks as jobs, their failures' JSON-RPC
// codes, and a task nobody answers failing after the input wait instead of holding its job.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import { JobTaskStore } from "../../lib/mcp/tasks/job_store.ts";

// The fake clock's sleeps end at once: a task waiting for input times out as soon as it asks.
function store(): { tasks: JobTaskStore; jobs: JobManager; clock: FakeClock } {
  const clock = new FakeClock();
  const jobs = new JobManager({ clock, retentionMs: 60_000, idPrefix: "task" });
  return { tasks: new JobTaskStore(jobs, { clock, ttlMs: 60_000, inputWaitMs: 900_000 }), jobs, clock };
}

Deno.test("JobTaskStore fails a task whose input requests stay unanswered past the input wait", async () => {
  const { tasks, jobs, clock } = store();
  const task = await tasks.createTask({
    owner: "alice",
    request: { tool: "confirm" },
    run: async (running) => {
      await running.askInput({ ok: { method: "elicitation/create", params: {} } });
      return { result: { content: [] } };
    },
  });
  await jobs.settled(task.taskId);
  const failed = await tasks.getTask(task.taskId, "alice");
  assert.equal(failed?.status, "failed");
  assert.equal(failed?.error?.code, -32603);
  assert.match(failed?.error?.message ?? "", /^No answer to the task's input requests within/);
  assert.equal(failed?.inputRequests, undefined);
  assert.ok(clock.sleeps.includes(900_000), "it waited the input wait");
  await jobs.close();
});

Deno.test("JobTaskStore keeps a failed task's JSON-RPC code, and hides tasks from other owners", async () => {
  const { tasks, jobs } = store();
  const task = await tasks.createTask({
    owner: "alice",
    request: { tool: "x" },
    run: () => Promise.resolve({ error: { code: -32602, message: "Bad arguments" } }),
  });
  await jobs.settled(task.taskId);
  assert.deepEqual((await tasks.getTask(task.taskId, "alice"))?.error, {
    code: -32602,
    message: "Bad arguments",
  });
  assert.equal(await tasks.getTask(task.taskId, "bob"), undefined);
  assert.equal(await tasks.cancelTask(task.taskId, "bob"), false);
  assert.equal(await tasks.updateTask(task.taskId, {}, "bob"), false);
  assert.equal(await tasks.getTask("fred-job-1234", "alice"), undefined, "not a task id");
  await jobs.close();
});
