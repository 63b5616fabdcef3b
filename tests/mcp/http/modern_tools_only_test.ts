// A 2026-07-28 request builds its own server; one for tools/list or tools/call registers no
// resources, prompts or views (lib/mcp/http/_route_modern.ts), and answers the same bytes.
import assert from "node:assert/strict";
import { BASE, POST_HEADERS, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";
import type { NewServerOptions } from "../../../lib/mcp/served_app.ts";

const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };

/** One 2026-07-28 request's raw answer: status and body text. */
async function ask(h: Harness, method: string, params: Record<string, unknown>, caps = {}): Promise<string> {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "tools-only-test", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": caps,
  };
  const named = typeof params["name"] === "string" ? { "Mcp-Name": params["name"] as string } : {};
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: { ...POST_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, ...named },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: meta } }),
  });
  return `${res.status} ${await res.text()}`;
}

/**
 * Records the options of every server the app builds; while `mode.force` is set, it overrides
 * `toolsOnly` (true: tools-only, false: full).
 */
function recordServers(h: Harness, mode: { force?: boolean } = {}): NewServerOptions[] {
  const built: NewServerOptions[] = [];
  const original = h.app.newServer.bind(h.app);
  h.app.newServer = (options = {}) => {
    built.push(options);
    const { toolsOnly: _, ...rest } = options;
    const force = mode.force;
    return original(force === undefined ? options : force ? { ...rest, toolsOnly: true } : rest);
  };
  return built;
}

Deno.test("the 2026-07-28 server of a tools/list or tools/call is built tools-only; others get everything", async () => {
  await using h = await startHarness({ providers: "example,conformance" });
  const built = recordServers(h);
  for (const method of ["tools/list", "tools/call"]) {
    const params = method === "tools/call" ? { name: "example-echo", arguments: { text: "hi" } } : {};
    assert.match(await ask(h, method, params), /^200 /);
    assert.equal(built.pop()?.toolsOnly, true, method);
  }
  for (const method of ["server/discover", "prompts/list", "resources/templates/list", "resources/list"]) {
    const answer = await ask(h, method, {});
    assert.match(answer, /^200 /, answer);
    assert.notEqual(built.pop()?.toolsOnly, true, method);
  }
  const discover = JSON.parse((await ask(h, "server/discover", {})).slice(4));
  assert.ok(discover.result.capabilities.resources, "discovery still declares resources");
  assert.ok(discover.result.capabilities.prompts, "and prompts");
});

Deno.test("a tools-only 2026-07-28 server answers tools/list and tools/call byte for byte as a full one", async () => {
  await using h = await startHarness({ providers: "example,conformance" });
  const asks: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ["tools/list", {}, {}],
    ["tools/list", {}, UI],
    ["tools/call", { name: "example-echo", arguments: { text: "hi" } }, {}],
    ["tools/call", { name: "opendata_search", arguments: { query: "gdp" } }, UI],
    ["tools/call", { name: "example-echo", arguments: { text: 5 } }, {}],
    ["tools/call", { name: "no-such-tool", arguments: {} }, {}],
  ];
  const mode: { force?: boolean } = {};
  const built = recordServers(h, mode);
  const answers = async (force: boolean): Promise<string[]> => {
    mode.force = force;
    const out: string[] = [];
    for (const [method, params, caps] of asks) out.push(await ask(h, method, params, caps));
    return out;
  };
  const full = await answers(false);
  const toolsOnly = await answers(true);
  assert.equal(built.length, asks.length * 2, "each request built its own server");
  assert.deepEqual(toolsOnly, full);
  assert.ok(full.every((a) => a.startsWith("200 ")), full.join("\n"));
});
