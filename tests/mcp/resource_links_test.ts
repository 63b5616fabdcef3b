// server.resource_links off (MCP_RESOURCE_LINKS=off), driven by the client that needs it:
// Anthropic's SDK helper (mcpTool().run()) throws on a resource_link block, so an answer that
// wrote a file is lost there; with the setting off the same answer arrives, its text naming the
// file and the opendata_read call that reads it (docs/CLIENTS.md).
import assert from "node:assert/strict";
import { mcpTool } from "@anthropic-ai/sdk/helpers/beta/mcp";
import { startRecordedUpstreams } from "../fakes/recorded.ts";
import { startInProcess } from "../harness/in_process.ts";

const CALL = { query: "post office", output: "file" };

async function runWith(env: Record<string, string>): Promise<unknown> {
  await using upstreams = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "worldbank"],
    env: { OPENDATA_MCP_TOOLSETS: "all", ...env },
    configYaml: upstreams.configYaml,
  });
  const { tools } = await s.client.listTools();
  const listed = tools.find((t) => t.name === "worldbank_search_documents")!;
  // deno-lint-ignore no-explicit-any
  return await mcpTool(listed as any, s.client as any).run(CALL);
}

Deno.test("resource_links off: Anthropic's mcpTool helper gets a file answer it otherwise throws on", async () => {
  await assert.rejects(
    runWith({}),
    /Unsupported MCP content type: resource_link/,
    "the default (on) is refused there",
  );
  const blocks = await runWith({ MCP_RESOURCE_LINKS: "off" }) as { type: string; text?: string }[];
  assert.ok(Array.isArray(blocks));
  assert.deepEqual(blocks.map((b) => b.type), ["text"], "no resource_link block");
  const text = blocks[0]!.text!;
  assert.match(text, /`opendata:\/\/files\/worldbank\/files\/[^`]+\.csv`/, "the text names the file");
  assert.match(text, /read the file: opendata_call opendata_read \{"uri":"opendata:\/\/files\/worldbank\//);
});
