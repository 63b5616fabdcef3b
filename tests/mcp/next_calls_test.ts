// Every answer names its next calls (docs/CLIENTS.md), routed for the caller's surface; an empty answer
// names the call that widens it; the headline tells failed sources from sources without hits;
// `sources` takes the ids opendata_describe lists, with "did you mean" for a near miss.
import assert from "node:assert/strict";
import { parseCoordinates } from "../../lib/geo/query_coordinates.ts";
import { callLine, closestNames, didYouMean, queryLanguage, routeCall } from "../../lib/mcp/next_calls.ts";
import { creditLine } from "../../lib/output/credit.ts";
import { errorOf, ok, texts } from "../harness/results.ts";
import { startRecordedUpstreams } from "../fakes/recorded.ts";
import { startInProcess } from "../harness/in_process.ts";

type Call = { tool: string; arguments: Record<string, unknown>; for?: string };

Deno.test("parseCoordinates reads the usual ways of typing a point and nothing else", () => {
  assert.deepEqual(parseCoordinates("59.91N 10.75E"), { lat: 59.91, lon: 10.75 });
  assert.deepEqual(parseCoordinates("59.91 N, 10.75 W"), { lat: 59.91, lon: -10.75 });
  assert.deepEqual(parseCoordinates("N59.91 E10.75"), { lat: 59.91, lon: 10.75 });
  assert.deepEqual(parseCoordinates("59,91° N 10,75° Ø"), { lat: 59.91, lon: 10.75 });
  assert.deepEqual(parseCoordinates(" 59.9139, 10.7522 "), { lat: 59.9139, lon: 10.7522 });
  assert.deepEqual(parseCoordinates("33.87S 151.21E"), { lat: -33.87, lon: 151.21 });
  for (const q of ["Oslo", "1998 2005", "95.1N 10E", "59.91N 190E", "E6 Oslo", "59 10"]) {
    assert.equal(parseCoordinates(q), undefined, q);
  }
});

Deno.test("routeCall sends a tool that is not listed through opendata_call, and callLine shows it once", () => {
  const call = { tool: "fred_series", arguments: { series_id: "UNRATE" }, for: "latest values" };
  assert.deepEqual(routeCall(call, new Set(["fred_series"])), call);
  const routed = routeCall(call, new Set());
  assert.deepEqual(routed, {
    tool: "opendata_call",
    arguments: { tool: "fred_series", arguments: '{"series_id":"UNRATE"}' },
    for: "latest values",
  });
  assert.equal(callLine(routed), 'latest values: opendata_call fred_series {"series_id":"UNRATE"}');
  assert.equal(didYouMean("exampel", ["example", "conformance"]), "example");
  assert.equal(didYouMean("lang", ["language", "limit"]), "language");
  assert.equal(didYouMean("zzzz", ["example"]), undefined);
  assert.equal(creditLine("a  b\n c"), "a b c");
  assert.ok(creditLine("x".repeat(500)).length <= 200);
});

Deno.test("opendata_search: an empty answer names the calls that widen it, failed sources are named apart, each next call works as given", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example,conformance"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
  });
  const r = await s.client.callTool({ name: "opendata_search", arguments: { query: "nothing fail" } });
  const found = ok(r);
  const text = texts(r)[0]!;
  assert.match(text, /^# "nothing fail": 0 hits from 0 of 2 sources; no hits: example; failed: conformance/);
  assert.match(text, /conformance failed: API_ERROR: The fixture source failed on purpose/);
  assert.doesNotMatch(text, /Licence/, "no licence line under no hits");
  const sources = found["sources"] as { id: string; status: string; next_calls?: Call[] }[];
  assert.deepEqual(sources[0]!.next_calls, [{
    tool: "opendata_call",
    arguments: { tool: "example-echo", arguments: '{"query":"nothing fail"}' },
    for: "echo it back",
  }]);
  const next = found["next_calls"] as Call[];
  assert.deepEqual(next.map((c) => c.for), ["fewer words", "retry failed sources"]);
  assert.deepEqual(next[1]!.arguments, { query: "nothing fail", sources: ["conformance"] });
  for (const call of [...sources[0]!.next_calls!, ...next]) {
    const answer = await s.client.callTool({ name: call.tool, arguments: call.arguments });
    assert.equal(answer.isError, undefined, `${call.for}: ${texts(answer)[0]}`);
  }
  // Text and structured content once each: the snippets are in the text only.
  const answer = await s.client.callTool({ name: "opendata_search", arguments: { query: "Oslo" } });
  const hits = ok(answer);
  assert.ok(!JSON.stringify(hits).includes("snippet"));
  assert.ok(!JSON.stringify(hits).includes("public domain"), "the licence line is in the text only");
  assert.equal(texts(answer)[0]!.match(/Licence: public domain \(the caller's own words\)/g)?.length, 1);
});

Deno.test("opendata_search sources: the ids opendata_describe lists, a near miss suggested", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example,conformance"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
  });
  const overview = ok(await s.client.callTool({ name: "opendata_describe", arguments: {} }));
  const ids = (overview["sources"] as { id: string }[]).map((x) => x.id);
  assert.deepEqual(ids, ["example", "conformance"]);
  for (const id of ids) {
    const one = ok(
      await s.client.callTool({ name: "opendata_search", arguments: { query: "Oslo", sources: [id] } }),
    );
    assert.deepEqual((one["sources"] as { id: string }[]).map((x) => x.id), [id]);
  }
  const e = errorOf(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "Oslo", sources: ["exampel"] } }),
  );
  assert.equal(e["field"], "sources");
  assert.match(String(e["hint"]), /^Did you mean "example"\? Sources: example, conformance/);
});

Deno.test("validation through opendata_call shows the schema part at fault, did you mean, and reads a common alias", async () => {
  await using s = await startInProcess({
    args: ["--providers", "worldbank,wikipedia"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
  });
  const via = (tool: string, args: Record<string, unknown>) =>
    s.client.callTool({ name: "opendata_call", arguments: { tool, arguments: JSON.stringify(args) } });
  const big = errorOf(await via("worldbank_search_documents", { query: "x", limit: 1000 }));
  assert.equal(big["field"], "limit");
  assert.match(String(big["hint"]), /the schema says "limit": \{.*"maximum":\d+/);
  assert.doesNotMatch(JSON.stringify(big), /inputSchema/, "nothing points at a schema the agent never saw");
  const typo = errorOf(await via("worldbank_search_documents", { query: "x", countrys: ["Kenya"] }));
  assert.match(String(typo["message"]), /Unknown argument "countrys": did you mean "countries"\?/);
  assert.match(String(typo["hint"]), /"countries": \{.*"array"/);
  // "lang" is read as Wikipedia's "language": only the bad limit is left to report.
  const alias = errorOf(await via("wikipedia-search", { query: "x", lang: "en", limit: 0 }));
  assert.doesNotMatch(String(alias["message"]), /lang/);
  assert.equal(alias["field"], "limit");
});

Deno.test("an error names the call that fixes it: a bad argument its tool's description, a not-found the listing", async () => {
  await using up = startRecordedUpstreams();
  up.main.route({ path: /\/MapServer\/99\/query$/, reply: { status: 404, body: "Not Found" } });
  await using s = await startInProcess({
    args: ["--providers", "worldbank,riksantikvaren_arcgis"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: up.configYaml,
  });
  const bad = errorOf(
    await s.client.callTool({
      name: "opendata_call",
      arguments: { tool: "worldbank_search_documents", arguments: '{"query": "x", "limit": 1000}' },
    }),
  );
  assert.deepEqual(bad["next_calls"], [{
    tool: "opendata_describe",
    arguments: { tool: "worldbank_search_documents" },
    for: "its arguments",
  }]);
  const missing = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "arcgis-query", arguments: '{"layer": 99}' },
  });
  const e = errorOf(missing);
  assert.equal(e["error_type"], "NOT_FOUND");
  const fix = (e["next_calls"] as Call[])[0]!;
  assert.equal(fix.for, "the services and layer ids");
  assert.match(texts(missing)[0]!, /the services and layer ids: opendata_call arcgis-services \{\}/);
  const listed = await s.client.callTool({ name: fix.tool, arguments: fix.arguments });
  assert.equal(listed.isError, undefined, texts(listed)[0]);
});

Deno.test("an alias is read with a notice, and 0 found nearby names the same call with a wider radius", async () => {
  await using up = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "boj,riksantikvaren_ogc"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: up.configYaml,
  });
  const aliased = await s.client.callTool({
    name: "opendata_call",
    arguments: {
      tool: "boj_get_data_code",
      arguments: JSON.stringify({ db: "FM01", codes: ["STRDCLUCON"], language: "en" }),
    },
  });
  ok(aliased);
  assert.match(texts(aliased)[0]!, /^\("language" read as "lang"\)/);
  assert.equal(up.main.requestsTo("/api/v1/getDataCode").at(-1)!.url.searchParams.get("lang"), "EN");

  const far = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "riksantikvaren-nearby", arguments: JSON.stringify({ lat: 60.5, lon: 11.5 }) },
  });
  const empty = ok(far);
  assert.equal(empty["total"], 0);
  const wider = (empty["next_calls"] as Call[])[0]!;
  assert.equal(wider.for, "a wider radius");
  assert.deepEqual(JSON.parse(String(wider.arguments["arguments"]))["radius_m"], 2000);
  assert.match(
    texts(far)[0]!,
    /a wider radius: opendata_call riksantikvaren-nearby \{"lat":60\.5,"lon":11\.5,"radius_m":2000/,
  );
});

Deno.test("applyAliases reads FRED's start_date as observation_start, not the edit-close start_time", async () => {
  await using up = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "fred"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: up.configYaml,
  });
  const answer = await s.client.callTool({
    name: "opendata_call",
    arguments: {
      tool: "fred_series",
      arguments: JSON.stringify({
        operation: "get_observations",
        series_id: "GNPCA",
        start_date: "2000-01-01",
        end_date: "2010-01-01",
      }),
    },
  });
  ok(answer);
  assert.match(texts(answer)[0]!, /"start_date" read as "observation_start"/);
  assert.doesNotMatch(texts(answer)[0]!, /start_time/);
  const sent = up.fred.requestsTo("/fred/series/observations").at(-1)!.url.searchParams;
  assert.equal(sent.get("observation_start"), "2000-01-01");
  assert.equal(sent.get("observation_end"), "2010-01-01");
});

Deno.test("closestNames ranks names sharing a word or a few edits first and offers nothing unrelated", () => {
  const tools = ["wikipedia-search", "wikipedia-summary", "fred_series", "boj_get_data_code", "snl-search"];
  assert.deepEqual(closestNames("wikipedia_search", tools), [
    "wikipedia-search",
    "wikipedia-summary",
    "snl-search",
  ]);
  assert.deepEqual(closestNames("boj_data", tools), ["boj_get_data_code"]);
  assert.deepEqual(closestNames("fred_serie", tools), ["fred_series"]);
  assert.deepEqual(closestNames("weather", tools), []);
});

Deno.test("an unknown tool through opendata_call and tools/call names the closest tools, not a sample", async () => {
  await using s = await startInProcess({
    args: ["--providers", "wikipedia,worldbank,snl"],
    env: { OPENDATA_MCP_TOOLSETS: "all" },
  });
  const viaCall = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "wikipedia_summry", arguments: "{}" },
  });
  const e = errorOf(viaCall);
  assert.equal(e["error_type"], "NOT_FOUND");
  assert.match(String(e["hint"]), /^Did you mean "wikipedia-summary"/);
  assert.doesNotMatch(String(e["hint"]), /worldbank/);
  // The same call on the closest tool first, then its arguments.
  const [same, describe] = e["next_calls"] as Call[];
  assert.deepEqual([same!.tool, same!.arguments], ["wikipedia-summary", {}], "listed: called directly");
  assert.deepEqual(describe!.arguments, { tool: "wikipedia-summary" });
  assert.match(texts(viaCall)[0]!, /wikipedia-summary/);
  await assert.rejects(
    s.client.callTool({ name: "snl_search", arguments: {} }),
    (err: Error) => /Unknown tool "snl_search"; did you mean "snl-search"/.test(err.message),
  );
});

Deno.test("opendata_search says how many each source matched and names the call that shows more of one", async () => {
  await using up = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "worldbank,fred,snl,riksantikvaren_ogc"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: up.configYaml,
  });
  const r = await s.client.callTool({
    name: "opendata_search",
    arguments: { query: "post office", sources: ["worldbank"], limit: 1 },
  });
  const found = ok(r);
  const source = (found["sources"] as { id: string; total?: number; more?: Call }[])[0]!;
  assert.equal(source.total, 44);
  assert.match(texts(r)[0]!, /## World Bank Documents & Reports \(44 matches\)/);
  assert.match(
    texts(r)[0]!,
    /→ more from worldbank: opendata_call worldbank_search_documents \{"query":"post office","limit":10\}/,
  );
  const more = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "worldbank_search_documents", arguments: '{"query":"post office","limit":10}' },
  });
  assert.match(texts(more)[0]!, /Found 44 documents/);
});

Deno.test("queryLanguage and an empty search: widening only where the words plausibly belong", async () => {
  assert.equal(queryLanguage("ドル円"), "ja");
  assert.equal(queryLanguage("Nøstvet"), "no");
  assert.equal(queryLanguage("kirke på bryggen"), "no");
  assert.equal(queryLanguage("interest rate"), "en");
  assert.equal(queryLanguage("Mariakirken"), undefined);
  await using up = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "worldbank,fred,snl,riksantikvaren_ogc"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: up.configYaml,
  });
  const norwegian = texts(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "kirke zzqq" } }),
  )[0]!;
  assert.match(norwegian, /snl, no hits →/);
  assert.doesNotMatch(
    norwegian,
    /worldbank, no hits|fred, no hits/,
    "English sources are not offered Norwegian words",
  );
  const english = texts(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "interest rate zzqq" } }),
  )[0]!;
  assert.match(english, /worldbank, no hits →/);
  assert.doesNotMatch(english, /snl, no hits|riksantikvaren_ogc, no hits/);
});

Deno.test("riksantikvaren-features: a name found nowhere names other collections, never the search that failed", async () => {
  await using up = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "riksantikvaren_ogc"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: up.configYaml,
  });
  const r = await s.client.callTool({
    name: "opendata_call",
    arguments: {
      tool: "riksantikvaren-features",
      arguments: JSON.stringify({ collection: "lokaliteter", query: "Nøstvet", limit: 3 }),
    },
  });
  const found = ok(r);
  assert.equal(found["total"], 0);
  const next = found["next_calls"] as Call[];
  assert.deepEqual(
    next.map((c) => JSON.parse(String(c.arguments["arguments"]))["collection"]),
    ["enkeltminner", "fredabygninger"],
  );
  assert.ok(
    next.every((c) => c.tool === "opendata_call" && c.arguments["tool"] === "riksantikvaren-features"),
  );
  assert.doesNotMatch(texts(r)[0]!, /opendata_search/, "no circle back to the search");
});

Deno.test("opendata_search cut to its limit never names the very call it answers", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example,conformance"],
    env: { OPENDATA_MCP_TOOLSETS: "", MCP_CHARACTER_LIMIT: "1000" },
  });
  const args = { query: "Oslo ".repeat(30).trim(), sources: ["example"], limit: 10 };
  const r = await s.client.callTool({ name: "opendata_search", arguments: args });
  const next = (r.structuredContent as { next_calls?: Call[] } | undefined)?.next_calls ?? [];
  assert.ok(
    !next.some((c) => c.tool === "opendata_search" && JSON.stringify(c.arguments) === JSON.stringify(args)),
    JSON.stringify(next),
  );
});
