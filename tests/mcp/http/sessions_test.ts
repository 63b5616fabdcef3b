import assert from "node:assert/strict";
import {
  Client,
  CreateMessageRequestSchema,
  StreamableHTTPClientTransport,
} from "../../harness/sdk_client.ts";
import { RECLAIM_GRACE_MS } from "../../../lib/mcp/http/_sessions.ts";
import { BASE, initializeBody, jsonRpcMessages, openSession, postMcp, startHarness } from "./_harness.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function toolCall(id: number, name: string, args: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

Deno.test("createHttpHandler() refuses a session over max_sessions with 503 while every session is busy", async () => {
  await using h = await startHarness({ server: { max_sessions: 2 } });
  const readers: ReadableStreamDefaultReader<string>[] = [];
  for (const [n, id] of [await openSession(h), await openSession(h)].entries()) {
    const call = await postMcp(h, toolCall(n + 1, "test_elicitation", { message: "Name?" }), {
      "Mcp-Session-Id": id,
    });
    const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("elicitation/create")) text += (await reader.read()).value ?? "";
    readers.push(reader);
  }
  const third = await postMcp(h, initializeBody(7));
  assert.equal(third.status, 503);
  assert.equal(third.headers.get("retry-after"), "30");
  const body = await third.json();
  assert.equal(body.id, 7);
  assert.match(body.error.message, /The server is full: all 2 sessions \(MCP_MAX_SESSIONS\) are in use/);
  const sse = await h.fetch(`${BASE}/sse`);
  assert.equal(sse.status, 503, "legacy SSE sessions count against the same cap");
  await sse.body?.cancel();
  // The client gives up on its call: that session, its own, is idle again and makes room.
  await readers[0]!.cancel();
  h.clock.advance(RECLAIM_GRACE_MS);
  const again = await postMcp(h, initializeBody());
  assert.equal(again.status, 200, "an idle session makes room for a new one");
  await again.text();
  assert.deepEqual(h.handler.sessions(), { streamable: 2, sse: 0 });
  await readers[1]!.cancel();
});

Deno.test("createHttpHandler() expires idle sessions after session_idle_timeout, not busy ones", async () => {
  // The legacy SSE session below never initializes: keep it from the init timeout here.
  await using h = await startHarness({ server: { session_idle_timeout: 60, session_init_timeout: 3600 } });
  const idle = await openSession(h);
  const legacy = await h.fetch(`${BASE}/sse`);
  h.clock.advance(59_000);
  assert.equal(h.handler.sweep(), 0, "not yet");
  const kept = await openSession(h);
  const busy = await openSession(h);
  const call = await postMcp(h, toolCall(1, "test_elicitation", { message: "Name?" }), {
    "Mcp-Session-Id": busy,
  });
  const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  while (!pending.includes("elicitation/create")) pending += (await reader.read()).value ?? "";
  h.clock.advance(2_000);
  assert.equal(h.handler.sweep(), 2, "the first Streamable session and the SSE session expire");
  assert.deepEqual(h.handler.sessions(), { streamable: 2, sse: 0 });
  h.clock.advance(120_000);
  assert.equal(h.handler.sweep(), 1, "the idle one goes; the one waiting on its client stays");
  assert.deepEqual(h.handler.sessions(), { streamable: 1, sse: 0 });
  await reader.cancel();
  const gone = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }), {
    "Mcp-Session-Id": idle,
  });
  assert.equal(gone.status, 404);
  assert.equal((await gone.json()).error.code, -32001);
  assert.match(await legacy.text(), /^event: endpoint\n/, "the expired SSE stream ends");
  const expired = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }), {
    "Mcp-Session-Id": kept,
  });
  assert.equal(expired.status, 404);
  await expired.body?.cancel();
  const tick = h.ticks.find((t) => t.ms === 30_000);
  assert.ok(tick, "the sweep runs every half idle timeout");
});

Deno.test("DELETE /mcp ends the session; later requests get 404", async () => {
  await using h = await startHarness();
  const id = await openSession(h);
  const del = await h.fetch(`${BASE}/mcp`, { method: "DELETE", headers: { "Mcp-Session-Id": id } });
  assert.equal(del.status, 200);
  assert.equal(h.handler.sessions().streamable, 0);
  const closed = h.logs.find((l) => l["msg"] === "session closed" && l["session_id"] === id);
  assert.equal(
    closed?.["request_id"],
    del.headers.get("x-request-id"),
    "the DELETE's request id is on its log line",
  );
  const after = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), {
    "Mcp-Session-Id": id,
  });
  assert.equal(after.status, 404);
  await after.body?.cancel();
  const noSession = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
  assert.equal(noSession.status, 400, "a non-initialize request without a session");
  assert.match((await noSession.json()).error.message, /start a session with an initialize request/);
});

Deno.test("every response carries a UUID v4 X-Request-Id; its one access line tells the request and its call", async () => {
  await using h = await startHarness();
  const id = await openSession(h);
  const res = await postMcp(h, toolCall(1, "example-echo", { a: 1 }), { "Mcp-Session-Id": id });
  const requestId = res.headers.get("x-request-id");
  assert.match(requestId ?? "", UUID_V4);
  await res.text();
  const lines = h.logs.filter((l) => l["request_id"] === requestId);
  assert.deepEqual(lines.map((l) => l["msg"]), ["http request"], "one line per request");
  const access = lines[0]!;
  assert.equal(access["tool_name"], "example-echo");
  assert.equal(access["tool_status"], "ok");
  assert.equal(typeof access["tool_ms"], "number");
  assert.equal(access["rpc_method"], "tools/call");
  assert.equal(access["method"], "POST");
  assert.equal(access["path"], "/mcp");
  assert.equal(typeof access["duration_ms"], "number");
  assert.equal(access["status"], 200);
  assert.equal(access["session_id"], id);
  assert.equal(access["client_ip"], "192.0.2.1");
  const other = await h.fetch(`${BASE}/nope`);
  assert.equal(other.status, 404);
  assert.match(other.headers.get("x-request-id") ?? "", UUID_V4);
  assert.notEqual(other.headers.get("x-request-id"), requestId);
  await other.body?.cancel();
});

Deno.test("GET /health reports status, version, uptime, sessions and breakers", async () => {
  await using h = await startHarness();
  await openSession(h);
  h.clock.advance(90_000);
  const res = await h.fetch(`${BASE}/health`);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.status, "ok");
  assert.equal(body.name, "opendata-mcp");
  assert.equal(body.version, "0.1.0");
  assert.equal(body.uptime_s, 90);
  assert.deepEqual(body.sessions, { streamable: 1, sse: 0, max: 256 });
  assert.deepEqual(body.upstreams, {}, "no upstream called yet");
  h.app.http.breakerFor("api.example.org").failure(h.clock.now());
  const after = await (await h.fetch(`${BASE}/health`)).json();
  assert.equal(after.upstreams["api.example.org"].state, "closed");
  assert.equal(after.upstreams["api.example.org"].consecutive_failures, 1);
  const head = await h.fetch(`${BASE}/health`, { method: "HEAD" });
  assert.equal(head.status, 200);
});

Deno.test("GET / describes the server, its providers, tool count and endpoints", async () => {
  await using h = await startHarness({ server: { auth_token: "token-1234" } });
  const res = await h.fetch(`${BASE}/`);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.name, "opendata-mcp");
  assert.deepEqual(body.providers.map((p: { id: string }) => p.id), ["example", "conformance"]);
  assert.equal(body.tool_count, h.app.tools.length);
  assert.equal(body.auth, "token");
  assert.deepEqual(body.endpoints, {
    mcp: "/mcp",
    sse: "/sse",
    message: "/message?session_id=<id>",
    health: "/health",
  });
  const post = await h.fetch(`${BASE}/`, { method: "POST" });
  assert.equal(post.status, 405);
  assert.match(post.headers.get("allow")!, /GET/);
  await post.body?.cancel();
});

Deno.test("stateless mode refuses GET and DELETE /mcp and legacy SSE with a reason", async () => {
  await using h = await startHarness({ server: { stateless: true } });
  const get = await h.fetch(`${BASE}/mcp`, { headers: { Accept: "text/event-stream" } });
  assert.equal(get.status, 405);
  assert.match((await get.json()).error.message, /stateless/);
  const del = await h.fetch(`${BASE}/mcp`, { method: "DELETE" });
  assert.equal(del.status, 405);
  await del.body?.cancel();
  const sse = await h.fetch(`${BASE}/sse`);
  assert.equal(sse.status, 404);
  assert.match((await sse.json()).error.message, /Legacy SSE is off in stateless mode/);
  const { tools } = await (async () => {
    const [msg] = await jsonRpcMessages(
      await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })),
    );
    return msg!["result"] as { tools: unknown[] };
  })();
  assert.equal(tools.length, h.app.tools.length, "a lone tools/list works without initialize");
});

Deno.test("stateless mode fails sampling at once with a tool error instead of waiting", async () => {
  await using h = await startHarness({ server: { stateless: true } });
  const client = new Client({ name: "t", version: "0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(
    CreateMessageRequestSchema,
    () => ({ role: "assistant", content: { type: "text", text: "hi" }, model: "m" }),
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { fetch: h.fetch }));
  const started = performance.now();
  const result = await client.callTool({ name: "test_sampling", arguments: { prompt: "x" } });
  assert.ok(performance.now() - started < 5_000, "no request timeout was waited for");
  assert.equal(result.isError, true);
  // The SDK's own refusal: a stateless request has no channel back for a server-to-client request.
  assert.match((result.content as { text: string }[])[0]!.text, /cannot receive server-to-client requests/);
  await client.close();
});

Deno.test("close() lets a call in flight finish, refuses new work, then ends the sessions", async () => {
  await using h = await startHarness();
  const id = await openSession(h);
  const call = await postMcp(h, toolCall(1, "test_elicitation", { message: "Name?" }), {
    "Mcp-Session-Id": id,
  });
  const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("elicitation/create")) text += (await reader.read()).value ?? "";
  const ask = JSON.parse(text.split("\n").find((l) => l.includes("elicitation/create"))!.slice(6));

  const closed = h.handler.close(60_000);
  const fresh = await postMcp(h, initializeBody());
  assert.equal(fresh.status, 503, "no new sessions while draining");
  assert.match((await fresh.json()).error.message, /shutting down/);
  const newCall = await postMcp(h, toolCall(2, "example-ping"), { "Mcp-Session-Id": id });
  assert.equal(newCall.status, 503, "no new calls in a live session either");
  await newCall.body?.cancel();

  const answer = await postMcp(
    h,
    JSON.stringify({
      jsonrpc: "2.0",
      id: ask.id,
      result: { action: "accept", content: { username: "kari", email: "k@example.no" } },
    }),
    { "Mcp-Session-Id": id },
  );
  assert.equal(answer.status, 202, "the client's answer to the call in flight still gets in");
  while (!text.includes('"id":1,')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  assert.match(text, /User response: action=accept/);
  await closed;
  assert.deepEqual(h.handler.sessions(), { streamable: 0, sse: 0 });
});

Deno.test("close() stops waiting for unread stateless answers after the grace period", async () => {
  await using h = await startHarness({ server: { stateless: true } });
  const unread = await postMcp(h, toolCall(1, "example-ping"));
  assert.equal(unread.status, 200);
  await h.handler.close(0);
  assert.ok(
    h.logs.some((l) => l["msg"] === "closing with calls still in flight after the grace period"),
    "the straggler is reported",
  );
  const text = await unread.text();
  assert.match(text, /"pong":true/, "what was already answered is still delivered, then the stream ends");
});

/** Reads `reader` to its end; rejects if it is still open after `ms` (a guard, not a wait). */
async function untilEnd(reader: ReadableStreamDefaultReader<string>, ms = 5_000): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream is still open after ${ms} ms`)), ms);
  });
  let text = "";
  try {
    for (;;) {
      const { value, done } = await Promise.race([reader.read(), guard]);
      if (done) return text;
      text += value;
    }
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a call the client cancels ends its POST stream and no longer keeps the session from expiring", async () => {
  await using h = await startHarness({ server: { session_idle_timeout: 60 } });
  const id = await openSession(h);
  const call = await postMcp(h, toolCall(1, "test_elicitation", { message: "Name?" }), {
    "Mcp-Session-Id": id,
  });
  const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("elicitation/create")) text += (await reader.read()).value ?? "";
  const cancel = await postMcp(
    h,
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, reason: "user" },
    }),
    { "Mcp-Session-Id": id },
  );
  assert.equal(cancel.status, 202);
  await cancel.body?.cancel();
  // The SDK sends no response to a cancelled request, so nothing else would ever end this stream.
  const rest = await untilEnd(reader);
  assert.doesNotMatch(rest, /"id":1,/, "a cancelled request gets no response");
  h.clock.advance(61_000);
  assert.equal(h.handler.sweep(), 1, "the session is idle again and expires");
});

Deno.test("legacy SSE: a call the client cancels no longer keeps the session from expiring", async () => {
  await using h = await startHarness({ server: { session_idle_timeout: 60 } });
  const sse = await h.fetch(`${BASE}/sse`);
  const reader = sse.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
  const endpoint = /data: (\S+)/.exec(text)![1]!;
  const post = async (message: unknown) => {
    const res = await h.fetch(`${BASE}${endpoint}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(message),
    });
    assert.equal(res.status, 202);
    await res.body?.cancel();
  };
  try {
    await post(JSON.parse(initializeBody(0, "2024-11-05")));
    await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    await post(JSON.parse(toolCall(1, "test_elicitation", { message: "Name?" })));
    while (!text.includes("elicitation/create")) text += (await reader.read()).value ?? "";
    h.clock.advance(61_000);
    assert.equal(h.handler.sweep(), 0, "a session waiting on its call does not expire");
    await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    h.clock.advance(61_000);
    assert.equal(h.handler.sweep(), 1, "once the call is cancelled, the idle session expires");
  } finally {
    await reader.cancel();
  }
});

Deno.test("where the HTTP server says when a response is sent, a call counts as in flight until then", async () => {
  await using h = await startHarness({ server: { session_idle_timeout: 60 } });
  const id = await openSession(h);
  const sent = Promise.withResolvers<void>();
  const res = await h.handler(
    new Request(`${BASE}/mcp`, {
      method: "POST",
      headers: {
        host: "127.0.0.1:8000",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": id,
      },
      body: toolCall(1, "example-ping"),
    }),
    { remoteAddr: { hostname: "192.0.2.1" }, completed: sent.promise },
  );
  const [answer] = await jsonRpcMessages(res);
  assert.equal(answer!["id"], 1);
  h.clock.advance(61_000);
  assert.equal(h.handler.sweep(), 0, "the answer is read but not yet sent: the session is busy");
  sent.resolve();
  await sent.promise;
  h.clock.advance(61_000);
  assert.equal(h.handler.sweep(), 1, "sent: the session is idle and expires");
});
