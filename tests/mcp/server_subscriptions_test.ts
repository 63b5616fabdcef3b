import assert from "node:assert/strict";
import { Logger } from "../../lib/log.ts";
import type { Provider } from "../../lib/mcp/provider.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { Client, InMemoryTransport } from "../harness/sdk_client.ts";

function resource(uri: string, subscribable: boolean): NonNullable<Provider["resources"]>[number] {
  return {
    uri,
    name: uri,
    description: `Resource ${uri}`,
    mimeType: "text/plain",
    subscribable,
    read: () => Promise.resolve({ contents: [{ uri, mimeType: "text/plain", text: "x" }] }),
  };
}

async function connect(providers: Provider[]): Promise<Client> {
  const server = createServer(providers, { logger: new Logger(), characterLimit: 25_000 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "0" }, { capabilities: {} });
  await client.connect(clientSide);
  return client;
}

Deno.test("createServer() accepts resources/subscribe and unsubscribe for a subscribable resource", async () => {
  const client = await connect([{
    id: "p",
    tools: [],
    resources: [resource("test://watched", true), resource("test://plain", false)],
  }]);
  try {
    assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
    assert.deepEqual(await client.subscribeResource({ uri: "test://watched" }), {});
    assert.deepEqual(await client.unsubscribeResource({ uri: "test://watched" }), {});
    await assert.rejects(
      () => client.subscribeResource({ uri: "test://plain" }),
      (e: Error & { code?: number }) =>
        e.code === -32602 && /"test:\/\/plain" does not take subscriptions/.test(e.message),
    );
  } finally {
    await client.close();
  }
});

Deno.test("createServer() leaves the subscribe capability off when no resource is subscribable", async () => {
  const client = await connect([{ id: "p", tools: [], resources: [resource("test://plain", false)] }]);
  try {
    assert.equal(client.getServerCapabilities()?.resources?.subscribe, undefined);
  } finally {
    await client.close();
  }
});
