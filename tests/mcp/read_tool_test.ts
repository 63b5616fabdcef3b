// A result file is read by a tool call (opendata_read, reached through opendata_call
// from the default surface), page by page, as the answer that wrote it names; over HTTP no
// answer shows the server's file-system path.
import assert from "node:assert/strict";
import { csvRecords, sourceOf, sourceText, withoutConstantColumns } from "../../lib/mcp/tools/read.ts";
import { errorOf, ok, texts } from "../harness/results.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk2_client.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";
import { startHttpInProcess, startInProcess } from "../harness/in_process.ts";

type Call = { tool: string; arguments: Record<string, unknown>; for?: string };
const DEFAULT = { OPENDATA_MCP_TOOLSETS: "" };

Deno.test("csvRecords keeps a quoted line break inside its record", () => {
  assert.deepEqual(csvRecords('a,b\r\n1,"x\ny"\n2,z\n'), ["a,b", '1,"x\ny"', "2,z"]);
  assert.deepEqual(csvRecords(""), []);
});

Deno.test("sourceText names the declared licence, or says none was declared, in one line", () => {
  const declared = (id: string) =>
    id === "fred" ? { name: "FRED", licence: "Notice.\n  Terms: https://x" } : undefined;
  const fred = sourceOf("fred", "https://api.example/fred/series?series_id=A", declared);
  assert.deepEqual(fred, {
    provider: "fred",
    name: "FRED",
    licence: "Notice. Terms: https://x",
    request: "https://api.example/fred/series?series_id=A",
  });
  assert.equal(
    sourceText(fred),
    "Source: FRED (https://api.example/fred/series?series_id=A). Licence: Notice. Terms: https://x",
  );
  const bare = sourceOf("other", "x".repeat(500), declared);
  assert.equal(bare.licence, null);
  assert.equal(bare.request!.length, 200, "a long request is cut");
  assert.match(sourceText(bare), /^Source: other \(x+…\)\. Licence: not declared by other: check its terms/);
  assert.doesNotMatch(sourceText(bare), /\n/);
});

Deno.test("opendata_read pages a file a FRED answer wrote, following only the next calls the answers name", async () => {
  await using fake = startFakeFred();
  await using s = await startInProcess({
    args: ["--providers", "fred"],
    env: DEFAULT,
    configYaml: fredConfig(fake.origin),
  });
  const wrote = await s.client.callTool({
    name: "opendata_call",
    arguments: {
      tool: "fred_series",
      arguments: JSON.stringify({ operation: "get_observations", series_id: "GNPCA", output: "file" }),
    },
  });
  const read = (ok(wrote)["next_calls"] as Call[]).find((c) => c.for === "read the file")!;
  assert.equal(read.tool, "opendata_call", "not listed: reached through opendata_call");
  assert.match(texts(wrote)[0]!, /read the file: opendata_call opendata_read \{"uri":"fred:\/\/files\//);
  const first = await s.client.callTool({ name: read.tool, arguments: read.arguments });
  const page = ok(first);
  assert.deepEqual([page["unit"], page["offset"], page["count"], page["total"]], ["rows", 0, 50, 84]);
  assert.match(
    texts(first)[0]!,
    /rows 1-50 of 84\nSource: FRED \(Federal Reserve Economic Data\) \(https?:\/\/[^)]*series_id=GNPCA[^)]*\)\. Licence: .*Terms: https:\/\/fred\.stlouisfed\.org\/[^\n]*\nSame on every row of this page: realtime_start=2013-08-14, realtime_end=2013-08-14\n```csv\ndate,value\n1929-01-01,1065\.9\n/,
  );
  const source = page["source"] as Record<string, string>;
  assert.deepEqual([source["provider"], source["name"]], ["fred", "FRED (Federal Reserve Economic Data)"]);
  assert.match(source["licence"]!, /Terms: https:\/\/fred\.stlouisfed\.org\//);
  assert.match(source["request"]!, /fred\/series\/observations\?.*series_id=GNPCA/);
  assert.doesNotMatch(source["request"]!, /api_key/, "the recorded request has no secret");
  const more = (page["next_calls"] as Call[])[0]!;
  assert.equal(more.for, "next rows");
  const second = ok(await s.client.callTool({ name: more.tool, arguments: more.arguments }));
  assert.deepEqual([second["offset"], second["count"], second["has_more"]], [50, 34, false]);
  assert.deepEqual(second["source"], page["source"], "every page names the source");
  assert.equal(second["next_calls"], undefined, "the last page names no further page");

  const described = ok(
    await s.client.callTool({ name: "opendata_describe", arguments: { tool: "opendata_read" } }),
  );
  assert.equal((described["tool"] as { listed: boolean }).listed, false);
  const missing = errorOf(
    await s.client.callTool({
      name: "opendata_call",
      arguments: { tool: "opendata_read", arguments: '{"uri": "fred://files/default/series/nope.csv"}' },
    }),
  );
  assert.equal(missing["error_type"], "NOT_FOUND");
  const elsewhere = errorOf(
    await s.client.callTool({
      name: "opendata_call",
      arguments: { tool: "opendata_read", arguments: '{"uri": "file:///etc/passwd"}' },
    }),
  );
  assert.equal(elsewhere["error_type"], "NOT_FOUND");
});

Deno.test("over HTTP a file answer shows its resource URI, never the server's path, and opendata_read reads it", async () => {
  await using fake = startFakeFred();
  await using server = await startHttpInProcess({
    args: ["--providers", "fred"],
    env: DEFAULT,
    configYaml: fredConfig(fake.origin),
  });
  const client = new Client({ name: "reader", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  try {
    const wrote = await client.callTool({
      name: "opendata_call",
      arguments: {
        tool: "fred_series",
        arguments: JSON.stringify({ operation: "get_observations", series_id: "GNPCA", output: "file" }),
      },
    });
    const all = JSON.stringify(wrote);
    assert.doesNotMatch(all, /\/tmp\/|\.local\/share|opendata-mcp-home/, "no server path in the answer");
    assert.match(all, /fred:\/\/files\/default\/series\//);
    const read = ((wrote.structuredContent as Record<string, unknown>)["next_calls"] as Call[])
      .find((c) => c.for === "read the file")!;
    const page = await client.callTool({ name: read.tool, arguments: read.arguments });
    assert.equal((page.structuredContent as Record<string, unknown>)["total"], 84);
    const projects = await client.callTool({
      name: "opendata_call",
      arguments: { tool: "fred_project_list", arguments: "{}" },
    });
    assert.doesNotMatch(JSON.stringify(projects), /\/tmp\/|\.local\/share/, "no storage folder either");
  } finally {
    await client.close();
  }
});

Deno.test("withoutConstantColumns says a column with one value once and keeps quoted commas whole", () => {
  const page = withoutConstantColumns("date,note,value", ['2020,"a, b",1', '2021,"a, b",2']);
  assert.deepEqual(page, {
    header: "date,value",
    rows: ["2020,1", "2021,2"],
    same: 'Same on every row of this page: note="a, b"',
  });
  // One row, a ragged row, or every column the same: the page as it is.
  assert.equal(withoutConstantColumns("a,b", ["1,2"]).same, "");
  assert.equal(withoutConstantColumns("a,b", ["1,2", "1"]).same, "");
  assert.deepEqual(withoutConstantColumns("a,b", ["1,2", "1,2"]).rows, ["1,2", "1,2"]);
});
