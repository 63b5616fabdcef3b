import assert from "node:assert/strict";
import { Logger } from "../../lib/log.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { pingTool } from "../../lib/providers/example/tools.ts";
import { CallToolResultSchema, Client, InMemoryTransport } from "../harness/sdk_client.ts";

Deno.test("createServer() answers tools/call without a tool name with -32602, not -32603", async () => {
  const server = createServer([{ id: "example", tools: [pingTool] }], {
    logger: new Logger(),
    characterLimit: 25_000,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "0" }, { capabilities: {} });
  await client.connect(clientSide);
  try {
    await assert.rejects(
      () => client.request({ method: "tools/call", params: {} as { name: string } }, CallToolResultSchema),
      (e: Error & { code?: number }) => e.code === -32602 && /Invalid tools\/call request/.test(e.message),
    );
    const ok = await client.callTool({ name: "example-ping", arguments: {} });
    assert.deepEqual(ok.structuredContent, { pong: true }, "valid calls still reach the tool");
  } finally {
    await client.close();
  }
});
