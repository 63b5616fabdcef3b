// What Wikipedia costs an agent's context (docs/TOOLS.md): the toolset and lean schemas, output: "file" on
// the data tools (whole results, page after page up to the cap, continued from where a partial file stopped),
// and the opendata_search source whose `next` call works as given. Against a fake MediaWiki API that pages
// synthetic search hits like CirrusSearch (`continue.sroffset`).
import assert from "node:assert/strict";
import { openProvider, preset, withProvider } from "../../harness/provider.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply, Route } from "../../fakes/upstream.ts";
import { errorOf, ok, texts } from "../../harness/results.ts";
import { assertLean, providerFor, readLinked, searchContext } from "../_norway.ts";
import { articleText } from "../../../lib/providers/wikipedia/article_text.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const TOTAL_HITS = 700;
const param = (r: Received, name: string) => r.url.searchParams.get(name);

/** A `list=search` page of synthetic hits "Treff 0" .. "Treff 699", as CirrusSearch pages them. */
function searchPage(r: Received): Reply {
  const offset = Number(param(r, "sroffset") ?? 0);
  const limit = Number(param(r, "srlimit") ?? 10);
  const end = Math.min(offset + limit, TOTAL_HITS);
  const search = [];
  for (let i = offset; i < end; i++) {
    search.push({
      ns: 0,
      title: `Treff ${i}`,
      pageid: 990_000 + i,
      size: 1000 + i,
      wordcount: 100 + i,
      snippet: `Syntetisk <span class="searchmatch">treff</span> ${i}`,
      timestamp: "2026-10-01T12:00:00Z",
    });
  }
  return {
    json: {
      batchcomplete: true,
      ...(end < TOTAL_HITS ? { continue: { sroffset: end, continue: "-||" } } : {}),
      query: { searchinfo: { totalhits: TOTAL_HITS }, search },
    },
  };
}

function wikiRoutes(): Route[] {
  const api = "/w/api.php";
  return [
    { path: api, match: (r) => param(r, "list") === "search", reply: searchPage },
    {
      path: api,
      match: (r) => param(r, "list") === "geosearch",
      reply: { fixture: "wikipedia/geosearch_en_capecod_formatversion1.json" },
    },
    {
      path: api,
      match: (r) => param(r, "titles") === "Oslo",
      reply: { fixture: "wikipedia/synthetic_content_oslo_fv2.json" },
    },
    {
      path: api,
      match: (r) => (param(r, "titles") ?? "").startsWith("Treff "),
      reply: { fixture: "wikipedia/synthetic_summary_christiania_redirect_fv2.json" },
    },
  ];
}

/** The wikipedia provider against its fake, in process (`spawn: true`: the real process). */
const wikipedia = preset({
  provider: "wikipedia",
  routes: wikiRoutes(),
  server: { character_limit: 6000 },
  settings: { max_retries: 0, cache_ttl: 0, file_max_results: 600 },
});

Deno.test("wikipedia tools belong to the wikipedia toolset and keep the strict-client rules within budget", async () => {
  await assertLean("wikipedia", "wikipedia", { tokens: 900, chars: 6500 });
});

Deno.test("wikipedia-search output file follows pages to the cap, says where to go on, and the rest ends it", async () => {
  await withProvider(wikipedia(), async (s, f) => {
    const first = await s.client.callTool({
      name: "wikipedia-search",
      arguments: { query: "treff", limit: 5, output: "file" },
    });
    const data = ok(first);
    assert.equal((data["results"] as unknown[]).length, 5, "the answer previews limit results");
    const file = data["file"] as Record<string, unknown>;
    assert.equal(file["rows"], 600);
    assert.equal(file["complete"], false);
    assert.match(texts(first)[0]!, /Partial: .*file_max_results.*offset=600 and output "file"/);
    const searches = f.requests.filter((r) => param(r, "list") === "search");
    assert.deepEqual(
      searches.map((r) => [param(r, "sroffset"), param(r, "srlimit")]),
      [["0", "500"], ["500", "100"]],
      "500 per request, then what the cap leaves",
    );
    const csv = await readLinked(s.client, first);
    const lines = csv.text.trim().split(/\r?\n/);
    assert.equal(lines[0], "rank,title,pageid,url,snippet,wordcount,size,timestamp");
    assert.equal(lines.length, 601);
    assert.match(lines[600]!, /^600,Treff 599,/);
    assert.match(lines[1]!, /Syntetisk treff 0/, "snippets are plain text");

    const rest = ok(
      await s.client.callTool({
        name: "wikipedia-search",
        arguments: { query: "treff", offset: 600, output: "file", response_format: "json" },
      }),
    );
    const restFile = rest["file"] as Record<string, unknown>;
    assert.deepEqual([restFile["rows"], restFile["complete"], restFile["format"]], [100, true, "json"]);
    const json = JSON.parse(
      await readLinked(
        s.client,
        await s.client.callTool({
          name: "wikipedia-search",
          arguments: { query: "treff", offset: 600, output: "file", response_format: "json" },
        }),
      ).then((r) => r.text),
    );
    assert.equal(json.results.length, 100);
    assert.equal(json.results[99].title, "Treff 699");
    assert.equal(json.source.license, "CC BY-SA 4.0");
  });
});

Deno.test("wikipedia-content output file holds the whole article as markdown; the answer previews it", async () => {
  await withProvider(wikipedia(), async (s) => {
    const r = await s.client.callTool({
      name: "wikipedia-content",
      arguments: { title: "Oslo", output: "file" },
    });
    const data = ok(r);
    const whole = articleText(
      JSON.parse(fixtureText("wikipedia/synthetic_content_oslo_fv2.json")).query.pages[0].extract,
    ).text;
    assert.ok((data["count"] as number) <= 2000, "a preview, not the whole text");
    assert.equal(data["has_more"], true);
    const md = await readLinked(s.client, r);
    assert.ok(md.uri.startsWith("opendata://files/wikipedia/"));
    assert.ok(md.text.startsWith("# Oslo\n"));
    assert.ok(md.text.includes(whole), "the file holds every character of the article");
    assert.match(md.text, /CC BY-SA 4\.0/);
    assert.match(texts(r)[0]!, /File: The whole article \(\d[\d,]* characters\) written to opendata:/);
  });
});

Deno.test("wikipedia-geosearch output file writes every article found; a bad output value is refused", async () => {
  await withProvider(wikipedia(), async (s, f) => {
    const r = await s.client.callTool({
      name: "wikipedia-geosearch",
      arguments: { lat: 41.68, lon: -70.19, radius_m: 10_000, output: "file" },
    });
    const data = ok(r);
    assert.equal(param(f.requests.at(-1)!, "gslimit"), "500", "a file asks for the most the API gives");
    const csv = await readLinked(s.client, r);
    const rows = csv.text.trim().split(/\r?\n/);
    assert.equal(rows[0], "title,pageid,url,lat,lon,distance_m");
    assert.equal(rows.length - 1, data["total"]);
    const bad = errorOf(
      await s.client.callTool({ name: "wikipedia-geosearch", arguments: { lat: 1, lon: 1, output: "disk" } }),
    );
    assert.equal(bad["error_type"], "VALIDATION_ERROR");
    assert.equal(bad["field"], "output");
  });
});

Deno.test("wikipedia search source: hits from the default edition, each next call works as given", async () => {
  await using f = FakeUpstream.start(wikiRoutes());
  const provider = await providerFor("wikipedia", { base_url: f.origin, cache_ttl: 0, max_retries: 0 });
  const hits = await provider.search!.search("treff", { limit: 3 }, searchContext());
  assert.equal(hits.length, 3);
  assert.deepEqual(hits[0]!.next, {
    tool: "wikipedia-summary",
    arguments: { title: "Treff 0", language: "no" },
  });
  assert.equal(hits[0]!.snippet, "Syntetisk treff 0");
  assert.equal(hits[0]!.date, "2026-10-01T12:00:00Z");
  assert.match(hits[0]!.url!, /\/wiki\/Treff_0$/);
  assert.equal(param(f.requests.at(-1)!, "srlimit"), "3", "one request for the hits asked for");
  await provider.close?.();

  await using s = await openProvider({ provider: "wikipedia", fake: f, settings: { cache_ttl: 0 } });
  const { tool, arguments: args } = hits[0]!.next;
  const summary = ok(await s.client.callTool({ name: tool, arguments: args }));
  assert.equal(summary["title"], "Oslo");
});
