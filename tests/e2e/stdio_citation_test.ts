// Over stdio each client session starts a new server process, and citations live in that
// process's memory: reading one from an earlier run says so (not "expired"), through a real
// SDK client against two processes in turn.
import assert from "node:assert/strict";
import { startRecordedUpstreams } from "../fakes/recorded.ts";
import { startStdio } from "../harness/spawn.ts";

Deno.test("stdio: a citation from an earlier server process is named as such, not as expired", async () => {
  await using upstreams = startRecordedUpstreams();
  const options = {
    args: ["--providers", "wikipedia"],
    env: { OPENDATA_MCP_TOOLSETS: "all" },
    configYaml: upstreams.configYaml,
  };
  let citation: string;
  {
    await using first = await startStdio(options);
    const r = await first.client.callTool({ name: "wikipedia-search", arguments: { query: "meaning" } });
    citation = String((r.structuredContent as { provenance: { citation: string } }).provenance.citation);
    const read = await first.client.readResource({ uri: citation });
    assert.match((read.contents[0] as { text: string }).text, /"replay"/, "readable in its own process");
  }
  await using second = await startStdio(options);
  await assert.rejects(
    second.client.readResource({ uri: citation }),
    (e: Error) =>
      /an earlier run \(a stdio server starts anew with each client session\)/.test(e.message) &&
      !/it expired \(citations are kept a day\)/.test(e.message),
  );
});
