// The 2026-07-28 surface this project chose on top of the SDK, pinned here as well as by the
// conformance suite: cache hints per list (and a fixed tool order), `resultType`, the routing
// headers checked against the body (-32020), an unknown revision (-32022), and what a
// `subscriptions/listen` stream acknowledges when the lists never change; and, beside it, the
// 2025-era version selection of `initialize` on the same endpoint.
import assert from "node:assert/strict";
import {
  BASE,
  initializeBody,
  jsonRpcMessages,
  POST_HEADERS,
  postMcp,
  readEvents,
  startHarness,
} from "./_harness.ts";
import type { Harness } from "./_harness.ts";
import { CUSTOM_HEADER_INPUT } from "../../conformance/provider/protocol_schemas.ts";

const MODERN = "2026-07-28";

function envelope(version = MODERN): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "modern-test", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
}

/** Posts one 2026-07-28 request; `headers` replaces the routing headers derived from the body. */
function post(
  h: Harness,
  method: string,
  params: Record<string, unknown> = {},
  headers?: Record<string, string>,
  version = MODERN,
): Promise<Response> {
  const name = params["name"] ?? params["uri"];
  const routing = headers ?? {
    "MCP-Protocol-Version": version,
    "Mcp-Method": method,
    ...(typeof name === "string" ? { "Mcp-Name": name } : {}),
  };
  return h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: { ...POST_HEADERS, ...routing },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: envelope(version) } }),
  });
}

async function result(res: Response): Promise<Record<string, unknown>> {
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.result;
}

Deno.test("2026-07-28 lists and reads carry the configured cache hints and resultType; tools keep their order", async () => {
  await using h = await startHarness({ providers: "example,conformance" });
  const fiveMinutes = { ttlMs: 300_000, cacheScope: "private" };
  for (const method of ["server/discover", "tools/list", "prompts/list", "resources/templates/list"]) {
    const r = await result(await post(h, method));
    assert.deepEqual({ ttlMs: r["ttlMs"], cacheScope: r["cacheScope"] }, fiveMinutes, method);
    assert.equal(r["resultType"], "complete", method);
  }
  const list = await result(await post(h, "resources/list"));
  assert.deepEqual({ ttlMs: list["ttlMs"], cacheScope: list["cacheScope"] }, {
    ttlMs: 0,
    cacheScope: "private",
  });
  const read = await result(await post(h, "resources/read", { uri: "test://static-text" }));
  assert.equal(read["ttlMs"], 0);

  const names = async (): Promise<string[]> =>
    ((await result(await post(h, "tools/list")))["tools"] as { name: string }[]).map((t) => t.name);
  const first = await names();
  assert.ok(first.length > 10, first.join(", "));
  assert.deepEqual(await names(), first, "the same order on every call");

  const called = await result(await post(h, "tools/call", { name: "example-ping", arguments: {} }));
  assert.equal(called["resultType"], "complete");
  assert.deepEqual(called["structuredContent"], { pong: true });
});

Deno.test("2026-07-28 routing headers that disagree with the body get HTTP 400 with -32020; an unknown revision -32022", async () => {
  await using h = await startHarness({ providers: "example" });
  const cases: [string, Record<string, string>][] = [
    ["no Mcp-Method", { "MCP-Protocol-Version": MODERN }],
    ["Mcp-Method names another method", { "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list" }],
    [
      "Mcp-Name names another tool",
      { "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "example-echo" },
    ],
    ["no Mcp-Name", { "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call" }],
  ];
  for (const [label, headers] of cases) {
    const res = await post(h, "tools/call", { name: "example-ping", arguments: {} }, headers);
    const body = await res.json();
    assert.equal(res.status, 400, `${label}: ${JSON.stringify(body)}`);
    assert.equal(body.error?.code, -32020, label);
  }
  const res = await post(h, "tools/list", {}, undefined, "2099-01-01");
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error?.code, -32022);
  assert.ok(body.error.data.supported.includes(MODERN), JSON.stringify(body.error.data));
});

Deno.test("2026-07-28 Mcp-Param-* headers are checked against a tool's x-mcp-header arguments (-32020 when they disagree)", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const base = {
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "test_custom_header",
  };
  const call = (headers: Record<string, string>): Promise<Response> =>
    post(h, "tools/call", { name: "test_custom_header", arguments: { region: "Oslo" } }, {
      ...base,
      ...headers,
    });
  const listed = (await result(await post(h, "tools/list")))["tools"] as {
    name: string;
    inputSchema: unknown;
  }[];
  assert.deepEqual(
    listed.find((t) => t.name === "test_custom_header")?.inputSchema,
    CUSTOM_HEADER_INPUT,
    "served verbatim, x-mcp-header included",
  );
  for (const value of ["Oslo", `=?base64?${btoa("Oslo")}?=`]) {
    const ok = await result(await call({ "Mcp-Param-Region": value }));
    assert.match(JSON.stringify(ok["content"]), /Region: Oslo/, value);
  }
  for (
    const [label, headers] of [["missing", {}], ["disagreeing", { "Mcp-Param-Region": "Bergen" }], [
      "bad Base64",
      { "Mcp-Param-Region": "=?base64?T3Nsb!!!?=" },
    ]] as const
  ) {
    const res = await call(headers);
    const body = await res.json();
    assert.equal(res.status, 400, `${label}: ${JSON.stringify(body)}`);
    assert.equal(body.error?.code, -32020, label);
  }
});

Deno.test("subscriptions/listen acknowledges first, and only what the server can send (its lists never change); with nothing left the stream ends", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const res = await post(h, "subscriptions/listen", {
    notifications: {
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ["test://watched-resource"],
    },
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const { events } = await readEvents(res.body!, (events) => events.length >= 1);
  const ack = JSON.parse(events[0]!.data);
  assert.equal(ack.method, "notifications/subscriptions/acknowledged");
  // listChanged is false for tools and prompts, so those filters are not acknowledged; the
  // conformance provider's subscribable resource is.
  assert.deepEqual(ack.params.notifications, { resourceSubscriptions: ["test://watched-resource"] });
  assert.equal(ack.params._meta["io.modelcontextprotocol/subscriptionId"], 1);

  // Only list filters: nothing to listen for, so the stream ends with the request's result.
  const empty = await post(h, "subscriptions/listen", { notifications: { toolsListChanged: true } });
  const all = (await readEvents(empty.body!)).events.map((e) => JSON.parse(e.data));
  assert.equal(all.length, 2, JSON.stringify(all));
  assert.equal(all[0].method, "notifications/subscriptions/acknowledged");
  assert.deepEqual(all[0].params.notifications, {});
  assert.equal(all[1].id, 1);
  assert.equal(all[1].result.resultType, "complete");
});

Deno.test("initialize keeps answering every 2024/2025 version with the version asked for, else the newest 2025 one", async () => {
  await using h = await startHarness({ providers: "example" });
  const asked = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2024-01-01"];
  for (const version of asked) {
    const [answer] = await jsonRpcMessages(await postMcp(h, initializeBody(1, version)));
    const negotiated = (answer?.["result"] as { protocolVersion?: string } | undefined)?.protocolVersion;
    assert.equal(negotiated, version === "2024-01-01" ? "2025-11-25" : version, JSON.stringify(answer));
  }
});
