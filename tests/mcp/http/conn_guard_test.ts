// The connection guard against the real server: connection floods past the process's
// file-descriptor limit and the guard's fallback without a loopback grant against a spawned
// process (its limits and permissions are the point); the connection cap, head/body/idle
// deadlines and request framing on a real socket served in process.
import assert from "node:assert/strict";
import { permissionSet } from "../../../tools/permissions.ts";
import { runInProcess, startHttpInProcess } from "../../harness/in_process.ts";
import { completeLines, hasPrlimit, startHttpServer } from "../../harness/spawn_http.ts";
import type { HttpServerProcess } from "../../harness/spawn_http.ts";
import { childEnv, removeHome, scratchHome } from "../../harness/spawn.ts";
import { initializeBody } from "./_harness.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What a raw connection received until the server closed it, or until `boundMs` passed. */
interface Received {
  text: string;
  /** The server closed the connection (or reset it) within the bound. */
  closed: boolean;
}

/** Reads from `conn` until the server closes it, `until` says stop, or `boundMs` passes. */
async function receive(
  conn: Deno.Conn,
  boundMs: number,
  until: (text: string) => boolean = () => false,
): Promise<Received> {
  let text = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), boundMs);
  });
  const buf = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      const n = await Promise.race([conn.read(buf), expired]);
      if (n === "expired") return { text, closed: false };
      if (n === null) return { text, closed: true };
      text += dec.decode(buf.subarray(0, n));
      if (until(text)) return { text, closed: false };
    }
  } catch {
    return { text, closed: true };
  } finally {
    clearTimeout(timer);
  }
}

async function connect(port: number): Promise<Deno.Conn> {
  return await Deno.connect({ hostname: "127.0.0.1", port });
}

async function send(conn: Deno.Conn, text: string): Promise<void> {
  const bytes = enc.encode(text);
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** Counts complete HTTP responses with `status` in `text` (heads only). */
function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

const HEALTH = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/**
 * Sends `GET /health` on new connections until one is answered other than `503` (the guard's
 * "at the limit, retry shortly"), for at most `boundMs`; returns that answer and its connection.
 */
async function healthOnceAdmitted(port: number, boundMs: number): Promise<{ conn: Deno.Conn; text: string }> {
  const until = performance.now() + boundMs;
  for (;;) {
    const conn = await connect(port);
    await send(conn, HEALTH).catch(() => {});
    const got = await receive(conn, 10_000, (t) => t.includes('"status":"ok"'));
    if (statuses(got.text)[0] !== 503 || performance.now() > until) return { conn, text: got.text };
    closeQuietly(conn);
  }
}
const ROOT = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/** Like {@linkcode healthOnceAdmitted} with any request, done when the answer holds `marker`. */
async function onceAdmitted(
  port: number,
  request: string,
  marker: string,
  boundMs: number,
): Promise<{ conn: Deno.Conn; text: string }> {
  const until = performance.now() + boundMs;
  for (;;) {
    const conn = await connect(port);
    await send(conn, request).catch(() => {});
    const got = await receive(conn, 10_000, (t) => t.includes(marker));
    if (statuses(got.text)[0] !== 503 || performance.now() > until) return { conn, text: got.text };
    closeQuietly(conn);
  }
}
/** The request head of the red-team finding: never finished. */
const PARTIAL = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n";

Deno.test({
  name: "serveHttp() keeps running through 600 unfinished request heads past its file-descriptor limit",
  ignore: Deno.build.os !== "linux" || !hasPrlimit(),
  fn: async () => {
    // The red-team repro (400 descriptors, default cap), then a cap set above the limit, so
    // accepting itself runs out of descriptors.
    for (
      const variant of [
        { nofile: 400, max: undefined, guard: "direct" },
        { nofile: 200, max: "2000", guard: "direct" },
        { nofile: 400, max: undefined, guard: "proxy" },
        { nofile: 200, max: "2000", guard: "proxy" },
      ]
    ) {
      const label = `nofile ${variant.nofile}, max_connections ${variant.max ?? "default"}, ${variant.guard}`;
      await using server = await startHttpServer({
        args: ["--providers", "example"],
        env: {
          MCP_CONNECTION_GUARD: variant.guard,
          MCP_HEADER_TIMEOUT: "1",
          ...(variant.max ? { MCP_MAX_CONNECTIONS: variant.max } : {}),
        },
        nofile: variant.nofile,
      });
      const flood = await Promise.all(Array.from({ length: 600 }, async () => {
        const conn = await connect(server.port);
        await send(conn, PARTIAL).catch(() => {});
        return conn;
      }));
      const outcomes = flood.map((conn) => receive(conn, 15_000));
      // A client arriving in the middle of the flood is served (after at most a few "retry
      // shortly"s while the flood is still being accepted): a stalled head makes room.
      const during = await healthOnceAdmitted(server.port, 10_000);
      closeQuietly(during.conn);
      assert.deepEqual(statuses(during.text), [200], `${label}: ${during.text}`);
      // Every flood connection is closed by the server: evicted, or at the deadline (answered
      // 408 the proxy way; the direct way sees no bytes and closes without an answer).
      const ends = await Promise.all(outcomes);
      assert.equal(ends.filter((e) => e.closed).length, 600, `${label}: flood connections still open`);
      const timedOut = ends.filter((e) => statuses(e.text)[0] === 408).length;
      if (variant.guard === "proxy") assert.ok(timedOut > 0, `${label}: some heads were answered 408`);
      else {
        assert.equal(timedOut, 0, `${label}: no answer to a head never parsed`);
        const answered = ends.flatMap((e) => statuses(e.text));
        assert.ok(
          answered.every((status) => status === 503),
          `${label}: only refusals at the cap: ${answered}`,
        );
      }
      for (const conn of flood) closeQuietly(conn);
      const after = await fetch(`${server.origin}/health`);
      assert.equal(after.status, 200, label);
      assert.equal((await after.json()).status, "ok");
      if (variant.max) await server.logged(/"msg":"out of file descriptors: holding fewer connections/);
      // Stopped first, so the whole log is in (a serving process writes it asynchronously).
      const code = await server.stop("SIGTERM");
      const log = server.stderr();
      assert.equal(code, 0, log);
      assert.doesNotMatch(log, /Too many open files/, `${label}: no error reached the top`);
      assert.match(log, /"msg":"HTTP server stopped","connections":\{"accepted":\d+/);
    }
  },
});

for (const guard of ["direct", "proxy"] as const) {
  Deno.test(`serveHttp() closes connections late with a head or a body, or idle too long, but not streams (${guard})`, async (t) => {
    await using server = await startHttpInProcess({
      args: ["--providers", "example"],
      env: {
        MCP_CONNECTION_GUARD: guard,
        MCP_HEADER_TIMEOUT: "0.5",
        MCP_BODY_TIMEOUT: "0.5",
        MCP_KEEPALIVE_INTERVAL: "0.1",
        MCP_IDLE_TIMEOUT: "0.4",
      },
    });

    await t.step("a connection that sends nothing is closed without an answer", async () => {
      using conn = await connect(server.port);
      const got = await receive(conn, 10_000);
      assert.deepEqual(got, { text: "", closed: true });
    });

    await t.step(
      `an unfinished head is ${guard === "proxy" ? "answered 408 and " : ""}closed at the deadline`,
      async () => {
        using conn = await connect(server.port);
        await send(conn, PARTIAL);
        const sent = performance.now();
        const got = await receive(conn, 10_000);
        assert.ok(got.closed);
        assert.ok(performance.now() - sent >= 400, "not before the head's deadline");
        if (guard === "direct") {
          // Deno's HTTP server holds the bytes: the guard sees none, and closes without an answer.
          assert.equal(got.text, "");
          return;
        }
        assert.deepEqual(statuses(got.text), [408], got.text);
        assert.match(got.text, /connection: close/i);
        assert.match(got.text, /the request head did not arrive within 0\.5 s/);
      },
    );

    await t.step("a body that stops short is answered 408 and the connection closed", async () => {
      using conn = await connect(server.port);
      await send(
        conn,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          'Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc":',
      );
      const got = await receive(conn, 10_000);
      assert.ok(got.closed, "the connection is closed after the 408");
      assert.deepEqual(statuses(got.text), [408], got.text);
      assert.match(got.text, /connection: close/i);
    });

    await t.step("a keep-alive connection idle past idle_timeout is closed", async () => {
      using conn = await connect(server.port);
      await send(conn, HEALTH);
      const got = await receive(conn, 10_000);
      assert.deepEqual(statuses(got.text), [200]);
      assert.ok(got.closed);
    });

    await t.step("an SSE stream lives on past idle_timeout with its keep-alive comments", async () => {
      using conn = await connect(server.port);
      await send(conn, "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
      // Ten keep-alives 0.1 s apart span 1 s, more than twice the idle timeout.
      const got = await receive(conn, 15_000, (t) => t.split(": keepalive").length > 10);
      assert.equal(got.closed, false, got.text);
      assert.match(got.text, /event: endpoint/);
    });
  });
}

Deno.test("serveHttp() holds max_connections: an idle connection makes room, busy ones do not", async (t) => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { MCP_MAX_CONNECTIONS: "3" },
  });
  const open: Deno.Conn[] = [];
  try {
    await t.step("the longest idle connection is closed for a new one", async () => {
      for (let i = 0; i < 3; i++) {
        const conn = await connect(server.port);
        open.push(conn);
        await send(conn, ROOT);
        const got = await receive(conn, 10_000, (t) => t.includes('"tool_count"'));
        assert.deepEqual(statuses(got.text), [200]);
      }
      // Connections that only just went idle are spared; once idle a moment, one makes room.
      const fourth = await onceAdmitted(server.port, ROOT, '"tool_count"', 10_000);
      open.push(fourth.conn);
      assert.deepEqual(statuses(fourth.text), [200]);
      const first = await receive(open[0]!, 10_000);
      assert.deepEqual(first, { text: "", closed: true }, "the first, idle the longest, was closed");
    });
    for (const conn of open.splice(0)) closeQuietly(conn);

    await t.step("when every connection is busy the excess is answered 503 at once", async () => {
      for (let i = 0; i < 3; i++) {
        const conn = await connect(server.port);
        open.push(conn);
        await send(conn, "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
        await receive(conn, 10_000, (t) => t.includes("event: endpoint"));
      }
      using extra = await connect(server.port);
      // Its request is never passed on: the answer must still reach it (no reset).
      await send(extra, ROOT);
      const got = await receive(extra, 10_000);
      assert.ok(got.closed);
      assert.deepEqual(statuses(got.text), [503], got.text);
      assert.match(got.text, /Too many connections: the server holds its limit of 3 \(MCP_MAX_CONNECTIONS\)/);
      assert.match(got.text, /retry-after: 1/i);
    });

    await t.step(
      "a health probe is still answered, from the reserve, and its connection then closed",
      async () => {
        using probe = await connect(server.port);
        await send(probe, HEALTH);
        const got = await receive(probe, 10_000);
        assert.deepEqual(statuses(got.text), [200], got.text);
        assert.match(got.text, /"status":"ok"/);
        // Said in the answer too, so a client does not send the connection another request.
        assert.match(got.text, /\r\nconnection: close\r\n/i);
        assert.ok(got.closed, "a reserve connection serves one probe");
      },
    );
  } finally {
    for (const conn of open) closeQuietly(conn);
  }
  await server.logged(/"msg":"connection limit reached: refusing new connections"/);
});

Deno.test("serveHttp() passes well-framed requests on with the client's address and refuses ambiguous framing", async (t) => {
  await using server = await startHttpInProcess({ args: ["--providers", "example"] });

  await t.step("pipelined requests, HEAD and a chunked body on one connection", async () => {
    using conn = await connect(server.port);
    const init = initializeBody();
    const chunked = `${init.length.toString(16)}\r\n${init}\r\n0\r\n\r\n`;
    await send(
      conn,
      HEALTH + "HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" +
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
    );
    const got = await receive(conn, 10_000, (t) => t.includes('"serverInfo"'));
    assert.deepEqual(statuses(got.text), [200, 200, 200], got.text);
    assert.match(got.text, /mcp-session-id: [0-9a-f-]{36}/);
  });

  await t.step("the client's address reaches the handler, whatever header claims another", async () => {
    using conn = await connect(server.port);
    await send(
      conn,
      "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Opendata-Mcp-Peer: forged 203.0.113.9\r\n\r\n",
    );
    const got = await receive(conn, 10_000, (t) => t.includes('"status":"ok"'));
    const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(got.text)?.[1];
    assert.ok(requestId, got.text);
    const line = await server.logged(new RegExp(`"request_id":"${requestId}"`));
    assert.equal(JSON.parse(line)["client_ip"], "127.0.0.1");
  });

  await t.step(
    "framing read one way only: one parser reads every request, and ambiguity is refused",
    async () => {
      // No second parser sits in front of the server's (the guard reads no HTTP), so nothing can be
      // read two ways: a head with bare line feeds is read by the one parser, as it is.
      using bare = await connect(server.port);
      await send(bare, "GET /health HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n");
      const served = await receive(bare, 10_000);
      assert.ok(served.closed);
      assert.deepEqual(statuses(served.text), [200], served.text);
      for (
        const wire of [
          "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
          "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\n folded\r\n\r\n",
        ]
      ) {
        using conn = await connect(server.port);
        // More bytes follow the bad head; the answer must still reach the client (no reset).
        await send(conn, wire + "x".repeat(64 * 1024));
        const got = await receive(conn, 10_000);
        assert.ok(got.closed, JSON.stringify(wire));
        assert.deepEqual(statuses(got.text), [400], got.text);
      }
    },
  );
});

/** `GET /health` on a raw socket is answered, and its access line names the client's own address. */
async function healthSeesPeer(server: HttpServerProcess): Promise<void> {
  using conn = await connect(server.port);
  await send(conn, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  const got = await receive(conn, 10_000);
  assert.deepEqual(statuses(got.text), [200]);
  const requestId = /x-request-id: ([0-9a-f-]{36})/i.exec(got.text)?.[1];
  assert.ok(requestId, got.text);
  const line = await server.logged(new RegExp(`"request_id":"${requestId}"`));
  assert.equal(JSON.parse(line)["client_ip"], "127.0.0.1");
}

Deno.test("serveHttp() guards through a loopback port, else runs unguarded and says why", async (t) => {
  const elsewhere = Deno.makeTempDirSync({ prefix: "opendata-mcp-data-" });
  try {
    await t.step("direct: the guard hands each socket to Deno's HTTP server", async () => {
      await using server = await startHttpServer({
        args: ["--providers", "example", "--data-dir", elsewhere],
      });
      assert.match(server.stderr(), /"guard":"direct"/);
      assert.doesNotMatch(server.stderr(), /inner_port/);
      await healthSeesPeer(server);
    });

    await t.step("proxy, when --allow-net allows 127.0.0.1: a loopback port", async () => {
      await using server = await startHttpServer({
        args: ["--providers", "example", "--data-dir", elsewhere],
        env: { MCP_CONNECTION_GUARD: "proxy" },
      });
      assert.match(server.stderr(), /"guard":"loopback port"/);
      await healthSeesPeer(server);
      // The loopback port behind the guard answers only connections the guard opened.
      const start = server.stderr().split("\n").find((l) => l.includes('"serving MCP over HTTP"'))!;
      const innerPort = JSON.parse(start)["inner_port"];
      assert.ok(innerPort > 0, start);
      const direct = await fetch(`http://127.0.0.1:${innerPort}/health`);
      assert.equal(direct.status, 403);
      await direct.body?.cancel();
    });

    for (const guard of ["direct", "proxy"] as const) {
      await t.step(
        guard === "proxy"
          ? "proxy without a loopback grant: Deno.serve alone, with a warning naming the grant"
          : "direct needs no loopback grant: only the listen address",
        async () => {
          const home = scratchHome();
          const port = (() => {
            using probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
            return probe.addr.port;
          })();
          // Only the listen address: no loopback host on any port, no Unix socket.
          const args = [
            "--no-prompt",
            `--allow-net=127.0.0.1:${port}`,
            `--allow-env=${permissionSet().env.join(",")}`,
            "--allow-read",
            "--allow-write",
          ];
          const child = new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              ...args,
              new URL("../../../main.ts", import.meta.url).pathname,
              "serve",
              "--transport",
              "http",
              "--port",
              String(port),
              "--providers",
              "example",
              "--data-dir",
              elsewhere,
            ],
            env: childEnv(home, { MCP_CONNECTION_GUARD: guard }),
            clearEnv: true,
            cwd: home,
            stdin: "null",
            stdout: "null",
            stderr: "piped",
          }).spawn();
          const lines: string[] = [];
          try {
            const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
            let text = "";
            while (!completeLines(text).some((l) => l.includes('"serving MCP over HTTP"'))) {
              const { done, value } = await reader.read();
              if (done) break;
              text += value;
            }
            lines.push(...text.split("\n"));
            reader.releaseLock();
            const warning = lines.find((l) => l.includes("the connection guard is off"));
            if (guard === "direct") {
              assert.equal(warning, undefined, text);
              assert.match(text, /"guard":"direct"/);
            } else {
              assert.ok(warning, text);
              assert.match(
                JSON.parse(warning)["reason"],
                /--allow-net does not allow 127\.0\.0\.1 for a loopback port/,
              );
              assert.match(text, /"guard":"off"/);
            }
            const health = await fetch(`http://127.0.0.1:${port}/health`);
            assert.equal(health.status, 200);
            await health.body?.cancel();
          } finally {
            child.kill("SIGTERM");
            await child.status;
            await child.stderr.cancel().catch(() => {});
            removeHome(home);
          }
        },
      );
    }
  } finally {
    Deno.removeSync(elsewhere, { recursive: true });
  }
});

Deno.test("serve --transport http refuses an idle_timeout not longer than keepalive_interval", async () => {
  const r = await runInProcess(["serve", "--transport", "http", "--port", "0", "--providers", "example"], {
    env: { MCP_IDLE_TIMEOUT: "10", MCP_KEEPALIVE_INTERVAL: "15" },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /Cannot use "idle_timeout" 10 s: it must be longer than "keepalive_interval" \(15 s\)/,
  );
});

Deno.test("serveHttp() takes the proxy way, and says why, in a Deno that cannot hand it a socket", async () => {
  // The direct way rests on a function Deno keeps to itself (lib/mcp/http/_conn_direct.ts): here
  // it is taken away for this test's server.
  const deno = Deno as unknown as { internal: symbol } & Record<symbol, Record<string, unknown>>;
  const internals = deno[deno.internal]!;
  const original = internals.serveHttpOnConnection;
  internals.serveHttpOnConnection = undefined;
  try {
    await using server = await startHttpInProcess({ args: ["--providers", "example"] });
    const warning = await server.logged(/the connection guard copies bytes through a loopback port/);
    assert.match(JSON.parse(warning)["reason"], /offers no way to serve an accepted connection/);
    assert.match(server.stderr(), /"guard":"loopback port"/);
    using conn = await connect(server.port);
    await send(conn, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const got = await receive(conn, 10_000);
    assert.deepEqual(statuses(got.text), [200], got.text);
  } finally {
    internals.serveHttpOnConnection = original;
  }
});

Deno.test("serveHttp() stops soon with a kept-alive connection open, leaving nothing unsent", async () => {
  // The direct way ends idle connections itself at shutdown, a moment after their last answer.
  const server = await startHttpInProcess({ args: ["--providers", "example"] });
  using conn = await connect(server.port);
  await send(conn, HEALTH);
  const got = await receive(conn, 10_000, (t) => t.includes('"status":"ok"'));
  assert.deepEqual(statuses(got.text), [200]);
  const t0 = performance.now();
  assert.equal(await server.stop(), 0);
  const took = performance.now() - t0;
  assert.ok(took < 1_500, `stopping took ${Math.round(took)} ms`);
  assert.doesNotMatch(server.stderr(), /stopping with responses still unsent/);
  assert.ok((await receive(conn, 2_000)).closed, "the connection was closed");
});
