// server.structured_content off over Streamable HTTP, in both protocol eras: a 2025-era session
// and stateless 2026-07-28 requests (whose client capabilities come in each request's _meta) get
// tools without outputSchema and answers without structuredContent, called directly or through
// opendata_call; a 2026-07-28 request whose capabilities say it renders views keeps both.
import assert from "node:assert/strict";
import { BASE, jsonRpcMessages, openSession, POST_HEADERS, postMcp, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";

const MODERN = "2026-07-28";
const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };

type Tool = { name: string; outputSchema?: unknown };
type Answer = { content: { type: string; text: string }[]; structuredContent?: unknown; isError?: boolean };

/** One stateless 2026-07-28 request, its client capabilities in _meta. */
async function modern(
  h: Harness,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: {
      ...POST_HEADERS,
      "MCP-Protocol-Version": MODERN,
      "Mcp-Method": method,
      ...(typeof params["name"] === "string" ? { "Mcp-Name": params["name"] } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "structured-off-test", version: "0" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  const [message] = await jsonRpcMessages(res);
  assert.equal(res.status, 200, JSON.stringify(message));
  return message!["result"] as Record<string, unknown>;
}

const echo = { name: "example-echo", arguments: { a: 1 } };
const routed = { name: "opendata_call", arguments: { tool: "example-echo", arguments: { a: 1 } } };

Deno.test("structured_content off over HTTP: 2026-07-28 requests get text only unless their _meta capabilities render views", async () => {
  await using h = await startHarness({ providers: "example", server: { structured_content: "off" } });
  const tools = (await modern(h, "tools/list", {}))["tools"] as Tool[];
  assert.ok(tools.some((t) => t.name === "example-echo"));
  assert.deepEqual(tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name), []);
  for (const params of [echo, routed]) {
    const r = await modern(h, "tools/call", params) as unknown as Answer;
    assert.equal(r.isError, undefined, JSON.stringify(r));
    assert.equal(r.structuredContent, undefined, params.name);
    assert.match(r.content[0]!.text, /"a":1/);
  }
  const bad = await modern(h, "tools/call", {
    name: "opendata_call",
    arguments: { tool: "nope" },
  }) as unknown as Answer;
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent, undefined);

  const viewTools = (await modern(h, "tools/list", {}, UI))["tools"] as Tool[];
  assert.ok(viewTools.find((t) => t.name === "example-echo")!.outputSchema !== undefined);
  const viewed = await modern(h, "tools/call", echo, UI) as unknown as Answer;
  assert.deepEqual((viewed.structuredContent as { echo: unknown }).echo, { a: 1 });
});

Deno.test("structured_content off over HTTP: a 2025-era session gets text only; on keeps both", async () => {
  for (const mode of ["off", "on"] as const) {
    await using h = await startHarness({ providers: "example", server: { structured_content: mode } });
    const session = await openSession(h);
    const headers = { "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25" };
    const ask = async (id: number, method: string, params: Record<string, unknown>) => {
      const res = await postMcp(h, JSON.stringify({ jsonrpc: "2.0", id, method, params }), headers);
      const messages = await jsonRpcMessages(res);
      return messages.find((m) => m["id"] === id)!["result"] as Record<string, unknown>;
    };
    const tools = (await ask(2, "tools/list", {}))["tools"] as Tool[];
    const schema = tools.find((t) => t.name === "example-echo")!.outputSchema;
    assert.equal(schema === undefined, mode === "off", mode);
    for (const [i, params] of [echo, routed].entries()) {
      const r = await ask(3 + i, "tools/call", params) as unknown as Answer;
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.equal(r.structuredContent === undefined, mode === "off", `${mode} ${params.name}`);
    }
  }
});
