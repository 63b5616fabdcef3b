import assert from "node:assert/strict";
import { Logger } from "../../lib/log.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { BASE, initializeBody, jsonRpcMessages, postMcp, startHarness } from "./http/_harness.ts";

Deno.test("createServer() declares listChanged false for prompts and resources in both protocol eras", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const init = await jsonRpcMessages(await postMcp(h, initializeBody()));
  const legacy =
    (init[0]!["result"] as { capabilities: Record<string, Record<string, unknown>> }).capabilities;
  const discover = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "server/discover",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  const modern = (await discover.json()).result.capabilities as Record<string, Record<string, unknown>>;
  for (const capabilities of [legacy, modern]) {
    // The lists are fixed for the server's life: no list_changed notification is ever sent.
    assert.equal(capabilities["prompts"]?.["listChanged"], false);
    assert.equal(capabilities["resources"]?.["listChanged"], false);
    assert.equal(capabilities["resources"]?.["subscribe"], true, "subscriptions stay declared");
    assert.equal(capabilities["tools"]?.["listChanged"], false);
  }
});

Deno.test("createServer() declares no prompts or resources capability without any", () => {
  const server = createServer([{ id: "bare", tools: [] }], {
    logger: new Logger({ write: () => {} }),
    characterLimit: 1000,
  });
  const capabilities = server.server.getCapabilities();
  assert.equal(capabilities.prompts, undefined);
  assert.equal(capabilities.resources, undefined);
  assert.deepEqual(capabilities.tools, { listChanged: false });
});
