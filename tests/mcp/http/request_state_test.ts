// The sealed `requestState` of 2026-07-28 multi round-trip calls across replicas: a round started on
// one replica continues on another that has the same `server.request_state_key`, and a replica with
// another key (or none, so a random one) refuses the state. Each harness is its own app, as each
// replica behind a load balancer is its own process.
import assert from "node:assert/strict";
import { BASE, POST_HEADERS, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";

const KEY = "replica-shared-request-state-key-0123456789";
const TOOL = "test_input_required_result_multi_round";

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** One 2026-07-28 `tools/call` of the multi-round fixture, with its envelope and routing headers. */
async function callRound(h: Harness, extra: Record<string, unknown> = {}): Promise<Answer> {
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: {
      ...POST_HEADERS,
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/call",
      "Mcp-Name": TOOL,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: TOOL,
        arguments: {},
        ...extra,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        },
      },
    }),
  });
  return await res.json();
}

function step1(state: unknown): Record<string, unknown> {
  return { inputResponses: { step1: { action: "accept", content: { name: "Alice" } } }, requestState: state };
}

Deno.test("request_state_key: a round sealed on one replica continues on another with the same key, not on one with another key", async () => {
  await using a = await startHarness({ providers: "conformance", server: { request_state_key: KEY } });
  await using b = await startHarness({ providers: "conformance", server: { request_state_key: KEY } });
  await using other = await startHarness({
    providers: "conformance",
    server: { request_state_key: `${KEY}-other` },
  });
  await using unkeyed = await startHarness({ providers: "conformance" });

  const first = await callRound(a);
  assert.equal(first.result?.["resultType"], "input_required", JSON.stringify(first));
  const state = first.result!["requestState"];
  assert.equal(typeof state, "string");

  const continued = await callRound(b, step1(state));
  assert.equal(continued.result?.["resultType"], "input_required", JSON.stringify(continued));
  assert.deepEqual(
    Object.keys(continued.result!["inputRequests"] as object),
    ["step2"],
    "replica B took round 2",
  );
  const done = await callRound(a, {
    inputResponses: { step2: { action: "accept", content: { color: "blue" } } },
    requestState: continued.result!["requestState"],
  });
  assert.match(JSON.stringify(done.result?.["content"]), /Multi-round complete: Alice likes blue/);

  for (const [name, replica] of [["another key", other], ["no key (random per process)", unkeyed]] as const) {
    const refused = await callRound(replica, step1(state));
    assert.equal(refused.error?.code, -32602, `${name}: ${JSON.stringify(refused)}`);
    assert.equal(refused.error?.data?.["reason"], "invalid_request_state", name);
  }
});
