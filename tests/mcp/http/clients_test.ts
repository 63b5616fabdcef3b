import assert from "node:assert/strict";
import {
  Client,
  LoggingMessageNotificationSchema,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "../../harness/sdk_client.ts";
import { BASE, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";
import { payloadOf } from "../../harness/results.ts";

function streamable(h: Harness): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { fetch: h.fetch });
}

function newClient(): Client {
  return new Client({ name: "http-tests", version: "0" }, { capabilities: {} });
}

async function exerciseExampleTools(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === "example-ping"), "example-ping is listed");
  const pong = await client.callTool({ name: "example-ping", arguments: {} });
  assert.deepEqual(pong.structuredContent, { pong: true });
  const echo = await client.callTool({ name: "example-echo", arguments: { q: "Oslo", n: [1, 2] } });
  assert.deepEqual(echo.structuredContent, { echo: { q: "Oslo", n: [1, 2] } });
  const bad = await client.callTool({ name: "example-ping", arguments: { surprise: 1 } });
  assert.equal(bad.isError, true, "invalid arguments stay an isError result");
  const payload = payloadOf(bad);
  assert.equal(payload.error_type, "VALIDATION_ERROR");
}

Deno.test("createHttpHandler() serves the SDK client over Streamable HTTP with a session", async () => {
  await using h = await startHarness();
  const client = newClient();
  const transport = streamable(h);
  await client.connect(transport);
  assert.match(transport.sessionId ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(client.getServerVersion()?.name, "opendata-mcp");
  await exerciseExampleTools(client);
  assert.equal(h.handler.sessions().streamable, 1);
  await transport.terminateSession();
  await client.close();
  assert.equal(h.handler.sessions().streamable, 0, "DELETE /mcp ends the session");
});

Deno.test("createHttpHandler() serves the SDK client over stateless Streamable HTTP", async () => {
  await using h = await startHarness({ server: { stateless: true } });
  const client = newClient();
  const transport = streamable(h);
  await client.connect(transport);
  assert.equal(transport.sessionId, undefined, "no session id in stateless mode");
  await exerciseExampleTools(client);
  assert.deepEqual(h.handler.sessions(), { streamable: 0, sse: 0 });
  await client.close();
});

Deno.test("createHttpHandler() serves the SDK client over legacy SSE", async () => {
  await using h = await startHarness();
  const client = newClient();
  const transport = new SSEClientTransport(new URL(`${BASE}/sse`), { fetch: h.fetch });
  await client.connect(transport);
  assert.equal(h.handler.sessions().sse, 1);
  await exerciseExampleTools(client);
  await client.close();
});

Deno.test("createHttpHandler() keeps concurrent sessions' notifications apart", async () => {
  await using h = await startHarness();
  const clients = [newClient(), newClient(), newClient()];
  const transports = [
    streamable(h),
    streamable(h),
    new SSEClientTransport(new URL(`${BASE}/sse`), { fetch: h.fetch }),
  ];
  const logs: string[][] = [[], [], []];
  const progress: number[][] = [[], [], []];
  for (const [i, client] of clients.entries()) {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs[i]!.push(String(n.params.data));
    });
    await client.connect(transports[i]!);
  }
  await Promise.all(clients.map((client, i) =>
    Promise.all([
      client.callTool({ name: "test_tool_with_logging", arguments: {} }),
      client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
        onprogress: (p) => progress[i]!.push(p.progress),
      }),
    ])
  ));
  for (const i of [0, 1, 2]) {
    assert.deepEqual(logs[i], ["Tool execution started", "Tool processing data", "Tool execution completed"]);
    assert.deepEqual(progress[i], [0, 50, 100]);
  }
  for (const client of clients) await client.close();
});

Deno.test("createHttpHandler() negotiates protocol 2024-11-05 for an older client", async () => {
  await using h = await startHarness();
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2024-11-05",
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "OpenAI Agent Builder", version: "1.0.0" },
      },
    }),
  });
  const text = await res.text();
  const data = JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
  assert.equal(data.result.protocolVersion, "2024-11-05");
  assert.equal(data.result.serverInfo.name, "opendata-mcp");
  assert.ok(data.result.capabilities.tools, "tools capability announced");
});

Deno.test("createHttpHandler() lets SDK clients in with the bearer token on both transports", async () => {
  await using h = await startHarness({ server: { auth_token: "tok-123456789" } });
  const requestInit = { headers: { Authorization: "Bearer tok-123456789" } };
  const viaStreamable = newClient();
  await viaStreamable.connect(
    new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { fetch: h.fetch, requestInit }),
  );
  assert.deepEqual(
    (await viaStreamable.callTool({ name: "example-ping", arguments: {} })).structuredContent,
    {
      pong: true,
    },
  );
  const viaSse = newClient();
  await viaSse.connect(new SSEClientTransport(new URL(`${BASE}/sse`), { fetch: h.fetch, requestInit }));
  assert.deepEqual((await viaSse.callTool({ name: "example-ping", arguments: {} })).structuredContent, {
    pong: true,
  });
  await viaStreamable.close();
  await viaSse.close();
  const without = newClient();
  await assert.rejects(() => without.connect(streamable(h)), /401|Unauthorized/);
});
