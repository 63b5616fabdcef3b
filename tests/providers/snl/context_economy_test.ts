// What SNL costs an agent's context (docs/TOOLS.md): the toolset and lean schemas, output: "file" on
// snl-search (ten per request, page after page up to the cap, then continued from where it stopped) and
// snl-article (the whole article with every link), and the opendata_search source whose `next` call works as
// given.
import assert from "node:assert/strict";
import { bodyToText } from "../../../lib/providers/snl/parse.ts";
import { openProvider, preset, withProvider } from "../../harness/provider.ts";
import { FakeUpstream, fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply, Route } from "../../fakes/upstream.ts";
import { errorOf, ok, texts } from "../../harness/results.ts";
import { assertLean, providerFor, readLinked, searchContext } from "../_norway.ts";

const ARTICLE = "snl/article_fortolket_programmeringsspraak.json";
const TOTAL = 37;

/** Synthetic hits "Treff 0" .. "Treff 36" for "treff", paged by limit and offset like the SNL API. */
function searchPage(r: Received): Reply {
  const q = r.url.searchParams;
  if (q.get("query") !== "treff") {
    return { fixture: "snl/synthetic_search_programmering_first_sentences.json" };
  }
  const offset = Number(q.get("offset") ?? 0);
  const limit = Number(q.get("limit") ?? 10);
  const hits = [];
  for (let i = offset; i < Math.min(offset + limit, TOTAL); i++) {
    hits.push({
      article_id: 990_100 + i,
      headword: `Treff ${i}`,
      title: `Treff ${i}`,
      permalink: `Treff_${i}`,
      article_url: `https://snl.no/Treff_${i}`,
      license: i % 2 ? "begrenset" : "fri",
      first_sentences: `Syntetisk treff ${i}.`,
    });
  }
  return { json: hits };
}

function snlRoutes(): Route[] {
  return [
    { path: "/api/v1/search", reply: searchPage },
    { path: "/fortolket_programmeringsspr%C3%A5k.json", reply: { fixture: ARTICLE } },
  ];
}

/** The snl provider against its fake, in process (`spawn: true`: the real process). */
const snl = preset({
  provider: "snl",
  routes: snlRoutes(),
  server: { character_limit: 3000 },
  settings: { max_retries: 0, cache_ttl: 0, file_max_results: 20 },
});

Deno.test("snl tools belong to the snl toolset and keep the strict-client rules within budget", async () => {
  await assertLean("snl", "snl", { tokens: 600, chars: 4000 });
});

Deno.test("snl-search output file pages ten at a time to the cap, and a second call writes the rest", async () => {
  await withProvider(snl(), async (s, f) => {
    const first = await s.client.callTool({
      name: "snl-search",
      arguments: { query: "treff", limit: 3, output: "file" },
    });
    const data = ok(first);
    assert.equal((data["results"] as unknown[]).length, 3);
    assert.deepEqual(
      [
        (data["file"] as Record<string, unknown>)["rows"],
        (data["file"] as Record<string, unknown>)["complete"],
      ],
      [20, false],
    );
    assert.match(texts(first)[0]!, /Partial: .*call again with offset=20 and output "file"/);
    assert.deepEqual(
      f.requests.map((r) => [r.url.searchParams.get("offset"), r.url.searchParams.get("limit")]),
      [["0", "10"], ["10", "10"]],
    );
    const csv = (await readLinked(s.client, first)).text.trim().split(/\r?\n/);
    assert.match(csv[0]!, /^rank,title,headword,clarification,slug,url,license_name,first_sentences,/);
    assert.equal(csv.length, 21);
    assert.match(csv[20]!, /^20,Treff 19,/);

    const rest = await s.client.callTool({
      name: "snl-search",
      arguments: { query: "treff", offset: 20, output: "file", response_format: "json" },
    });
    const file = ok(rest)["file"] as Record<string, unknown>;
    assert.deepEqual([file["rows"], file["complete"]], [17, true]);
    const json = JSON.parse((await readLinked(s.client, rest)).text);
    assert.equal(json.results.at(-1).title, "Treff 36");
    assert.deepEqual(
      json.results.slice(-2).map((h: Record<string, unknown>) => h["license_name"]),
      ["begrenset", "fri"],
      "every row keeps its own licence",
    );
  });
});

Deno.test("snl-article output file holds the whole text and every link; a file needs a server", async () => {
  await withProvider(snl(), async (s) => {
    const r = await s.client.callTool({
      name: "snl-article",
      arguments: { slug: "fortolket_programmeringsspråk", output: "file" },
    });
    const data = ok(r);
    const body = bodyToText(JSON.parse(fixtureText(ARTICLE)).xhtml_body);
    assert.equal(data["total"], body.text.length);
    const md = (await readLinked(s.client, r)).text;
    assert.ok(md.startsWith("# fortolket programmeringsspråk\n"));
    assert.ok(md.includes(body.text), "the file holds every character of the text");
    for (const link of body.links) assert.ok(md.includes(link.text), `link "${link.text}" is in the file`);
    assert.match(md, /Licence: fri = CC BY-SA 3\.0/);
    const bad = errorOf(
      await s.client.callTool({ name: "snl-article", arguments: { slug: "x", output: "files" } }),
    );
    assert.equal(bad["field"], "output");
  });
});

Deno.test("snl search source: hits from snl.no, each next call works as given", async () => {
  await using f = FakeUpstream.start(snlRoutes());
  const provider = await providerFor("snl", { base_url: f.origin, cache_ttl: 0, max_retries: 0 });
  const hits = await provider.search!.search("programmering", { limit: 2 }, searchContext());
  assert.equal(hits.length, 2);
  assert.deepEqual(hits[0]!.next, {
    tool: "snl-article",
    arguments: { slug: "fortolket_programmeringsspråk" },
  });
  assert.match(hits[0]!.snippet!, /^Syntetisk: et programmeringsspråk/);
  assert.equal(hits[0]!.url, "https://snl.no/fortolket_programmeringsspr%C3%A5k");
  assert.equal(f.requests.at(-1)!.url.searchParams.get("limit"), "2");
  await provider.close?.();

  await using s = await openProvider({ provider: "snl", fake: f, settings: { cache_ttl: 0 } });
  const article = ok(
    await s.client.callTool({ name: hits[0]!.next.tool, arguments: hits[0]!.next.arguments }),
  );
  assert.equal(article["title"], "fortolket programmeringsspråk");
  assert.equal(article["license_name"], "fri");
});
