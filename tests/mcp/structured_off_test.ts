// server.structured_content off (MCP_STRUCTURED_CONTENT=off): for clients that give their model both
// the text and the structured content, answers come as text only, tools list no outputSchema (so
// none is owed), and the text still names every next call. A client that renders views keeps both.
import assert from "node:assert/strict";
import { startRecordedUpstreams } from "../fakes/recorded.ts";
import { startInProcess } from "../harness/in_process.ts";

const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
type Text = { type: string; text: string };

Deno.test("structured_content off: text-only answers and listings that follow every next call; view clients keep both", async () => {
  await using upstreams = startRecordedUpstreams();
  const start = (clientCapabilities?: Record<string, unknown>) =>
    startInProcess({
      args: ["--providers", "fred,boj"],
      env: { OPENDATA_MCP_TOOLSETS: "", MCP_STRUCTURED_CONTENT: "off" },
      configYaml: upstreams.configYaml,
      ...(clientCapabilities ? { clientCapabilities } : {}),
    });
  {
    await using s = await start();
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name), []);
    const search = await s.client.callTool({ name: "opendata_search", arguments: { query: "USD/JPY" } });
    assert.equal(search.structuredContent, undefined);
    const text = (search.content as Text[])[0]!.text;
    // The hit's next call, as the text names it, works as given.
    const line = text.split("\n").find((l) =>
      l.includes("→ recent values: opendata_call boj_get_data_code")
    )!;
    const args = line.slice(line.indexOf("{"));
    const data = await s.client.callTool({
      name: "opendata_call",
      arguments: { tool: "boj_get_data_code", arguments: args },
    });
    assert.equal(data.isError, undefined, JSON.stringify(data.content));
    assert.equal(data.structuredContent, undefined);
    assert.match((data.content as Text[])[0]!.text, /FXERD01[\s\S]*153\.64[\s\S]*\nProvenance: /);
  }
  {
    await using s = await start(UI);
    const { tools } = await s.client.listTools();
    assert.ok(
      tools.some((t) => t.outputSchema !== undefined),
      "a client that renders views gets output schemas",
    );
    const search = await s.client.callTool({ name: "opendata_search", arguments: { query: "USD/JPY" } });
    assert.ok(search.structuredContent !== undefined);
  }
});

Deno.test("structured_content off: the --structured-content flag the help offers is accepted and applied", async () => {
  await using upstreams = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "boj", "--structured-content", "off"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: upstreams.configYaml,
  });
  const { tools } = await s.client.listTools();
  assert.deepEqual(tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name), []);
  const search = await s.client.callTool({ name: "opendata_search", arguments: { query: "USD/JPY" } });
  assert.equal(search.structuredContent, undefined);
  assert.match((search.content as Text[])[0]!.text, /boj_get_data_code/);
});
