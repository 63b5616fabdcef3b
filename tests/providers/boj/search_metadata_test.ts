// BOJ's part of opendata_search finds series by the words of their names in the API's own
// metadata (getMetadata), beyond the alias list: the databases whose names hold the query's words
// are read (once, cached), and an answer does not depend on what other callers asked before.
import assert from "node:assert/strict";
import { startRecordedUpstreams } from "../../fakes/recorded.ts";
import { startInProcess } from "../../harness/in_process.ts";
import { databasesFor, queryTerms } from "../../../lib/providers/boj/search.ts";

type Hit = { title: string; next_calls?: { arguments: Record<string, unknown> }[] };
type Source = { id: string; hits?: Hit[] };

Deno.test("databasesFor() picks databases by the query's words, never by common words alone", () => {
  assert.deepEqual(databasesFor(queryTerms("foreign exchange spot"), 2), [
    { code: "FM08", said: ["foreign", "exchange"] },
    { code: "FM09", said: ["exchange"] },
  ]);
  assert.deepEqual(databasesFor(queryTerms("what is the rate"), 2), [], "'rate' alone names no database");
  assert.deepEqual(queryTerms("what is the latest money stock"), ["money", "stock"]);
  // A word counts where a name's word starts with it: "us" is not in "business" (FM01) or "used"
  // (LA04), "ex" not in "exchange"; "price" is in "prices".
  assert.deepEqual(databasesFor(queryTerms("us gdp"), 2), [], "no series list read for words no name holds");
  assert.deepEqual(databasesFor(queryTerms("ex ante"), 2).map((d) => d.code), []);
  assert.deepEqual(databasesFor(queryTerms("import price"), 2).map((d) => d.said), [["price"], ["price"]]);
});

Deno.test("opendata_search finds BOJ series from the metadata of the databases the words name", async () => {
  await using upstreams = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "boj"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: upstreams.configYaml,
  });
  const search = async (query: string) => {
    const r = await s.client.callTool({ name: "opendata_search", arguments: { query, sources: ["boj"] } });
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    const sources = (r.structuredContent as { sources: Source[] }).sources;
    return sources.find((x) => x.id === "boj")?.hits ?? [];
  };
  const reads = () =>
    upstreams.main.requestsTo("/api/v1/getMetadata").map((r) => r.url.searchParams.get("db"));

  // Words that name no database read nothing (asked first, and again below).
  const central = await search("Tokyo central");
  assert.deepEqual(reads(), []);

  // "spot" is in no alias and no database name: FM08 ("Foreign exchange rates") says the rest.
  const spot = await search("foreign exchange spot");
  assert.deepEqual(spot.slice(0, 3).map((h) => h.title.split(":")[0]), [
    "FM08 FXERD01",
    "FM08 FXERD04",
    "FM08 FXERD06",
  ]);
  assert.deepEqual(spot[0]!.next_calls![0]!.arguments["tool"], "boj_get_data_code");
  assert.deepEqual(reads(), ["FM08"], "FM08 filled the hits: FM09, named second, was not read");

  // A question is answered the same whatever was asked before: the series list read for
  // "foreign exchange spot" does not change what "Tokyo central" finds, and reads nothing more.
  assert.deepEqual((await search("Tokyo central")).map((h) => h.title), central.map((h) => h.title));
  assert.deepEqual(reads(), ["FM08"], "no new metadata request");
  // The cached series list serves the same question again without a request.
  assert.deepEqual((await search("foreign exchange spot")).map((h) => h.title), spot.map((h) => h.title));
  assert.deepEqual(reads(), ["FM08"]);

  // Common words alone read nothing.
  await search("rate");
  assert.deepEqual(reads(), ["FM08"]);

  // A series list the BOJ refuses (FM09: the fake answers 400, as for an unknown database) leaves
  // the others and the local catalogue: the source still answers, and names no failure.
  const refused = await s.client.callTool({
    name: "opendata_search",
    arguments: { query: "effective exchange spot", sources: ["boj"] },
  });
  assert.equal(refused.isError, undefined, JSON.stringify(refused.content));
  assert.deepEqual(reads(), ["FM08", "FM09"], "FM09 asked once, FM08 from the cache");
  const boj = (refused.structuredContent as { sources: (Source & { status: string })[] }).sources
    .find((x) => x.id === "boj")!;
  assert.equal(boj.status, "ok");
  assert.doesNotMatch((refused.content as { text: string }[])[0]!.text, /failed/);

  // An empty query is a validation error naming the field, and asks the upstream nothing.
  const empty = await s.client.callTool({
    name: "opendata_search",
    arguments: { query: "", sources: ["boj"] },
  });
  assert.equal(empty.isError, true);
  assert.match((empty.content as { text: string }[])[0]!.text, /query/);
  assert.deepEqual(reads(), ["FM08", "FM09"]);
});

Deno.test("opendata_search reads no BOJ series list whose database's names say every word of the query", async () => {
  await using upstreams = startRecordedUpstreams();
  await using s = await startInProcess({
    args: ["--providers", "boj"],
    env: { OPENDATA_MCP_TOOLSETS: "" },
    configYaml: upstreams.configYaml,
  });
  const r = await s.client.callTool({
    name: "opendata_search",
    arguments: { query: "foreign exchange", sources: ["boj"] },
  });
  assert.equal(r.isError, undefined, JSON.stringify(r.content));
  const hits = (r.structuredContent as { sources: Source[] }).sources.find((x) => x.id === "boj")?.hits ?? [];
  // FM08 ("Foreign exchange rates") is the catalogue's database hit; no series name could narrow it.
  assert.ok(hits.some((h) => h.title.startsWith("FM08")), JSON.stringify(hits.map((h) => h.title)));
  const reads = upstreams.main.requestsTo("/api/v1/getMetadata").map((q) => q.url.searchParams.get("db"));
  assert.ok(!reads.includes("FM08"), `FM08's series list was read: ${reads}`);
});
