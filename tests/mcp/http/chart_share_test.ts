// opendata_chart runs its calls as tools/call runs them: a call's `output: "file"` result counts
// against the caller's per-client quota (MCP_QUOTA_MB) there too.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "../../harness/sdk_client.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import { startHttpInProcess } from "../../harness/in_process.ts";

const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const ARGS = { db: "CO", codes: ["TK99F1000601GCQ01000"], output: "file" };

Deno.test("opendata_chart: a call's file output is held to the caller's per-client quota", async () => {
  await using fake = FakeUpstream.start([
    { path: "/api/v1/getDataCode", reply: { fixture: "boj/json_success_code_api.json" } },
  ]);
  // A quota smaller than one 4 KiB block: every file is past it.
  const configYaml = `server:\n  quota_mb: 0.001\nproviders:\n  boj:\n    base_url: ${fake.origin}\n` +
    "    cache_ttl: 0\n    max_retries: 0\n";
  await using server = await startHttpInProcess({ args: ["--providers", "boj"], configYaml });
  const client = new Client({ name: "chart-share", version: "0" }, { capabilities: UI });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  try {
    const direct = await client.callTool({ name: "boj_get_data_code", arguments: ARGS });
    assert.equal(direct.isError, true);
    assert.match(JSON.stringify(direct.content), /QUOTA_EXCEEDED.*one client may store/);
    const chart = await client.callTool({
      name: "opendata_chart",
      arguments: { calls: [{ tool: "boj_get_data_code", arguments: JSON.stringify(ARGS) }] },
    });
    const parts = (chart.structuredContent as { calls: { is_error: boolean }[] }).calls;
    assert.equal(parts[0]!.is_error, true, JSON.stringify(chart.content));
    assert.match(JSON.stringify(chart.content), /QUOTA_EXCEEDED.*one client may store/);
  } finally {
    await client.close().catch(() => {});
  }
});
