import assert from "node:assert/strict";
import { serverSchema } from "../../../lib/config/parse.ts";
import { MAX_SSE_BACKLOG_BYTES } from "../../../lib/mcp/http/mod.ts";

/** The default `body_timeout`, in milliseconds. */
const BODY_TIMEOUT_MS = serverSchema().parse({}).body_timeout * 1000;
import { BASE, jsonRpcMessages, openSession, POST_HEADERS, postMcp, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";

async function errorOf(
  res: Response,
): Promise<{ status: number; code: number; message: string; id: unknown }> {
  const [msg] = await jsonRpcMessages(res);
  const error = msg!["error"] as { code: number; message: string };
  return { status: res.status, code: error.code, message: error.message, id: msg!["id"] };
}

const notJsonRpc: [string, string, RegExp][] = [
  ["an object without jsonrpc", JSON.stringify({ id: 1, method: "ping" }), /"jsonrpc" must be "2.0"/],
  ["jsonrpc 1.0", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), /"jsonrpc" must be "2.0"/],
  ["a number", "42", /JSON-RPC 2.0 object/],
  ["a non-string method", JSON.stringify({ jsonrpc: "2.0", id: 1, method: 7 }), /"method" must be a string/],
  ["an empty batch", "[]", /batch must hold 1 to 100 messages/],
];

Deno.test("POST /mcp answers malformed JSON with -32700 and HTTP 400", async () => {
  await using h = await startHarness();
  const e = await errorOf(await postMcp(h, '{"jsonrpc": "2.0", "id": 1, "method": '));
  assert.equal(e.status, 400);
  assert.equal(e.code, -32700);
  assert.match(e.message, /^Parse error/);
  assert.equal(e.id, null);
});

Deno.test("POST /mcp answers JSON that is not a JSON-RPC message with -32600", async () => {
  await using h = await startHarness();
  const session = await openSession(h);
  for (const [what, body, message] of notJsonRpc) {
    const e = await errorOf(await postMcp(h, body, { "Mcp-Session-Id": session }));
    assert.equal(e.status, 400, what);
    assert.equal(e.code, -32600, what);
    assert.match(e.message, message, what);
  }
  const withId = await errorOf(await postMcp(h, JSON.stringify({ jsonrpc: "1.0", id: 9, method: "ping" })));
  assert.equal(withId.id, 9, "the id is echoed when it can be read");
});

Deno.test("POST /mcp answers an unknown method with -32601 in the session", async () => {
  await using h = await startHarness();
  const session = await openSession(h);
  const res = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/frobnicate" }), {
    "Mcp-Session-Id": session,
  });
  assert.equal(res.status, 200, "protocol errors travel as JSON-RPC responses");
  const e = await errorOf(res);
  assert.equal(e.code, -32601);
  assert.equal(e.id, 5);
});

Deno.test("POST /mcp answers invalid tools/call params with -32602", async () => {
  await using h = await startHarness();
  const session = await openSession(h);
  const unknown = await errorOf(
    await postMcp(
      h,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 6,
        method: "tools/call",
        params: { name: "nope", arguments: {} },
      }),
      { "Mcp-Session-Id": session },
    ),
  );
  assert.equal(unknown.code, -32602);
  assert.match(unknown.message, /Unknown tool "nope"/);
  const noName = await errorOf(
    await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: {} }), {
      "Mcp-Session-Id": session,
    }),
  );
  assert.equal(noName.code, -32602);
});

Deno.test("POST /mcp in stateless mode answers -32700, -32600, -32601 and -32602", async () => {
  await using h = await startHarness({ server: { stateless: true } });
  assert.equal((await errorOf(await postMcp(h, "{oops"))).code, -32700);
  assert.equal((await errorOf(await postMcp(h, JSON.stringify({ id: 1, method: "ping" })))).code, -32600);
  const unknown = await errorOf(
    await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "nope/nope" }), {
      "Mcp-Protocol-Version": "2025-11-25",
    }),
  );
  assert.equal(unknown.code, -32601);
  const badTool = await errorOf(
    await postMcp(
      h,
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nope" } }),
    ),
  );
  assert.equal(badTool.code, -32602);
});

async function openLegacy(
  h: Harness,
): Promise<{ endpoint: string; events: ReadableStreamDefaultReader<string> }> {
  const res = await h.fetch(`${BASE}/sse`, { headers: { Accept: "text/event-stream" } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
  const match = /^event: endpoint\ndata: (\/message\?session_id=[0-9a-f-]{36})\n\n$/.exec(text);
  assert.ok(match, `first event names the endpoint: ${JSON.stringify(text)}`);
  return { endpoint: match[1]!, events: reader };
}

async function nextMessage(reader: ReadableStreamDefaultReader<string>): Promise<Record<string, unknown>> {
  let text = "";
  for (;;) {
    text += (await reader.read()).value ?? "";
    const block = text.split("\n\n").find((b) => b.startsWith("event: message"));
    if (block) return JSON.parse(block.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
  }
}

function postLegacy(h: Harness, endpoint: string, body: string): Promise<Response> {
  return h.fetch(`${BASE}${endpoint}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
  });
}

Deno.test("legacy SSE answers -32700 and -32600 on the POST and -32601/-32602 on the stream", async () => {
  await using h = await startHarness();
  const { endpoint, events } = await openLegacy(h);
  try {
    const parse = await postLegacy(h, endpoint, "{not json");
    assert.equal(parse.status, 400);
    assert.equal((await parse.json()).error.code, -32700);
    const invalid = await postLegacy(h, endpoint, JSON.stringify({ jsonrpc: "2.0", id: 1 }));
    assert.equal(invalid.status, 400);
    assert.equal((await invalid.json()).error.code, -32600);

    const init = await postLegacy(
      h,
      endpoint,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      }),
    );
    assert.equal(init.status, 202, "the answer goes to the stream, the POST is accepted");
    assert.equal(await init.text(), "Accepted");
    const initialized = await nextMessage(events);
    assert.equal((initialized["result"] as { protocolVersion: string }).protocolVersion, "2024-11-05");

    await (await postLegacy(h, endpoint, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "nope/nope" })))
      .text();
    const unknown = await nextMessage(events);
    assert.equal(unknown["id"], 2);
    assert.equal((unknown["error"] as { code: number }).code, -32601);

    await (await postLegacy(
      h,
      endpoint,
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nope" } }),
    )).text();
    const badParams = await nextMessage(events);
    assert.equal((badParams["error"] as { code: number }).code, -32602);

    const callPost = await postLegacy(
      h,
      endpoint,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "example-echo", arguments: { a: 1 } },
      }),
    );
    await callPost.text();
    const called = await nextMessage(events);
    assert.deepEqual((called["result"] as { structuredContent: unknown }).structuredContent, {
      echo: { a: 1 },
    });
    // The POST was answered (and its access line written) before the call ran: the call writes
    // its own line, under the POST's request id.
    const requestId = callPost.headers.get("x-request-id");
    const line = h.logs.find((l) => l["msg"] === "tool call" && l["tool_name"] === "example-echo");
    assert.equal(line?.["request_id"], requestId);
    assert.equal(line?.["status"], "ok");
  } finally {
    await events.cancel();
  }
});

Deno.test("legacy SSE accepts sessionId as well as session_id and refuses unknown sessions", async () => {
  await using h = await startHarness();
  const { endpoint, events } = await openLegacy(h);
  try {
    const id = endpoint.split("=")[1]!;
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const res = await postLegacy(h, `/message?sessionId=${id}`, ping);
    assert.equal(res.status, 202);
    await res.text();
    assert.deepEqual((await nextMessage(events))["result"], {});
    const unknown = await postLegacy(h, "/message?session_id=00000000-0000-4000-8000-000000000000", ping);
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.code, -32001);
    const missing = await postLegacy(h, "/message", ping);
    assert.equal(missing.status, 400);
    assert.match((await missing.json()).error.message, /session_id/);
  } finally {
    await events.cancel();
  }
});

Deno.test("legacy SSE sends keep-alive comments on its timer", async () => {
  await using h = await startHarness({ server: { keepalive_interval: 7 } });
  const res = await h.fetch(`${BASE}/sse`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let text = (await reader.read()).value ?? "";
    assert.match(text, /^event: endpoint\n/);
    const tick = h.ticks.find((t) => t.ms === 7000 && !t.cancelled);
    assert.ok(tick, "a keep-alive timer runs every keepalive_interval");
    tick.fn();
    text = (await reader.read()).value ?? "";
    assert.equal(text, ": keepalive\n\n");
  } finally {
    await reader.cancel();
  }
  assert.equal(h.handler.sessions().sse, 0, "the session ends when its stream is cancelled");
  assert.ok(h.ticks.filter((t) => t.ms === 7000).every((t) => t.cancelled), "its keep-alive timer stops");
});

Deno.test("legacy SSE drops a client that stops reading once MAX_SSE_BACKLOG_BYTES are queued", async () => {
  await using h = await startHarness({
    server: { max_body_bytes: 4 * 1024 * 1024, character_limit: 1_000_000 },
  });
  const { endpoint, events } = await openLegacy(h);
  // Each answer carries the pad in its text and its structuredContent (both within the
  // character limit): a handful of them pass the backlog cap.
  const pad = "x".repeat(900_000);
  for (let id = 1; id <= 4 + MAX_SSE_BACKLOG_BYTES / 1_000_000 && h.handler.sessions().sse === 1; id++) {
    const res = await postLegacy(
      h,
      endpoint,
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "example-echo", arguments: { pad } },
      }),
    );
    await res.body?.cancel();
    // Yield (no waiting) so the call's answer reaches the stream before the next post.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.equal(h.handler.sessions().sse, 0, "the session is dropped, not left to grow");
  assert.ok(h.logs.some((l) => l["msg"] === "dropping a legacy SSE session whose client stopped reading"));
  await events.cancel().catch(() => {});
});

Deno.test("POST /mcp answers a body that breaks off mid-way with 400, not a logged 500", async () => {
  await using h = await startHarness();
  const broken = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
        controller.error(new Error("connection reset by peer"));
      },
    });
  const res = await h.fetch(`${BASE}/mcp`, { method: "POST", headers: POST_HEADERS, body: broken() });
  const e = await errorOf(res);
  assert.equal(e.status, 400);
  assert.equal(e.code, -32000);
  assert.match(e.message, /request body could not be read/);
  const { endpoint, events } = await openLegacy(h);
  try {
    const legacy = await h.fetch(`${BASE}${endpoint}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: broken(),
    });
    assert.equal(legacy.status, 400, "legacy /message too");
    await legacy.body?.cancel();
  } finally {
    await events.cancel();
  }
  assert.ok(!h.logs.some((l) => l["level"] === "error"), "a client going away is not a server error");
});

Deno.test("POST /mcp and /message answer a body that does not arrive within BODY_TIMEOUT_MS with 408", async () => {
  await using h = await startHarness();
  const { endpoint, events } = await openLegacy(h);
  try {
    for (
      const [path, headers] of [["/mcp", POST_HEADERS], [endpoint, {
        "Content-Type": "application/json",
      }]] as const
    ) {
      let released = false;
      // A slow client: a first chunk, then nothing, with the connection held open.
      const stalled = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(" ".repeat(64 * 1024)));
        },
        cancel() {
          released = true;
        },
      });
      const pending = h.fetch(`${BASE}${path}`, { method: "POST", headers, body: stalled });
      let deadline;
      while (!(deadline = h.ticks.find((t) => t.ms === BODY_TIMEOUT_MS && !t.cancelled))) {
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      deadline.fn();
      const e = await errorOf(await pending);
      assert.equal(e.status, 408, path);
      assert.equal(e.code, -32000);
      assert.match(e.message, /did not arrive within 30 s/);
      assert.ok(released, "what arrived is dropped and the body stream cancelled");
    }
    const ok = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), {
      "Mcp-Session-Id": await openSession(h),
    });
    await ok.text();
    assert.ok(
      h.ticks.filter((t) => t.ms === BODY_TIMEOUT_MS).every((t) => t.cancelled),
      "the deadline stops once a body has arrived",
    );
  } finally {
    await events.cancel();
  }
});

const malformedParams: [string, Record<string, unknown>, RegExp][] = [
  ["resources/read", {}, /"params\.uri"/],
  ["prompts/get", { name: 7 }, /"params\.name"/],
  ["logging/setLevel", { level: "loud" }, /"params\.level"/],
  ["tools/list", { cursor: 5 }, /"params\.cursor"/],
];

Deno.test("malformed params of any method get -32602 naming the field, not -32603, on both transports", async () => {
  await using h = await startHarness();
  const session = await openSession(h);
  const { endpoint, events } = await openLegacy(h);
  try {
    await (await postLegacy(
      h,
      endpoint,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      }),
    )).text();
    await nextMessage(events);
    for (const [i, [method, params, field]] of malformedParams.entries()) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: i + 1, method, params });
      const viaStreamable = await errorOf(await postMcp(h, body, { "Mcp-Session-Id": session }));
      assert.equal(viaStreamable.code, -32602, `${method}: ${viaStreamable.message}`);
      assert.match(viaStreamable.message, new RegExp(`Invalid params for "${method}"`));
      assert.match(viaStreamable.message, field);
      await (await postLegacy(h, endpoint, body)).text();
      const viaSse = await nextMessage(events);
      assert.equal((viaSse["error"] as { code: number }).code, -32602, `${method} over legacy SSE`);
    }
  } finally {
    await events.cancel();
  }
});

Deno.test("POST /mcp answers an initialize with malformed params with -32602, not a missing-session error", async () => {
  await using h = await startHarness();
  const e = await errorOf(
    await postMcp(
      h,
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "initialize", params: { capabilities: {} } }),
    ),
  );
  assert.equal(e.status, 400);
  assert.equal(e.code, -32602);
  assert.equal(e.id, 7);
  assert.match(e.message, /Invalid params for "initialize"/);
  assert.match(e.message, /protocolVersion/);
  assert.doesNotMatch(e.message, /Mcp-Session-Id/);
  assert.deepEqual(h.handler.sessions(), { streamable: 0, sse: 0 }, "no session is opened");
});

Deno.test("POST /mcp honours a configured body_timeout", async () => {
  await using h = await startHarness({ server: { body_timeout: 5 } });
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("{"));
    },
  });
  const pending = h.fetch(`${BASE}/mcp`, { method: "POST", headers: POST_HEADERS, body: stalled });
  let deadline;
  while (!(deadline = h.ticks.find((t) => t.ms === 5000 && !t.cancelled))) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  deadline.fn();
  const e = await errorOf(await pending);
  assert.equal(e.status, 408);
  assert.match(e.message, /did not arrive within 5 s/);
});
