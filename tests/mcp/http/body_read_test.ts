// readJsonRpc() on the two ways a POST body arrives: with a declared length (read whole by the
// runtime) and without one (read chunk by chunk against the cap); both keep the cap and the
// body deadline.
import assert from "node:assert/strict";
import { readJsonRpc } from "../../../lib/mcp/http/_jsonrpc.ts";

const PING = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
const encoder = new TextEncoder();

/** A POST whose body comes from `chunks` (then stays open unless `close`), counting pulls. */
function post(
  chunks: string[],
  options: { length?: number | undefined; close?: boolean } = {},
): { req: Request; pulls: () => number } {
  let pulls = 0;
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      if (next < chunks.length) controller.enqueue(encoder.encode(chunks[next++]!));
      else if (options.close !== false) controller.close();
      // Otherwise the client stalls: nothing more arrives.
    },
  }, { highWaterMark: 0 }); // Pulled only when read, so the count says what was read.
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.length !== undefined) headers["content-length"] = String(options.length);
  return { req: new Request("http://127.0.0.1/mcp", { method: "POST", headers, body }), pulls: () => pulls };
}

Deno.test("readJsonRpc() reads a body of declared length whole, and one without a length chunk by chunk", async () => {
  const half = PING.length >> 1;
  for (const length of [PING.length, undefined]) {
    const { req } = post([PING.slice(0, half), PING.slice(half)], { length });
    const read = await readJsonRpc(req, 1024);
    assert.ok(read.ok, `length ${length}`);
    assert.deepEqual(read.messages, [{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  }
});

Deno.test("readJsonRpc() refuses a body over the cap with 413, declared or not", async (t) => {
  await t.step("a declared length over the cap is refused before any byte is read", async () => {
    const { req, pulls } = post([PING], { length: 4096 });
    const read = await readJsonRpc(req, 1024);
    assert.ok(!read.ok);
    assert.equal(read.response.status, 413);
    assert.equal(pulls(), 0);
  });
  await t.step("a body longer than it declared (only a Request made in process can be)", async () => {
    const { req } = post(["x".repeat(700), "x".repeat(700)], { length: 10 });
    const read = await readJsonRpc(req, 1024);
    assert.ok(!read.ok);
    assert.equal(read.response.status, 413);
  });
  await t.step("without a length, reading stops once the cap is passed", async () => {
    const { req, pulls } = post(Array.from({ length: 100 }, () => "x".repeat(512)));
    const read = await readJsonRpc(req, 1024);
    assert.ok(!read.ok);
    assert.equal(read.response.status, 413);
    assert.ok(pulls() < 10, `stopped after ${pulls()} chunks`);
  });
});

Deno.test("readJsonRpc() answers 408 when a body stalls past the deadline, declared or not", async () => {
  for (const length of [PING.length, undefined]) {
    const { req } = post([PING.slice(0, 5)], { length, close: false });
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), 30);
    const started = performance.now();
    const read = await readJsonRpc(req, 1024, { deadline: deadline.signal, deadlineS: 0.03 });
    clearTimeout(timer);
    assert.ok(!read.ok, `length ${length}`);
    assert.equal(read.response.status, 408);
    assert.equal(read.response.headers.get("connection"), "close");
    assert.ok(performance.now() - started < 5_000, "answered at the deadline, not when the body ends");
  }
});
