// An answer's closing lines under a small character limit: the
// provenance line and the next calls are added after the provider's text; when the structured
// content still has to be shortened, its note makes room by cutting the text before them, never
// them, and a JSON text stays the structured content itself. Driven through the real server over
// stdio against the recorded FRED fake.
import assert from "node:assert/strict";
import { ok, texts } from "../harness/results.ts";
import { startInProcess } from "../harness/in_process.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";

function fred(args: Record<string, unknown>) {
  return { name: "opendata_call", arguments: { tool: "fred_series", arguments: JSON.stringify(args) } };
}

/** Lines of `text` that start with `prefix`. */
function linesStarting(text: string, prefix: string): string[] {
  return text.split("\n").filter((l) => l.startsWith(prefix));
}

Deno.test("callTool under a small character limit keeps the provenance line and next calls whole, once, and JSON text equal to structuredContent", async () => {
  await using fake = startFakeFred();
  for (const limit of [1000, 2000]) {
    await using s = await startInProcess({
      args: ["--providers", "fred"],
      env: { OPENDATA_MCP_TOOLSETS: "", MCP_CHARACTER_LIMIT: String(limit) },
      configYaml: fredConfig(fake.origin),
    });
    const observations = { operation: "get_observations", series_id: "GNPCA" };
    for (const args of [observations, { ...observations, output: "file" }] as Record<string, unknown>[]) {
      const r = await s.client.callTool(fred(args));
      const text = texts(r)[0]!;
      const sc = ok(r);
      const where = `limit ${limit}, ${JSON.stringify(args)}`;
      assert.match(String((sc["provenance"] as { source?: string }).source), /FRED/, where);
      assert.ok(text.length <= limit, `${where}: ${text.length} characters`);
      const provenance = linesStarting(text, "Provenance: ");
      assert.equal(provenance.length, 1, `${where}: one provenance line\n${text}`);
      assert.match(provenance[0]!, / · replay opendata:\/\/citation\/fred\/[0-9a-f]{20}$/, where);
      assert.ok(linesStarting(text, "Next:").length <= 1, where);
      assert.ok(text.split("[Truncated").length <= 2, `${where}: one truncation notice at most\n${text}`);
      if (args.output === "file" && limit === 2000) {
        // The structured content has no room for it: the text names the read, whole.
        assert.match(
          text,
          /\nNext: read the file: opendata_call opendata_read \{"uri":"fred:\/\/files\/[^"]+\.csv"\}$/,
        );
      }
    }
    const json = await s.client.callTool(fred({ ...observations, response_format: "json" }));
    const jsonText = texts(json)[0]!;
    assert.ok(jsonText.length <= limit, `limit ${limit}: ${jsonText.length}`);
    assert.deepEqual(
      JSON.parse(jsonText),
      ok(json),
      `limit ${limit}: the JSON text is the structured content`,
    );
    assert.ok(ok(json)["provenance"], "the provenance object is inside");
    assert.doesNotMatch(jsonText, /\nNext:|\[structuredContent was shortened/);
  }
});

Deno.test("callTool in response_format json names the next calls inside the JSON, equal to structuredContent", async () => {
  await using fake = startFakeFred();
  await using s = await startInProcess({
    args: ["--providers", "fred"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: fredConfig(fake.origin),
  });
  const r = await s.client.callTool(
    fred({ operation: "get_observations", series_id: "GNPCA", output: "file", response_format: "json" }),
  );
  const text = texts(r)[0]!;
  const sc = ok(r);
  assert.deepEqual(JSON.parse(text), sc, "the JSON text is the structured content");
  const read = (sc["next_calls"] as { tool: string; arguments: Record<string, unknown>; for?: string }[])
    .find((c) => c.for === "read the file");
  assert.ok(read, "the file's reader is named, as in a markdown answer");
  assert.doesNotMatch(text, /\nNext:/);
  const page = ok(await s.client.callTool({ name: read.tool, arguments: read.arguments }));
  assert.deepEqual([page["unit"], page["offset"], page["total"]], ["rows", 0, 84]);
});
