// The connection guard's direct way: Deno's HTTP server reads the socket the guard accepted,
// and the guard counts and times the connection from `dispatch`, `answered` and `done` without
// seeing a byte. These pin that this Deno still offers the function the direct way rests on, and
// what the guard must keep without the bytes: the client's own address reaches the handler; a
// slow download is never closed for room; an answer that stops moving is closed at the busy
// deadline while a stream is not; and ending a connection that already ended is harmless (Deno
// throws from an event listener if it is asked to, which would end the process).
import assert from "node:assert/strict";
import { directAnswer, directServer } from "../../../lib/mcp/http/_conn_direct.ts";
import { ConnectionGuard } from "../../../lib/mcp/http/_conn_guard.ts";
import type { ConnectionGuardOptions } from "../../../lib/mcp/http/_conn_guard.ts";
import { Logger } from "../../../lib/log.ts";
import { GUARD_LIMITS, readFor, readUpTo, sendOn } from "./_raw_conn.ts";

const enc = new TextEncoder();
const BIG = 8 * 1024 * 1024;

interface Rig extends AsyncDisposable {
  port: number;
  guard: ConnectionGuard;
  /** The peer address each dispatched request carried, in order. */
  peers: string[];
}

/** The guard on a loopback port handing its connections to Deno's HTTP server, as serve.ts does. */
function rig(options: Partial<ConnectionGuardOptions> = {}): Rig {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const peers: string[] = [];
  const handOff = directServer(async (req, info): Promise<Response> => {
    const path = new URL(req.url).pathname;
    const from = info.remoteAddr as Deno.NetAddr;
    const dispatched = guard.dispatch(from, req.method, path);
    if (!dispatched) return new Response("unknown connection", { status: 500 });
    peers.push(`${dispatched.peer}:${from.port}`);
    info.completed.then(dispatched.done, dispatched.done);
    if (dispatched.refusal) return new Response("refused", { status: dispatched.refusal.status });
    let res: Response;
    if (path === "/big") {
      res = new Response(new Uint8Array(BIG).fill(65));
    } else if (path === "/events") {
      const chunk = enc.encode(": keepalive\n\n");
      let timer: ReturnType<typeof setInterval> | undefined;
      res = new Response(
        new ReadableStream({
          start: (c) => {
            timer = setInterval(() => c.enqueue(chunk), 100);
          },
          cancel: () => clearInterval(timer),
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    } else if (path === "/last") {
      res = new Response("last", { headers: { connection: "close" } });
    } else {
      if (path === "/slow") await new Promise((resolve) => setTimeout(resolve, 300));
      res = new Response(`ok ${path}`);
    }
    return await directAnswer(res, dispatched);
  }, () => new Response("error", { status: 500 }));
  if (typeof handOff === "string") throw new Error(handOff);
  const guard: ConnectionGuard = new ConnectionGuard(listener, {
    ...GUARD_LIMITS,
    logger: new Logger(),
    handOff,
    ...options,
  });
  const serving = guard.serve();
  return {
    port: listener.addr.port,
    guard,
    peers,
    async [Symbol.asyncDispose]() {
      guard.closeAll();
      await serving;
      await guard.settled(2_000);
    },
  };
}

/** Two connections: one answered and idle, one whose request (/slow) is in flight. */
async function idleAndBusy(port: number): Promise<{ idle: Deno.Conn; busy: Deno.Conn } & Disposable> {
  const idle = await sendOn(port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  await idle.read(new Uint8Array(4096));
  const busy = await sendOn(port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    idle,
    busy,
    [Symbol.dispose]() {
      for (const conn of [idle, busy]) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("directServer() finds this Deno's way to serve an accepted connection", () => {
  // Deno 2's internal serveHttpOnConnection: without it the guard falls back to the proxy way.
  const handOff = directServer(() => new Response("ok"), () => new Response("error"));
  assert.equal(typeof handOff, "function", String(handOff));
});

Deno.test("ConnectionGuard (direct) passes each request the client's own address, pipelined or not", async () => {
  await using r = rig();
  using conn = await Deno.connect({ hostname: "127.0.0.1", port: r.port });
  const local = conn.localAddr as Deno.NetAddr;
  await conn.write(
    enc.encode("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
  );
  const got = await readFor(conn, 5_000);
  assert.deepEqual([...got.text.matchAll(/ok (\/\w)/g)].map((m) => m[1]), ["/a", "/b"]);
  assert.deepEqual(r.peers, [`127.0.0.1:${local.port}`, `127.0.0.1:${local.port}`]);
  await r.guard.settled(2_000);
  assert.equal(r.guard.stats().open, 0, "the connection is counted out once it ends");
});

Deno.test("ConnectionGuard (direct) ends a connection once an answer saying Connection: close is out", async () => {
  // Deno's server would keep it open.
  await using r = rig({ idleTimeoutMs: 10_000 });
  using conn = await sendOn(r.port, "GET /last HTTP/1.1\r\nHost: x\r\n\r\n");
  const got = await readFor(conn, 5_000);
  assert.match(got.text, /^HTTP\/1\.1 200[\s\S]*last$/);
  assert.ok(got.closed, "the connection ends with the answer");
  assert.equal(r.guard.stats().timedOut, 0);
});

Deno.test("ConnectionGuard (direct) refuses a request sent after an answer that said Connection: close", async () => {
  await using r = rig({ idleTimeoutMs: 10_000 });
  using conn = await sendOn(
    r.port,
    "GET /last HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
  );
  const got = await readFor(conn, 5_000);
  assert.deepEqual([...got.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]), ["200", "503"], got.text);
  assert.ok(got.closed);
});

Deno.test("ConnectionGuard (direct) closes an unfinished head and an idle connection, without an answer", async () => {
  await using r = rig({ headerTimeoutMs: 300, idleTimeoutMs: 300 });
  using partial = await sendOn(r.port, "GET /a HTTP/1.1\r\nHost: x\r\n");
  const t0 = performance.now();
  assert.deepEqual(await readFor(partial, 5_000), { text: "", bytes: 0, closed: true });
  assert.ok(performance.now() - t0 >= 250, "not before the deadline");
  using idle = await sendOn(r.port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  const got = await readFor(idle, 5_000);
  assert.match(got.text, /ok \/a$/);
  assert.ok(got.closed, "closed once idle past the deadline");
  assert.equal(r.guard.stats().timedOut, 2);
});

Deno.test("ConnectionGuard (direct) never closes for room a connection whose answer is still on its way", async () => {
  await using r = rig({ maxConnections: 1, idleTimeoutMs: 3_000 });
  using slow = await sendOn(r.port, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  await slow.read(new Uint8Array(1024));
  await sleep(600);
  using other = await sendOn(r.port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  // Served from the health reserve, not by closing the download.
  assert.match((await readFor(other, 5_000)).text, /^HTTP\/1\.1 200[\s\S]*ok \/health$/);
  const got = await readUpTo(slow, BIG, 1024);
  assert.ok(got >= BIG, `the answer was cut after ${got} bytes ${JSON.stringify(r.guard.stats())}`);
  assert.equal(r.guard.stats().evicted, 0);
});

Deno.test("ConnectionGuard (direct) closes an answer that stops moving, not a stream", async () => {
  // busy deadline: max(idle, body + 1 s grace) = 2 s. Deno holds /big whole at once: paced, it is
  // pulled only as the client takes it, so the guard sees it stop.
  await using r = rig();
  using stalled = await sendOn(r.port, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  using stream = await sendOn(r.port, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  // The stalled client never reads; the stream's client reads on for 3.5 s.
  const streamed = await readFor(stream, 3_500);
  assert.equal(streamed.closed, false, "the stream was closed");
  assert.ok(streamed.text.split(": keepalive").length > 20, streamed.text);
  assert.equal(r.guard.stats().timedOut, 1, "the stalled download was closed");
  assert.equal(r.guard.stats().open, 1);
  const rest = await readFor(stalled, 2_000);
  assert.ok(rest.closed, "closed");
  assert.ok(rest.bytes < BIG, `not all of it: ${rest.bytes}`);
});

Deno.test("ConnectionGuard (direct) never cuts a download that keeps moving, however long it takes", async () => {
  // Idle and busy deadlines of 1 s and 2 s; the download takes about 3 s.
  await using r = rig({ idleTimeoutMs: 1_000, bodyTimeoutMs: 500 });
  using conn = await sendOn(r.port, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  const buf = new Uint8Array(256 * 1024);
  let got = 0;
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    got += n;
    if (got >= BIG) break;
    await sleep(80);
  }
  // (Once Deno has written the last of it, the idle deadline may close the connection while the
  // client still reads what the system holds for it: that much is delivered anyway.)
  assert.ok(got >= BIG, `the answer was cut after ${got} bytes`);
});

Deno.test("ConnectionGuard (direct) ends its connections at shutdown, and again, without harm", async () => {
  const r = rig();
  // One its client ended (its connection gone: ending it again must not reach Deno), one idle,
  // one in flight.
  const ended = await sendOn(r.port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  await ended.read(new Uint8Array(4096));
  ended.close();
  for (let i = 0; i < 50 && r.guard.stats().open > 0; i++) await sleep(10);
  assert.equal(r.guard.stats().open, 0, "counted out once its client closed");
  using pair = await idleAndBusy(r.port);
  const { idle, busy } = pair;
  r.guard.stopAccepting();
  r.guard.endServed();
  // The one in flight is answered, saying the connection ends with it; both end soon after
  // (a quarter second after their last answer, not the sweep's linger).
  const answer = (await readFor(busy, 5_000)).text;
  assert.match(answer, /ok \/slow$/);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  assert.ok(await r.guard.settled(1_000), "every connection ended");
  assert.ok((await readFor(idle, 1_000)).closed, "the idle one was closed");
  // Ending them all again, after they ended: Deno would throw, uncaught, if asked to.
  r.guard.closeAll();
  await r[Symbol.asyncDispose]();
  await sleep(100);
});

Deno.test("ConnectionGuard (direct) closeAll ends busy and idle connections at once", async () => {
  const r = rig();
  using pair = await idleAndBusy(r.port);
  const { idle, busy } = pair;
  r.guard.endServed();
  r.guard.closeAll();
  const [a, b] = await Promise.all([readFor(idle, 2_000), readFor(busy, 2_000)]);
  assert.ok(a.closed && b.closed, "both closed at once");
  assert.equal(b.text, "", "the busy one closed before its answer");
  await r[Symbol.asyncDispose]();
});
