// opendata_chart when one of its calls fails upstream: the other series still come back and are
// drawn, the failed part says what went wrong, and the answer is an error only when every call
// failed. Real server over Streamable HTTP, a client that renders views, a loopback BOJ serving
// recorded bodies (tests/fixtures/boj/, with their provenance in its README).
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { startHttpInProcess } from "../harness/in_process.ts";

const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const GOOD = { db: "CO", codes: ["TK99F1000601GCQ01000"] };
const BROKEN = { db: "CO", codes: ["TK99F2000601GCQ01000"] };

Deno.test("opendata_chart keeps the series whose call worked when another call's upstream fails", async () => {
  await using fake = FakeUpstream.start([
    {
      path: "/api/v1/getDataCode",
      match: (r) => (r.url.searchParams.get("code") ?? "").includes(BROKEN.codes[0]!),
      reply: { status: 500, fixture: "boj/json_error_500_internal.json" },
    },
    { path: "/api/v1/getDataCode", reply: { fixture: "boj/json_success_code_api.json" } },
  ]);
  const configYaml =
    `providers:\n  boj:\n    base_url: ${fake.origin}\n    cache_ttl: 0\n    max_retries: 0\n`;
  await using server = await startHttpInProcess({ args: ["--providers", "boj"], configYaml });
  const client = new Client({ name: "chart-failure", version: "0" }, { capabilities: UI });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  try {
    const call = (args: unknown) => ({ tool: "boj_get_data_code", arguments: JSON.stringify(args) });
    const mixed = await client.callTool({
      name: "opendata_chart",
      arguments: { calls: [call(GOOD), call(BROKEN)] },
    });
    assert.notEqual(mixed.isError, true, JSON.stringify(mixed.content));
    const parts = (mixed.structuredContent as { calls: { is_error: boolean; series: string[] }[] }).calls;
    assert.deepEqual(parts.map((p) => p.is_error), [false, true]);
    assert.deepEqual(parts[0]!.series, GOOD.codes);
    const text = (mixed.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
    assert.match(text, /## boj_get_data_code \(failed\)/);
    assert.match(text, /500/);

    const allFailed = await client.callTool({ name: "opendata_chart", arguments: { calls: [call(BROKEN)] } });
    assert.equal(allFailed.isError, true);
  } finally {
    await client.close().catch(() => {});
  }
});
