import assert from "node:assert/strict";
import { startHttpServer } from "../../fakes/http_server.ts";
import { runCli } from "../../fakes/server.ts";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "../../fakes/sdk_client.ts";

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
  const lines = server.stderr().split("\n").filter(Boolean).map((l) => JSON.parse(l)["msg"]);
  const shutdownAt = lines.indexOf("shutting down: no new connections; finishing calls in flight");
  const callAt = lines.indexOf("tool call");
  assert.ok(
    shutdownAt !== -1 && callAt > shutdownAt,
    `the call ended after shutdown began: ${lines.join(" | ")}`,
  );
  await client.close().catch(() => {});
});

Deno.test("serveHttp() in stateless mode serves the SDK client", async () => {
  await using server = await startHttpServer({ args: ["--providers", "example", "--stateless"] });
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`));
  await client.connect(transport);
  assert.equal(transport.sessionId, undefined);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["example-ping", "example-echo"]);
  await client.close();
});

Deno.test("serve --transport http refuses a listen address outside --allow-net, naming the fix", async () => {
  const r = await runCli(["serve", "--transport", "http", "--port", "8123"], { exactPermissions: true });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /Not allowed to listen on "127\.0\.0\.1:8123"/);
  assert.match(r.stderr, /--allow-net=127\.0\.0\.1:8123/);
});

Deno.test("serve --transport http names the fix when the port is taken", async () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = String(taken.addr.port);
  const r = await runCli(["serve", "--transport", "http", "--port", port, "--providers", "example"]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`Cannot listen on "127\\.0\\.0\\.1:${port}": the address is in use`));
  assert.match(r.stderr, /--port or MCP_HTTP_PORT/);
});
