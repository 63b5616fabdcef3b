// The HTTP route tells 2026-07-28 requests from 2025-era ones without running the SDK's
// classifier twice (lib/mcp/http/_route_streamable.ts, `claimsModern`): whatever it sends to the
// modern route on its own, the SDK's classifier never calls legacy.
import assert from "node:assert/strict";
import { claimsModern } from "../../../lib/mcp/http/_route_streamable.ts";
import { classifyInboundRequest, parseJSONRPCMessage } from "../../../lib/mcp/sdk.ts";
import type { JSONRPCMessage } from "../../../lib/mcp/sdk.ts";

const CLAIM = "io.modelcontextprotocol/protocolVersion";
const ENVELOPE = {
  [CLAIM]: "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

const bodies: [string, unknown][] = [
  ["a modern tools/call", {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "x", _meta: ENVELOPE },
  }],
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
];

function messagesOf(body: unknown): JSONRPCMessage[] {
  const items = Array.isArray(body) ? body : [body];
  return items.map((item) => parseJSONRPCMessage(item));
}

Deno.test("claimsModern() takes only what the SDK classifies as modern or rejects, never a 2025-era request", () => {
  for (const method of ["POST", "GET", "DELETE"]) {
    for (const [name, body] of bodies) {
      const req = new Request("http://127.0.0.1/mcp", { method });
      const ctx = {
        req,
        body: method === "POST" ? body : undefined,
        messages: method === "POST" ? messagesOf(body) : [],
      };
      const sdk = classifyInboundRequest({ httpMethod: method, body: ctx.body });
      // With the modern version header as clients send it, too.
      const withHeader = classifyInboundRequest({
        httpMethod: method,
        protocolVersionHeader: "2026-07-28",
        body: ctx.body,
      });
      if (claimsModern(ctx)) {
        assert.notEqual(sdk.kind, "legacy", `${method} ${name}`);
        assert.notEqual(withHeader.kind, "legacy", `${method} ${name}, with the header`);
      }
    }
  }
  const modern = (body: unknown) =>
    claimsModern({
      req: new Request("http://127.0.0.1/mcp", { method: "POST" }),
      body,
      messages: messagesOf(body),
    });
  assert.equal(modern(bodies[0]![1]), true, "the common 2026-07-28 call skips the classifier");
  assert.equal(modern(bodies[2]![1]), true, "a malformed claim goes to the modern route, which answers it");
  for (const i of [4, 5, 6, 7, 8, 9, 11, 12, 13]) assert.equal(modern(bodies[i]![1]), false, bodies[i]![0]);
});
