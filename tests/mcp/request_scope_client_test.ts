// The client key of a call (RequestScope.client) reaches every upstream request a tool makes:
// per-client limits key on it (the OAuth principal, else the client address).
import assert from "node:assert/strict";
import { z } from "zod";
import { requestScope } from "../../lib/http/request_scope.ts";
import { Logger } from "../../lib/log.ts";
import type { ToolDefinition } from "../../lib/mcp/provider.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { Client, InMemoryTransport } from "../harness/sdk_client.ts";

const whoTool: ToolDefinition<z.ZodObject, z.ZodObject> = {
  name: "example-who",
  title: "Who",
  description: "Says whom the call counts against.",
  input: z.strictObject({}),
  output: z.object({ client: z.string().nullable() }),
  annotations: { readOnlyHint: true },
  handler() {
    const structured = { client: requestScope.getStore()?.client ?? null };
    return Promise.resolve({ text: JSON.stringify(structured), structured });
  },
};

async function whoAs(client?: string): Promise<unknown> {
  const server = createServer([{ id: "example", tools: [whoTool] }], {
    logger: new Logger(),
    characterLimit: 25_000,
    ...(client === undefined ? {} : { client }),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const c = new Client({ name: "t", version: "0" }, { capabilities: {} });
  await c.connect(clientSide);
  try {
    return (await c.callTool({ name: "example-who", arguments: {} })).structuredContent;
  } finally {
    await c.close();
  }
}

Deno.test("createServer({ client }) puts the client key on the request scope of every call", async () => {
  assert.deepEqual(await whoAs("oauth:https://issuer.example alice"), {
    client: "oauth:https://issuer.example alice",
  });
  assert.deepEqual(await whoAs(), { client: null }, "none over stdio");
});
