// `serve --transport http`: what SIGTERM does and the exit codes are the process's, so those tests
// spawn it; what the server answers runs it in process, on a real socket.
import assert from "node:assert/strict";
import { providerTools } from "../../harness/results.ts";
import { runInProcess, startHttpInProcess } from "../../harness/in_process.ts";
import { startHttpServer } from "../../harness/spawn_http.ts";
import { runCli } from "../../harness/spawn.ts";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "../../harness/sdk_client.ts";

function newClient(): Client {
  return new Client({ name: "serve-tests", version: "0" }, { capabilities: {} });
}

Deno.test("serveHttp() serves Streamable HTTP and legacy SSE over a socket and stops on SIGTERM", async () => {
  await using server = await startHttpServer({ args: ["--providers", "example"] });
  const health = await fetch(`${server.origin}/health`);
  assert.equal(health.status, 200);
  assert.equal((await health.json()).status, "ok");

  const streamable = newClient();
  await streamable.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  const pong = await streamable.callTool({ name: "example-ping", arguments: {} });
  assert.deepEqual(pong.structuredContent, { pong: true });

  const sse = newClient();
  await sse.connect(new SSEClientTransport(new URL(`${server.origin}/sse`)));
  const echo = await sse.callTool({ name: "example-echo", arguments: { via: "sse" } });
  assert.deepEqual(echo.structuredContent, { echo: { via: "sse" } });

  const code = await server.stop("SIGTERM");
  assert.equal(code, 0, server.stderr());
  const log = server.stderr();
  assert.match(log, /"msg":"shutting down: no new connections; finishing calls in flight"/);
  assert.match(log, /"msg":"HTTP server stopped"/);
  await streamable.close().catch(() => {});
  await sse.close().catch(() => {});
});

Deno.test("serveHttp() finishes a call in flight before exiting on SIGTERM", async () => {
  await using server = await startHttpServer({ args: ["--providers", "conformance"] });
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  const seen: number[] = [];
  let stopping: Promise<number> | undefined;
  const result = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
    onprogress: (p) => {
      seen.push(p.progress);
      // The first progress notification proves the call is running: stop the server now.
      stopping ??= server.stop("SIGTERM");
    },
  });
  assert.deepEqual(seen, [0, 50, 100]);
  assert.match((result.content as { text: string }[])[0]!.text, /executed successfully/);
  assert.equal(await stopping, 0, server.stderr());
  const records = server.stderr().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const lines = records.map((l) => l["msg"]);
  const shutdownAt = lines.indexOf("shutting down: no new connections; finishing calls in flight");
  // The call's outcome is on its request's access line, written once the answer was sent.
  const callAt = records.findIndex((l) =>
    l["tool_name"] === "test_tool_with_progress" && l["tool_status"] === "ok"
  );
  assert.ok(
    shutdownAt !== -1 && callAt > shutdownAt,
    `the call ended after shutdown began: ${lines.join(" | ")}`,
  );
  await client.close().catch(() => {});
});

Deno.test("serveHttp() in stateless mode serves the SDK client", async () => {
  await using server = await startHttpInProcess({ args: ["--providers", "example", "--stateless"] });
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`));
  await client.connect(transport);
  assert.equal(transport.sessionId, undefined);
  const tools = providerTools((await client.listTools()).tools);
  assert.deepEqual(tools.map((t) => t.name), ["example-ping", "example-echo"]);
  await client.close();
});

Deno.test("serve --transport http refuses a listen address outside --allow-net, naming the fix", async () => {
  // The permission set allows any port of the loopback and wildcard hosts; 127.0.0.2 is not one.
  const r = await runCli(["serve", "--transport", "http", "--host", "127.0.0.2", "--port", "8123"], {
    exactPermissions: true,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /Not allowed to listen on "127\.0\.0\.2:8123"/);
  assert.match(r.stderr, /add the host to permissions\.default\.net in deno\.json/);
});

Deno.test("serve --transport http names the fix when the port is taken", async () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = String(taken.addr.port);
  const r = await runInProcess(["serve", "--transport", "http", "--port", port, "--providers", "example"]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`Cannot listen on "127\\.0\\.0\\.1:${port}": the address is in use`));
  assert.match(r.stderr, /--port or MCP_HTTP_PORT/);
});

/** Sends one raw HTTP/1.1 request on `conn` and returns the head of the response. */
async function rawRequest(conn: Deno.Conn, head: string): Promise<string> {
  await conn.write(new TextEncoder().encode(head));
  const buf = new Uint8Array(4096);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

Deno.test("serveHttp() exits on SIGTERM although a legacy SSE client stopped reading its stream", async () => {
  await using server = await startHttpServer({
    args: ["--providers", "example"],
    env: { MCP_CHARACTER_LIMIT: "1000000" },
  });
  using stalled = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  const head = await rawRequest(
    stalled,
    "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
  );
  const endpoint = /data: (\/message\?session_id=[0-9a-f-]{36})/.exec(head)?.[1];
  assert.ok(endpoint, head);
  // About 7 MB of answers (each carries the pad in its text and its structuredContent, within
  // the raised character limit): more than the socket buffers take, less than the 8 MiB backlog
  // cap that drops a session, so the rest stays queued for a client that never reads.
  const pad = "x".repeat(900_000);
  for (let id = 1; id <= 4; id++) {
    const res: Response = await fetch(`${server.origin}${endpoint}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "example-echo", arguments: { pad } },
      }),
    });
    assert.equal(res.status, 202);
    await res.body?.cancel();
  }
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const code = await Promise.race([
    server.stop("SIGTERM"),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("still running 15 s after SIGTERM"), 15_000);
    }),
  ]);
  clearTimeout(timer);
  if (code !== 0) server.child.kill("SIGKILL");
  assert.equal(code, 0, server.stderr());
  assert.ok(performance.now() - started < 10_000, "the stalled client does not hold up the exit");
  assert.match(
    server.stderr(),
    /"msg":"stopping with responses still unsent to clients that stopped reading"/,
  );
  assert.match(server.stderr(), /"msg":"HTTP server stopped"/);
});

Deno.test("serveHttp() answers a Host header that is not a host name with 400 and a request id", async () => {
  await using server = await startHttpInProcess({ args: ["--providers", "example"] });
  for (const host of ["localhost:evil", "[::1]evil.example", "::1"]) {
    using conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    const head = await rawRequest(conn, `GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    assert.match(head, /^HTTP\/1\.1 400 /, `${host}: ${head}`);
    assert.match(head, /x-request-id: [0-9a-f-]{36}/i, host);
  }
  assert.equal(await server.stop(), 0);
  assert.doesNotMatch(server.stderr(), /"level":"error"/, "a client's bad header is not a server error");
});
