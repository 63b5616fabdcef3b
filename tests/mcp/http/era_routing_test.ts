// The HTTP route tells 2026-07-28 requests from 2025-era ones without running the SDK's
// classifier twice (lib/mcp/http/_route_streamable.ts, `claimsModern`): whatever it sends to the
// modern route on its own, the SDK's classifier never calls legacy.
import assert from "node:assert/strict";
import { claimsModern } from "../../../lib/mcp/http/_route_streamable.ts";
import { readJsonRpc } from "../../../lib/mcp/http/_jsonrpc.ts";
import { classifyInboundRequest } from "../../../lib/mcp/sdk.ts";

const CLAIM = "io.modelcontextprotocol/protocolVersion";
const ENVELOPE = {
  [CLAIM]: "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

const call = (extra: Record<string, unknown>, meta: Record<string, unknown> = ENVELOPE) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "x", _meta: meta },
  ...extra,
});

const bodies: [string, unknown][] = [
  ["a modern tools/call", call({})],
  ["a modern tools/list", { jsonrpc: "2.0", id: "a", method: "tools/list", params: { _meta: ENVELOPE } }],
  ["a claim with a bad envelope", {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/list",
    params: { _meta: { [CLAIM]: 5 } },
  }],
  ["a claim of an unknown version", {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/list",
    params: { _meta: { [CLAIM]: "2099-01-01" } },
  }],
  ["an initialize with a claim", {
    jsonrpc: "2.0",
    id: 4,
    method: "initialize",
    params: { _meta: ENVELOPE },
  }],
  ["a 2025 initialize", {
    jsonrpc: "2.0",
    id: 5,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
  }],
  ["a 2025 tools/call", {
    jsonrpc: "2.0",
    id: 6,
    method: "tools/call",
    params: { name: "x", arguments: {} },
  }],
  ["a request without params", { jsonrpc: "2.0", id: 7, method: "ping" }],
  ["a _meta without the claim", {
    jsonrpc: "2.0",
    id: 8,
    method: "ping",
    params: { _meta: { progressToken: 1 } },
  }],
  ["a notification with a claim", {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { _meta: ENVELOPE },
  }],
  ["a 2025 notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
  ["an answer", { jsonrpc: "2.0", id: 9, result: {} }],
  ["an error answer", { jsonrpc: "2.0", id: 10, error: { code: -1, message: "no" } }],
  ["a batch of modern requests", [{
    jsonrpc: "2.0",
    id: 11,
    method: "tools/list",
    params: { _meta: ENVELOPE },
  }]],
  ["an id of 1e300", call({ id: 1e300 })],
  ["an id of 1.5", call({ id: 1.5 })],
  ["an id of null", call({ id: null })],
  ["an id of true", call({ id: true })],
  ["jsonrpc 1.0", call({ jsonrpc: "1.0" })],
  ["an extra key", call({ extra: 1 })],
  ["a result beside the method", call({ result: {} })],
  ["an error beside the method", call({ error: { code: -1, message: "no" } })],
  [
    "the related-task key",
    call({}, { ...ENVELOPE, "io.modelcontextprotocol/related-task": { taskId: "t" } }),
  ],
  ["a progress token of 1.5", call({}, { ...ENVELOPE, progressToken: 1.5 })],
  ["a progress token of null", call({}, { ...ENVELOPE, progressToken: null })],
  ["a progress token object", call({}, { ...ENVELOPE, progressToken: {} })],
  ["a _meta array", { jsonrpc: "2.0", id: 12, method: "tools/list", params: { _meta: [CLAIM] } }],
  ["params as an array", { jsonrpc: "2.0", id: 13, method: "tools/list", params: [{ _meta: ENVELOPE }] }],
];

/** The body and messages of `body` as the handler reads them (lib/mcp/http/_jsonrpc.ts), if it takes it. */
async function asRead(method: string, body: unknown) {
  const req = new Request("http://127.0.0.1/mcp", {
    method,
    ...(method === "POST"
      ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
      : {}),
  });
  if (method !== "POST") return { req, body: undefined, messages: [] };
  const read = await readJsonRpc(req.clone(), 1_000_000);
  return read.ok ? { req, body: read.body, messages: read.messages } : undefined;
}

Deno.test("claimsModern() takes only what the SDK classifies as modern or rejects, never a 2025-era request", async () => {
  const taken: string[] = [];
  for (const method of ["POST", "GET", "DELETE"]) {
    for (const [name, body] of bodies) {
      const ctx = await asRead(method, body);
      // A body the handler refuses never reaches the route.
      if (!ctx || !claimsModern(ctx)) continue;
      taken.push(`${method} ${name}`);
      for (const protocolVersionHeader of [undefined, "2025-11-25", "2026-07-28"]) {
        const sdk = classifyInboundRequest({
          httpMethod: method,
          ...(protocolVersionHeader ? { protocolVersionHeader } : {}),
          body: ctx.body,
        });
        assert.notEqual(sdk.kind, "legacy", `${method} ${name}, version header ${protocolVersionHeader}`);
      }
    }
  }
  // The rest are refused by the handler's reading (an id or progress token that is no JSON-RPC id,
  // a key JSON-RPC has not, an answer beside a method) or name no 2026-07-28 claim.
  assert.deepEqual(taken, [
    "POST a modern tools/call",
    "POST a modern tools/list",
    "POST a claim with a bad envelope",
    "POST a claim of an unknown version",
    "POST an id of 1e300",
    "POST the related-task key",
  ]);
  const modern = async (body: unknown) => claimsModern((await asRead("POST", body))!);
  assert.equal(await modern(bodies[0]![1]), true, "the common 2026-07-28 call skips the classifier");
  assert.equal(
    await modern(bodies[2]![1]),
    true,
    "a malformed claim goes to the modern route, which answers it",
  );
  for (const i of [4, 5, 6, 7, 8, 9, 11, 12]) assert.equal(await modern(bodies[i]![1]), false, bodies[i]![0]);
});
