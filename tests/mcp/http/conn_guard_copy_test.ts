// The connection guard copies bytes and learns where a connection stands from the server behind
// it (dispatch when a head was parsed, done when the answer was written to the guard). These pin
// what that must not cost: an answer still on its way to a slow reader is never closed for room;
// a client that half-closes after its request still gets the answer; and a client that stops
// reading cannot hold a busy connection by sending a byte now and then. A real ConnectionGuard on
// loopback in front of a real `Deno.serve` whose handler calls the guard as serve.ts does.
import assert from "node:assert/strict";
import { ConnectionGuard } from "../../../lib/mcp/http/_conn_guard.ts";
import type { ConnectionGuardOptions } from "../../../lib/mcp/http/_conn_guard.ts";
import { Logger } from "../../../lib/log.ts";
import { GUARD_LIMITS, readFor, readUpTo, sendOn } from "./_raw_conn.ts";

const enc = new TextEncoder();
const BIG = 8 * 1024 * 1024;

interface Rig extends AsyncDisposable {
  port: number;
  guard: ConnectionGuard;
}

/** The guard on a loopback port, in front of a server answering /big, /slow, /stream and /health. */
function rig(options: Partial<ConnectionGuardOptions> = {}): Rig {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const inner: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req, info): Promise<Response> => {
      const path = new URL(req.url).pathname;
      const dispatched = guard.dispatch(info.remoteAddr as Deno.NetAddr, req.method, path);
      if (!dispatched) return new Response("forbidden", { status: 403 });
      info.completed.then(dispatched.done, dispatched.done);
      if (dispatched.refusal) {
        return new Response("refused", {
          status: dispatched.refusal.status,
          headers: { connection: "close" },
        });
      }
      if (path === "/big") return new Response(new Uint8Array(BIG).fill(65));
      if (path === "/slow") await new Promise((resolve) => setTimeout(resolve, 300));
      if (path === "/stream") {
        const chunk = new Uint8Array(64 * 1024).fill(66);
        return new Response(new ReadableStream({ pull: (c) => c.enqueue(chunk) }));
      }
      return new Response(`ok ${path}`);
    },
  );
  const guard: ConnectionGuard = new ConnectionGuard(listener, {
    ...GUARD_LIMITS,
    logger: new Logger(),
    connect: () => Deno.connect({ hostname: "127.0.0.1", port: inner.addr.port }),
    ...options,
  });
  const serving = guard.serve();
  return {
    port: listener.addr.port,
    guard,
    async [Symbol.asyncDispose]() {
      guard.closeAll();
      await serving;
      await inner.shutdown();
    },
  };
}

Deno.test("ConnectionGuard never closes for room a connection whose answer is still on its way to a slow reader", async () => {
  await using r = rig({ maxConnections: 1 });
  using slow = await sendOn(r.port, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  await slow.read(new Uint8Array(1024));
  // The server has written its whole answer to the guard; the client reads nothing for a while.
  await new Promise((resolve) => setTimeout(resolve, 600));
  using other = await sendOn(r.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  // Served from the health reserve, not by closing the download.
  assert.match((await readFor(other, 5_000)).text, /^HTTP\/1\.1 200/);
  const got = await readUpTo(slow, BIG, 1024);
  assert.ok(got >= BIG, `the answer was cut after ${got} bytes`);
  assert.equal(r.guard.stats().evicted, 0);
});

Deno.test("ConnectionGuard answers a client that half-closes after its request", async () => {
  await using r = rig();
  for (const path of ["/health", "/slow"]) {
    using conn = await Deno.connect({ hostname: "127.0.0.1", port: r.port });
    await conn.write(enc.encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
    await conn.closeWrite();
    const got = await readFor(conn, 5_000);
    assert.match(got.text, /^HTTP\/1\.1 200/, `${path}: ${JSON.stringify(got.text)}`);
    assert.match(got.text, new RegExp(`ok ${path}$`));
    assert.ok(got.closed, `${path}: the connection ends once the answer is out`);
  }
});

Deno.test("ConnectionGuard closes a busy connection whose client stops reading, however often it sends a byte", async () => {
  await using r = rig();
  using conn = await sendOn(r.port, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  // Never reads the endless answer; a byte every 200 ms for 3.5 s (the deadlines are 1 s and 2 s).
  for (let i = 0; i < 17 && r.guard.stats().open > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    await conn.write(enc.encode("x")).catch(() => {});
  }
  assert.equal(r.guard.stats().open, 0, "the connection is still held");
  assert.equal(r.guard.stats().timedOut, 1);
});

Deno.test("ConnectionGuard answers HTTP/2 without TLS (prior knowledge) with 505, and a first head over 64 KiB with 431", async () => {
  await using r = rig();
  using h2 = await sendOn(r.port, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  const refused = await readFor(h2, 5_000);
  assert.match(refused.text, /^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
  assert.match(refused.text, /speak HTTP\/1\.1 here/);
  using big = await sendOn(r.port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(70_000)}`);
  assert.match((await readFor(big, 5_000)).text, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
});
