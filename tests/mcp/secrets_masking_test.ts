// createServer({ secrets }) masks configured secrets at the core's choke points, whatever the
// provider returns: a tool's text, structured content and extra blocks before the limit cuts them,
// its error payloads, resource reads and a failed read's message. Driven through a real MCP client.
import assert from "node:assert/strict";
import { z } from "zod";
import { ToolError } from "../../lib/errors.ts";
import { Logger } from "../../lib/log.ts";
import type { Provider, ToolDefinition } from "../../lib/mcp/provider.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { SecretMasker } from "../../lib/secrets.ts";
import { Client, InMemoryTransport } from "../harness/sdk_client.ts";
import { leakedForms, secretForms } from "../fakes/secret_forms.ts";

const KEY = "c0ffee11deadbeef22aa33bb44cc55dd";
const FORMS = secretForms(KEY);
const echoed = FORMS.map((f) => `${f.name}: ${f.echo}`).join("\n");

const echoTool: ToolDefinition<z.ZodObject, z.ZodObject> = {
  name: "leaky-echo",
  title: "Leaky echo",
  description: "Answers with whatever its upstream said, the key included.",
  input: z.strictObject({ fail: z.boolean().default(false).describe("Fail instead") }),
  output: z.object({ said: z.array(z.string()) }),
  annotations: { readOnlyHint: true },
  handler(args) {
    if (args["fail"]) {
      return Promise.reject(new ToolError("API_ERROR", `Upstream said: ${echoed}`, { hint: FORMS[3]!.echo }));
    }
    // A long text the limit cuts after the key: the cut must never leave part of it.
    const text = `${"x".repeat(3_000)} ${echoed} ${"y".repeat(30_000)}`;
    return Promise.resolve({
      text,
      structured: { said: FORMS.map((f) => f.echo) },
      content: [{ type: "text" as const, text: echoed }],
    });
  },
};

const provider: Provider = {
  id: "leaky",
  tools: [echoTool],
  resources: [{
    uri: "leaky://said",
    name: "said",
    description: "What the upstream said",
    mimeType: "text/plain",
    read: (uri) => Promise.resolve({ contents: [{ uri: uri.href, mimeType: "text/plain", text: echoed }] }),
  }, {
    uri: "leaky://broken",
    name: "broken",
    description: "A read that fails with the upstream's words",
    mimeType: "text/plain",
    read: () => Promise.reject(new Error(`Upstream refused the key ${FORMS[5]!.echo}`)),
  }],
};

async function connect(secrets?: SecretMasker): Promise<Client> {
  const server = createServer([provider], {
    logger: new Logger(),
    characterLimit: 25_000,
    ...(secrets ? { secrets } : {}),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "0" }, { capabilities: {} });
  await client.connect(clientSide);
  return client;
}

function assertNoLeak(value: unknown, where: string): void {
  assert.deepEqual(leakedForms(JSON.stringify(value), KEY), [], `${where} leaks the key`);
}

Deno.test("createServer({ secrets }) masks every form in answers, errors and resource reads", async () => {
  const client = await connect(new SecretMasker([KEY]));
  try {
    const answer = await client.callTool({ name: "leaky-echo", arguments: {} });
    assert.notEqual(answer.isError, true);
    assertNoLeak(answer, "the answer");
    assert.equal((answer.structuredContent as { said: string[] }).said.length, FORMS.length, "shape kept");
    const failed = await client.callTool({ name: "leaky-echo", arguments: { fail: true } });
    assert.equal(failed.isError, true);
    assertNoLeak(failed, "the error answer");
    const read = await client.readResource({ uri: "leaky://said" });
    assert.match(JSON.stringify(read), /\[redacted\]/);
    assertNoLeak(read, "resources/read");
    const refused = await client.readResource({ uri: "leaky://broken" }).then(() => "read", (e) => String(e));
    assert.match(refused, /Upstream refused the key \[redacted\]/);
    assertNoLeak(refused, "a failed read");
  } finally {
    await client.close();
  }
  const bare = await connect();
  try {
    const answer = await bare.callTool({ name: "leaky-echo", arguments: {} });
    assert.ok(
      JSON.stringify(answer.content).includes(FORMS[0]!.echo),
      "no secrets configured: nothing masked",
    );
  } finally {
    await bare.close();
  }
});
