// readJsonRpc() on the two ways a POST body is read: whole by the runtime (a declared length,
// behind the connection guard) or chunk by chunk (everything else); both keep the cap and the
// body deadline, and only the chunk-by-chunk read can be, and is, cancelled at the deadline.
import assert from "node:assert/strict";
import { readJsonRpc } from "../../../lib/mcp/http/_jsonrpc.ts";

const PING = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
const encoder = new TextEncoder();

interface Post {
  req: Request;
  /** Chunks the reader asked for so far. */
  pulls(): number;
  /** Whether the reader cancelled the body. */
  cancelled(): boolean;
  /** Breaks the body off, as a connection reset does. */
  reset(): void;
}

/** A POST whose body comes from `chunks` (then ends, unless `stall`). */
function post(chunks: string[], options: { length?: number | undefined; stall?: boolean } = {}): Post {
  let pulls = 0;
  let next = 0;
  let cancelled = false;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    pull(c) {
      pulls++;
      if (next < chunks.length) c.enqueue(encoder.encode(chunks[next++]!));
      else if (!options.stall) c.close();
      // Otherwise the client stalls: nothing more arrives.
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 }); // Pulled only when read, so the count says what was read.
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.length !== undefined) headers["content-length"] = String(options.length);
  return {
    req: new Request("http://127.0.0.1/mcp", { method: "POST", headers, body }),
    pulls: () => pulls,
    cancelled: () => cancelled,
    reset: () => controller?.error(new Error("connection reset")),
  };
}

/** Reads `p`'s body, aborting the deadline once the read has started waiting. */
async function readPastDeadline(p: Post, wholeBody: boolean) {
  const deadline = new AbortController();
  const reading = readJsonRpc(p.req, 1024, { deadline: deadline.signal, deadlineS: 3, wholeBody });
  for (let i = 0; i < 5; i++) await Promise.resolve();
  deadline.abort();
  return await reading;
}

Deno.test("readJsonRpc() reads a body whole or chunk by chunk to the same messages", async () => {
  const half = PING.length >> 1;
  for (
    const [length, wholeBody] of [[PING.length, true], [PING.length, false], [undefined, true]] as const
  ) {
    const { req } = post([PING.slice(0, half), PING.slice(half)], { length });
    const read = await readJsonRpc(req, 1024, { wholeBody });
    assert.ok(read.ok, `length ${length}, whole ${wholeBody}`);
    assert.deepEqual(read.messages, [{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  }
});

Deno.test("readJsonRpc() refuses a body over the cap with 413, however it is read", async (t) => {
  await t.step("a declared length over the cap is refused before any byte is read", async () => {
    const p = post([PING], { length: 4096 });
    const read = await readJsonRpc(p.req, 1024, { wholeBody: true });
    assert.ok(!read.ok);
    assert.equal(read.response.status, 413);
    assert.equal(p.pulls(), 0);
  });
  await t.step("a body longer than it declared (only a Request made in process can be)", async () => {
    const { req } = post(["x".repeat(700), "x".repeat(700)], { length: 10 });
    const read = await readJsonRpc(req, 1024, { wholeBody: true });
    assert.ok(!read.ok);
    assert.equal(read.response.status, 413);
  });
  await t.step("without a length, reading stops once the cap is passed", async () => {
    const p = post(Array.from({ length: 100 }, () => "x".repeat(512)));
    const read = await readJsonRpc(p.req, 1024, { wholeBody: true });
    assert.ok(!read.ok);
    assert.equal(read.response.status, 413);
    assert.ok(p.pulls() < 10, `stopped after ${p.pulls()} chunks`);
  });
});

Deno.test("readJsonRpc() answers 408 when a body stalls past the deadline", async (t) => {
  await t.step("read chunk by chunk (no guard in front): the body is cancelled", async () => {
    for (const length of [PING.length, undefined]) {
      const p = post([PING.slice(0, 5)], { length, stall: true });
      const read = await readPastDeadline(p, false);
      assert.ok(!read.ok);
      assert.equal(read.response.status, 408);
      assert.equal(read.response.headers.get("connection"), "close");
      assert.ok(p.cancelled(), `length ${length}: the stalled body was cancelled`);
    }
  });
  await t.step("read whole (the guard closes the connection): answered at the deadline", async () => {
    const p = post([PING.slice(0, 5)], { length: PING.length, stall: true });
    const read = await readPastDeadline(p, true);
    assert.ok(!read.ok);
    assert.equal(read.response.status, 408);
    // The guard then closes the connection, which ends the pending read: no unhandled rejection.
    p.reset();
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
});

Deno.test("readJsonRpc() takes plain requests as they are and refuses every shape the SDK's schema refuses", async () => {
  const read = (message: unknown) =>
    readJsonRpc(new Request("http://127.0.0.1/mcp", { method: "POST", body: JSON.stringify(message) }), 4096);
  const plain = [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: { a: 1 } } },
    { jsonrpc: "2.0", id: "a", method: "ping" },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", _meta: { progressToken: 7 } } },
  ];
  for (const message of plain) {
    const got = await read(message);
    assert.ok(got.ok, JSON.stringify(message));
    assert.deepEqual(got.messages, [message]);
  }
  const refused = [
    { jsonrpc: "2.0", id: 1.5, method: "ping" },
    { jsonrpc: "2.0", id: null, method: "ping" },
    { jsonrpc: "2.0", id: 1, method: "ping", params: null },
    { jsonrpc: "2.0", id: 1, method: "ping", params: [1] },
    { jsonrpc: "2.0", id: 1, method: "ping", extra: true },
    { jsonrpc: "1.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: 1, method: 5 },
    { jsonrpc: "2.0", id: 1, method: "ping", params: { _meta: { progressToken: { x: 1 } } } },
    { jsonrpc: "2.0", id: 1, method: "ping", params: { _meta: [] } },
  ];
  for (const message of refused) {
    const got = await read(message);
    assert.equal(got.ok, false, JSON.stringify(message));
    // -32600 for a message that is not one, -32602 for a request with malformed params.
    if (!got.ok) {
      assert.ok([-32600, -32602].includes((await got.response.json()).error.code), JSON.stringify(message));
    }
  }
});
