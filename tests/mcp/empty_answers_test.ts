// An empty answer of a search by words is never a dead end. Where the provider names no
// next call, the core names the same search with fewer words and opendata_search over every source.
import assert from "node:assert/strict";
import { widening } from "../../lib/mcp/next_calls.ts";
import { startRecordedUpstreams } from "../fakes/recorded.ts";
import { startInProcess } from "../harness/in_process.ts";

Deno.test("widening() names fewer words and every source for an empty first page only", () => {
  const empty = { total: 0, count: 0, has_more: false };
  assert.deepEqual(widening("t", { query: "a b", limit: 5 }, empty, "opendata_search"), [
    { tool: "t", arguments: { query: "a", limit: 5 }, for: "fewer words" },
    { tool: "opendata_search", arguments: { query: "a b" }, for: "every source" },
  ]);
  assert.deepEqual(
    widening("t", { search_text: "one" }, { total: null, count: 0, has_more: false }, undefined),
    [],
  );
  assert.deepEqual(widening("t", { search_text: "one" }, empty, "s"), [
    { tool: "s", arguments: { query: "one" }, for: "every source" },
  ]);
  assert.deepEqual(widening("t", { query: "a b" }, { total: 3, count: 3, has_more: false }, "s"), [], "hits");
  assert.deepEqual(
    widening("t", { query: "a b", offset: 20 }, { count: 0, has_more: false }, "s"),
    [],
    "past the end",
  );
  assert.deepEqual(
    widening("t", { query: "a", offset: 0 }, { offset: 0, count: 0, has_more: false }, "s"),
    [{ tool: "s", arguments: { query: "a" }, for: "every source" }],
    "offset 0 said outright is the first page",
  );
  assert.deepEqual(
    widening("t", { query: '"climate finance" Kenya' }, empty, undefined),
    [{ tool: "t", arguments: { query: "climate finance" }, for: "fewer words" }],
    "a quoted phrase is one word, given without its quotes",
  );
  assert.deepEqual(
    widening("t", { query: '"solar Kenya' }, empty, undefined),
    [{ tool: "t", arguments: { query: "solar" }, for: "fewer words" }],
    "never a quote left open",
  );
  // Filters the call set are dropped by one call; the words and what only shapes, pages or places
  // the search stay.
  assert.deepEqual(
    widening(
      "t",
      { query: "solar", countries: ["NO"], date_from: "2020-01-01", limit: 5, offset: 0, collection: "c" },
      empty,
      "s",
      new Set(["query"]),
    ),
    [
      {
        tool: "t",
        arguments: { query: "solar", limit: 5, offset: 0, collection: "c" },
        for: "without filters",
      },
      { tool: "s", arguments: { query: "solar" }, for: "every source" },
    ],
  );
  assert.deepEqual(widening("t", { query: "x", limit: 3 }, empty, undefined), [], "no filter set");
  // A tool that requires more than the words may need other arguments with it that no schema says
  // (FRED's get_related_tags needs tag_names): no call without filters is guessed.
  assert.deepEqual(
    widening(
      "fred_tag",
      { operation: "get_related_tags", tag_names: "usa", search_text: "x" },
      empty,
      undefined,
      new Set(["operation"]),
    ),
    [],
  );
  assert.deepEqual(widening("t", { lat: 1 }, empty, "s"), [], "not a search by words");
  assert.deepEqual(widening("s", { query: "a" }, empty, "s"), [], "opendata_search does not name itself");
});

Deno.test("an empty search answer reached through opendata_call names calls that widen it, which work as given", async () => {
  await using upstreams = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "worldbank,snl,geonorge"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: upstreams.configYaml,
  });
  type Call = { tool: string; arguments: Record<string, unknown>; for?: string };
  // snl-search names its own widening (tests/providers/snl/snl_e2e_test.ts): the others get the core's.
  for (const tool of ["worldbank_search_documents", "geonorge-datasets"]) {
    const r = await s.client.callTool({
      name: "opendata_call",
      arguments: { tool, arguments: JSON.stringify({ query: "zzqx qqzz" }) },
    });
    assert.equal(r.isError, undefined, tool);
    const next = (r.structuredContent as { next_calls: Call[] }).next_calls;
    assert.deepEqual(next.map((c) => c.for), ["fewer words", "every source"], tool);
    assert.deepEqual(next[0]!.arguments, { tool, arguments: JSON.stringify({ query: "zzqx" }) }, tool);
    assert.deepEqual(next[1], {
      tool: "opendata_search",
      arguments: { query: "zzqx qqzz" },
      for: "every source",
    });
    const text = (r.content as { text: string }[])[0]!.text;
    assert.match(
      text,
      /\nNext:\n- fewer words: opendata_call [a-z_-]+ \{"query":"zzqx"\}\n- every source: opendata_search/,
    );
    // Each named call is callable exactly as given.
    for (const c of next) {
      const again = await s.client.callTool({ name: c.tool, arguments: c.arguments });
      assert.equal(again.isError, undefined, `${tool} → ${c.tool}`);
    }
  }
  // A filtered search also names itself without the filters, which works as given.
  for (
    const [tool, args] of [
      ["worldbank_search_documents", { query: "zzqx", countries: ["Norway"], limit: 5 }],
      ["geonorge-datasets", { query: "zzqx", type: "service" }],
    ] as const
  ) {
    const r = await s.client.callTool({
      name: "opendata_call",
      arguments: { tool, arguments: JSON.stringify(args) },
    });
    assert.equal(r.isError, undefined, `${tool}: ${JSON.stringify(r.content)}`);
    const next = (r.structuredContent as { next_calls: Call[] }).next_calls;
    const wide = next.find((c) => c.for === "without filters");
    const { countries: _c, type: _t, ...rest } = args as Record<string, unknown>;
    assert.deepEqual(wide?.arguments, { tool, arguments: JSON.stringify(rest) }, JSON.stringify(next));
    const again = await s.client.callTool({ name: wide!.tool, arguments: wide!.arguments });
    assert.equal(again.isError, undefined, `${tool} without filters: ${JSON.stringify(again.content)}`);
  }
});
