// The four Wikipedia tools end to end: the real server in process (the search test spawns the real
// process as the provider's smoke test, and the allowlist tests run the CLI), the SDK Client
// (which checks structuredContent against each outputSchema), and a fake MediaWiki API serving
// recorded and synthetic bodies (tests/fixtures/wikipedia/README.md).
import assert from "node:assert/strict";
import { articleText } from "../../../lib/providers/wikipedia/article_text.ts";
import { runCli } from "../../harness/spawn.ts";
import { preset, withProvider } from "../../harness/provider.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import type { Received, Route } from "../../fakes/upstream.ts";
import { errorOf as errorPayload, ok, providerTools, texts } from "../../harness/results.ts";
import type { ToolResult } from "../../harness/results.ts";

type Result = ToolResult;

const param = (r: Received, name: string) => r.url.searchParams.get(name);

function wikiRoutes(): Route[] {
  const api = "/w/api.php";
  const titles = (t: string) => (r: Received) => param(r, "titles") === t && param(r, "prop") !== "links";
  return [
    {
      path: api,
      match: (r) => param(r, "list") === "search" && param(r, "srsearch") === "meaning",
      reply: { fixture: "wikipedia/search_en_meaning_formatversion1.json" },
    },
    {
      path: api,
      match: (r) => param(r, "list") === "search" && param(r, "srsearch") === "ingenting",
      reply: { fixture: "wikipedia/synthetic_search_no_hits_fv2.json" },
    },
    {
      path: api,
      match: (r) => param(r, "list") === "geosearch" && param(r, "gscoord") === "0|0",
      reply: { fixture: "wikipedia/synthetic_error_invalid_coord.json" },
    },
    {
      path: api,
      match: (r) => param(r, "list") === "geosearch" && param(r, "gscoord") === "1|1",
      reply: { json: { batchcomplete: true, query: { geosearch: [] } } },
    },
    {
      path: api,
      match: (r) => param(r, "list") === "geosearch",
      reply: { fixture: "wikipedia/geosearch_en_capecod_formatversion1.json" },
    },
    {
      path: api,
      match: titles("Christiania"),
      reply: { fixture: "wikipedia/synthetic_summary_christiania_redirect_fv2.json" },
    },
    {
      path: api,
      match: titles("merkur"),
      reply: { fixture: "wikipedia/synthetic_summary_merkur_disambiguation_fv2.json" },
    },
    {
      path: api,
      match: (r) => param(r, "prop") === "links" && param(r, "titles") === "Merkur",
      reply: { fixture: "wikipedia/synthetic_links_merkur_fv2.json" },
    },
    { path: api, match: titles("Finnes ikke"), reply: { fixture: "wikipedia/synthetic_missing_fv2.json" } },
    {
      path: api,
      match: titles("Gammel mangler"),
      reply: { fixture: "wikipedia/synthetic_missing_fv1.json" },
    },
    {
      path: api,
      match: titles("Borte"),
      reply: { fixture: "wikipedia/error_missingtitle_wikipedia_old_servedby.json" },
    },
    { path: api, match: titles("Oslo"), reply: { fixture: "wikipedia/synthetic_content_oslo_fv2.json" } },
    {
      path: api,
      match: titles("Etterslep"),
      reply: [
        { fixture: "wikipedia/synthetic_maxlag_error.json", headers: { "retry-after": "0" } },
        { fixture: "wikipedia/synthetic_summary_christiania_redirect_fv2.json" },
      ],
    },
    {
      path: api,
      match: titles("Treg"),
      reply: { fixture: "wikipedia/synthetic_maxlag_error.json", headers: { "retry-after": "120" } },
    },
    {
      path: api,
      match: titles("Nede"),
      reply: { status: 503, body: "Service Unavailable", contentType: "text/plain" },
    },
    {
      path: api,
      match: titles("Omdirigert"),
      reply: (r) => ({ status: 302, headers: { location: `http://localhost:${r.url.port}/w/api.php` } }),
    },
    {
      path: api,
      match: titles("Vedlikehold"),
      reply: { body: "<!DOCTYPE html><html><body>Wikimedia Error</body></html>", contentType: "text/html" },
    },
  ];
}

/** The wikipedia provider against its fake, in process (`spawn: true`: the real process). */
const wikipedia = preset({
  provider: "wikipedia",
  routes: wikiRoutes(),
  server: { character_limit: 4000 },
  settings: { max_retries: 1 },
});

Deno.test("wikipedia tools are listed with annotations, output schemas and the default language", async () => {
  await withProvider(wikipedia(), async (s) => {
    const tools = providerTools((await s.client.listTools()).tools);
    assert.deepEqual(tools.map((t) => t.name), [
      "wikipedia-search",
      "wikipedia-summary",
      "wikipedia-geosearch",
      "wikipedia-content",
    ]);
    for (const t of tools) {
      assert.equal(t.annotations?.readOnlyHint, true, t.name);
      assert.equal(t.annotations?.openWorldHint, true, t.name);
      assert.equal(t.annotations?.destructiveHint, false, t.name);
      assert.ok(t.outputSchema, `${t.name} declares an outputSchema`);
      const language = (t.inputSchema.properties as Record<string, { description: string }>)["language"]!;
      assert.match(language.description, /default "no"/);
    }
  });
});

Deno.test("wikipedia-search returns cleaned hits, the paging envelope and the licence in both formats", async () => {
  await withProvider(wikipedia({ spawn: true }), async (s, fake) => {
    const md = await s.client.callTool({
      name: "wikipedia-search",
      arguments: { query: "meaning", limit: 2 },
    });
    const data = ok(md);
    const results = data["results"] as Record<string, unknown>[];
    assert.equal(results.length, 2);
    assert.equal(results[0]!["title"], "Meaning");
    assert.equal(results[0]!["url"], `${fake.origin}/wiki/Meaning`);
    assert.equal(results[1]!["url"], `${fake.origin}/wiki/The_Meaning_of_Meaning`);
    assert.doesNotMatch(String(results[0]!["snippet"]), /<span|searchmatch/);
    assert.match(String(results[0]!["snippet"]), /^Meaning most commonly refers to/);
    assert.deepEqual(
      [data["total"], data["count"], data["offset"], data["has_more"], data["next_offset"]],
      [232618, 2, 0, true, 2],
    );
    assert.equal(data["suggestion"], "mening");
    const source = data["source"] as Record<string, string>;
    assert.equal(source["license"], "CC BY-SA 4.0");
    assert.match(source["url"]!, /\/w\/api\.php\?/);
    const text = texts(md)[0]!;
    assert.match(text, /232,618 matches/);
    // The next page and each hit's record are ready calls in the text, not prose.
    assert.match(text, /next page: wikipedia-search \{"query":"meaning","limit":2,"offset":2\}/);
    assert.match(text, /summary of "Meaning": wikipedia-summary \{"title":"Meaning","language":"no"\}/);
    assert.doesNotMatch(text, /call again with offset/);
    assert.match(text, /CC BY-SA 4\.0/);

    const sent = fake.requestsTo("/w/api.php")[0]!;
    assert.equal(param(sent, "srsearch"), "meaning");
    assert.equal(param(sent, "srlimit"), "2");
    assert.equal(param(sent, "format"), "json");
    assert.equal(param(sent, "formatversion"), "2");
    assert.equal(param(sent, "maxlag"), "5");
    assert.match(sent.headers.get("user-agent") ?? "", /^opendata-mcp\/\S+ \(\+https?:\/\//);

    const json = await s.client.callTool({
      name: "wikipedia-search",
      arguments: { query: "meaning", limit: 2, response_format: "json" },
    });
    assert.deepEqual(JSON.parse(texts(json)[0]!), json.structuredContent);

    const none = await s.client.callTool({ name: "wikipedia-search", arguments: { query: "ingenting" } });
    const empty = ok(none);
    assert.deepEqual([empty["count"], empty["has_more"], empty["next_offset"]], [0, false, null]);
    assert.match(texts(none)[0]!, /No articles matched/);
  });
});

Deno.test("wikipedia tools refuse hostile or malformed language codes before any request", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const hostile = [
      "en.evil.example",
      "evil.example#",
      "x@evil.example",
      "en:8443",
      "en/../../x",
      "EN",
      "%65n",
      "en ",
      "",
      "www",
      "a".repeat(40),
    ];
    for (const language of hostile) {
      for (
        const [name, args] of [
          ["wikipedia-search", { query: "x", language }],
          ["wikipedia-summary", { title: "x", language }],
          ["wikipedia-geosearch", { lat: 59.9, lon: 10.7, language }],
          ["wikipedia-content", { title: "x", language }],
        ] as const
      ) {
        const r = await s.client.callTool({ name, arguments: args });
        const p = errorPayload(r);
        assert.equal(p["error_type"], "VALIDATION_ERROR", `${name} ${JSON.stringify(language)}`);
        assert.equal(p["field"], "language");
      }
    }
    assert.equal(fake.requests.length, 0, "no request left the server");
  });
});

Deno.test("wikipedia tools reject each out-of-range argument with a VALIDATION_ERROR naming it", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const cases: [string, Record<string, unknown>, string, RegExp?][] = [
      ["wikipedia-search", { query: "x", limit: 0 }, "limit"],
      ["wikipedia-search", { query: "x", limit: 51 }, "limit"],
      ["wikipedia-search", { query: "x", offset: -1 }, "offset"],
      ["wikipedia-search", { query: "" }, "query"],
      ["wikipedia-search", { query: "x".repeat(301) }, "query"],
      ["wikipedia-summary", { title: "Oslo|Bergen" }, "title"],
      ["wikipedia-summary", { title: "Oslo", sentences: 11 }, "sentences"],
      ["wikipedia-summary", { title: "Oslo", chars: 1201 }, "chars"],
      ["wikipedia-summary", { title: "Oslo", sentences: 2, chars: 100 }, "chars", /not both/],
      ["wikipedia-geosearch", { lat: 91, lon: 0 }, "lat"],
      ["wikipedia-geosearch", { lat: 0, lon: 181 }, "lon"],
      ["wikipedia-geosearch", { lat: 59.9, lon: 10.7, radius_m: 10_001 }, "radius_m", /at most 10000 metres/],
      ["wikipedia-geosearch", { lat: 59.9, lon: 10.7, radius_m: 9 }, "radius_m", /at least 10 metres/],
      ["wikipedia-geosearch", { lat: 59.9, lon: 10.7, limit: 501 }, "limit"],
      ["wikipedia-content", { title: "Oslo", max_chars: 10 }, "max_chars"],
      ["wikipedia-content", { title: "Oslo", section: -1 }, "section"],
      // A lone surrogate is not valid Unicode, and encodeURIComponent throws on it.
      ["wikipedia-summary", { title: "a\udfffb" }, "title", /lone surrogate/],
      ["wikipedia-content", { title: "\ud800" }, "title", /lone surrogate/],
      ["wikipedia-search", { query: "a\udfffb" }, "query", /lone surrogate/],
    ];
    for (const [name, args, field, message] of cases) {
      const p = errorPayload(await s.client.callTool({ name, arguments: args }));
      assert.equal(p["error_type"], "VALIDATION_ERROR", `${name} ${JSON.stringify(args)}`);
      assert.equal(p["field"], field, `${name} ${JSON.stringify(args)}`);
      if (message) assert.match(String(p["message"]), message);
    }
    const unknown = errorPayload(
      await s.client.callTool({ name: "wikipedia-search", arguments: { query: "x", surprise: 1 } }),
    );
    assert.equal(unknown["error_type"], "VALIDATION_ERROR");
    assert.match(String(unknown["message"]), /"surprise"/);
    assert.equal(fake.requests.length, 0);
  });
});

Deno.test("wikipedia-summary follows a redirect and reports it, with coordinates, Wikidata id and credit", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const r = await s.client.callTool({
      name: "wikipedia-summary",
      arguments: { title: "Christiania", sentences: 2 },
    });
    const data = ok(r);
    assert.equal(data["title"], "Oslo");
    assert.equal(data["redirected_from"], "Christiania");
    assert.equal(data["url"], "https://no.wikipedia.org/wiki/Oslo");
    assert.equal(data["history_url"], `${fake.origin}/w/index.php?title=Oslo&action=history`);
    assert.deepEqual(data["coordinates"], { lat: 59.9133, lon: 10.7389 });
    assert.equal(data["wikidata_id"], "Q585");
    assert.equal(data["description"], "hovedstad i Norge (syntetisk)");
    assert.equal(data["is_disambiguation"], false);
    assert.equal(data["revision_id"], 24000001);
    const provenance = data["provenance"] as Record<string, unknown>;
    assert.equal(
      provenance["permalink"],
      "https://no.wikipedia.org/w/index.php?oldid=24000001",
      "the revision read",
    );
    assert.match(String(provenance["as_of"]), /^revision 24000001/);
    assert.match(String(provenance["licence"]), /CC BY-SA 4\.0/);
    assert.match(String(data["extract"]), /^Oslo er hovedstaden i Norge\./);
    const text = texts(r)[0]!;
    assert.match(text, /redirected from "Christiania"/);
    assert.match(text, /Licence: CC BY-SA 4\.0/);
    const sent = fake.requestsTo("/w/api.php")[0]!;
    assert.equal(param(sent, "redirects"), "1");
    assert.equal(param(sent, "explaintext"), "1");
    assert.equal(param(sent, "exintro"), "1");
    assert.equal(param(sent, "exsentences"), "2");
    assert.equal(param(sent, "exchars"), null, "only one of exsentences and exchars is sent");

    const json = await s.client.callTool({
      name: "wikipedia-summary",
      arguments: { title: "Christiania", chars: 300, response_format: "json" },
    });
    assert.deepEqual(JSON.parse(texts(json)[0]!), json.structuredContent);
    assert.equal(param(fake.requestsTo("/w/api.php")[1]!, "exchars"), "300");
  });
});

Deno.test("wikipedia-summary says when a title is a disambiguation page and lists its options", async () => {
  await withProvider(wikipedia(), async (s) => {
    const r = await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "merkur" } });
    const data = ok(r);
    assert.equal(data["is_disambiguation"], true);
    assert.equal(data["normalized_from"], "merkur");
    assert.equal(data["title"], "Merkur");
    const options = data["disambiguation_options"] as { title: string; url: string }[];
    assert.deepEqual(options.map((o) => o.title), [
      "Merkur (planet)",
      "Merkur (mytologi)",
      "Merkur (grunnstoff)",
    ]);
    assert.match(options[0]!.url, /\/wiki\/Merkur_\(planet\)$/);
    const text = texts(r)[0]!;
    assert.match(text, /"Merkur" is a disambiguation page/);
    assert.match(text, /- Merkur \(mytologi\)/);
  });
});

Deno.test("wikipedia-summary still answers a disambiguation page whose list of articles cannot be fetched", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const links = (r: Received) => param(r, "prop") === "links";
    // Two 503s (max_retries 1), then a body that is no API answer at all.
    fake.route({
      path: "/w/api.php",
      match: links,
      reply: (_r, count) => count < 2 ? { status: 503, body: "Service Unavailable" } : { json: null },
    });
    for (const cause of [/HTTP 503/, /DECODE_ERROR: .*unexpected shape/]) {
      const r = await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "merkur" } });
      const data = ok(r);
      assert.equal(data["is_disambiguation"], true);
      assert.equal(data["title"], "Merkur");
      assert.match(String(data["extract"]), /Merkur kan vise til/);
      assert.deepEqual(data["disambiguation_options"], []);
      assert.match(String(data["disambiguation_options_error"]), cause);
      const text = texts(r)[0]!;
      assert.match(text, /"Merkur" is a disambiguation page/);
      assert.match(text, /The list of articles this page points to could not be fetched/);
      assert.match(text, /wikipedia-content \(title "Merkur"\)/);
    }
    assert.equal(fake.requests.filter(links).length, 3);

    // A hundred long options do not fit a 4,000-character result: the list is cut, and says so.
    const many = Array.from(
      { length: 100 },
      (_, i) => ({ ns: 0, title: `Merkur (betydning ${i}) ${"x".repeat(60)}` }),
    );
    fake.route({
      path: "/w/api.php",
      match: links,
      reply: {
        json: { batchcomplete: true, query: { pages: [{ pageid: 990002, title: "Merkur", links: many }] } },
      },
    });
    for (const format of ["markdown", "json"]) {
      const r = await s.client.callTool({
        name: "wikipedia-summary",
        arguments: { title: "merkur", response_format: format },
      });
      const data = ok(r);
      assert.ok(texts(r)[0]!.length <= 4000, `${format}: text ${texts(r)[0]!.length}`);
      assert.ok(JSON.stringify(data).length <= 4000, `${format}: structured ${JSON.stringify(data).length}`);
      const shown = (data["disambiguation_options"] as unknown[]).length;
      assert.ok(shown > 5 && shown < 100, `${shown} options shown`);
      assert.equal(data["disambiguation_options_more"], true);
      assert.equal(data["disambiguation_options_error"], null);
      if (format === "markdown") {
        assert.match(texts(r)[0]!, /more on the page: read them all with wikipedia-content/);
      }
    }
  });
});

Deno.test("wikipedia tools answer DECODE_ERROR for bodies that are not API answers, API_ERROR for an error string", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const bodies: unknown[] = [null, [], "text", { batchcomplete: true }, { query: "x" }, {
      query: { search: "x", geosearch: 5, pages: "x" },
    }, { query: { search: [1, 2], geosearch: [{}], pages: [null, 3] } }];
    let current: unknown = null;
    fake.route({
      path: "/w/api.php",
      match: (r) =>
        /^søppel/.test(param(r, "srsearch") ?? "") || /^Søppel/.test(param(r, "titles") ?? "") ||
        /^1\|/.test(param(r, "gscoord") ?? ""),
      reply: () => ({ json: current }),
    });
    // Each body gets its own request URL, so what one case leaves in the cache cannot answer the next.
    let round = 0;
    const calls = () =>
      [
        ["wikipedia-search", { query: `søppel ${round}` }],
        ["wikipedia-summary", { title: `Søppel ${round}` }],
        ["wikipedia-content", { title: `Søppel ${round}` }],
        ["wikipedia-geosearch", { lat: 1, lon: round }],
      ] as const;
    for (const body of bodies) {
      current = body;
      round++;
      for (const [name, args] of calls()) {
        const p = errorPayload(await s.client.callTool({ name, arguments: args }));
        assert.equal(p["error_type"], "DECODE_ERROR", `${name} on ${JSON.stringify(body)}: ${p["message"]}`);
        assert.equal(p["retryable"], false);
        assert.match(String(p["message"]), /unexpected shape/);
      }
    }
    // An error object (or a bare error string) inside HTTP 200 is an error with the upstream's words.
    current = { error: "Search is temporarily disabled" };
    round++;
    for (const [name, args] of calls()) {
      const p = errorPayload(await s.client.callTool({ name, arguments: args }));
      assert.equal(p["error_type"], "API_ERROR", name);
      assert.match(String(p["message"]), /Search is temporarily disabled/);
    }
    current = { error: { code: "internal_api_error_DBQueryError", info: "Database query error" } };
    const p = errorPayload(
      await s.client.callTool({ name: "wikipedia-search", arguments: { query: "søppel x" } }),
    );
    assert.deepEqual([p["error_type"], p["retryable"], p["message_id"]], [
      "API_ERROR",
      true,
      "internal_api_error_DBQueryError",
    ]);
    assert.match(String(p["message"]), /Database query error/);
  });
});

Deno.test("wikipedia-summary and wikipedia-content report a missing page as NOT_FOUND in both API formats", async () => {
  await withProvider(wikipedia(), async (s) => {
    for (
      const [name, title] of [
        ["wikipedia-summary", "Finnes ikke"],
        ["wikipedia-summary", "Gammel mangler"],
        ["wikipedia-content", "Finnes ikke"],
        ["wikipedia-content", "Borte"],
      ] as const
    ) {
      const p = errorPayload(await s.client.callTool({ name, arguments: { title } }));
      assert.equal(p["error_type"], "NOT_FOUND", `${name} ${title}`);
      assert.equal(p["message_id"], "missingtitle");
      assert.equal(p["retryable"], false);
      assert.match(String(p["hint"]), /wikipedia-search/);
    }
  });
});

Deno.test("wikipedia-geosearch returns nearby articles nearest first and maps an API error", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const r = await s.client.callTool({
      name: "wikipedia-geosearch",
      arguments: { lat: 41.68, lon: -70.19, radius_m: 10_000, limit: 10, language: "en" },
    });
    const data = ok(r);
    const results = data["results"] as Record<string, unknown>[];
    assert.equal(results.length, 10);
    assert.deepEqual(results[0], {
      title: "Cape Cod",
      pageid: 38743,
      url: `${fake.origin}/wiki/Cape_Cod`,
      lat: 41.68,
      lon: -70.2,
      distance_m: 432.1,
    });
    assert.equal(data["limit_reached"], true);
    assert.equal(data["has_more"], false);
    assert.equal(data["language"], "en");
    const sent = fake.requestsTo("/w/api.php")[0]!;
    assert.equal(param(sent, "gscoord"), "41.68|-70.19");
    assert.equal(param(sent, "gsradius"), "10000");
    assert.equal(param(sent, "gslimit"), "10");
    assert.match(texts(r)[0]!, /1\. \*\*Cape Cod\*\*: 432 m/);
    assert.match(texts(r)[0]!, /The limit of 10 was reached/);

    const json = await s.client.callTool({
      name: "wikipedia-geosearch",
      arguments: { lat: 41.68, lon: -70.19, limit: 20, response_format: "json" },
    });
    assert.deepEqual(JSON.parse(texts(json)[0]!), json.structuredContent);
    assert.equal((json.structuredContent as Record<string, unknown>)["limit_reached"], false);

    const bad = errorPayload(
      await s.client.callTool({ name: "wikipedia-geosearch", arguments: { lat: 0, lon: 0 } }),
    );
    assert.equal(bad["error_type"], "VALIDATION_ERROR");
    assert.equal(bad["message_id"], "invalid-coord");
  });
});

Deno.test("wikipedia-content delivers a long article in parts that fit the limit and lose nothing", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const extract =
      JSON.parse(fixtureText("wikipedia/synthetic_content_oslo_fv2.json")).query.pages[0].extract;
    const whole = articleText(extract).text;
    const parts: string[] = [];
    let offset: number | undefined = undefined;
    let first: Record<string, unknown> | undefined;
    for (let i = 0; i < 20; i++) {
      const r: Result = await s.client.callTool({
        name: "wikipedia-content",
        arguments: offset === undefined ? { title: "Oslo" } : { title: "Oslo", offset },
      });
      const data = ok(r);
      first ??= data;
      assert.ok(texts(r)[0]!.length <= 4000, `part ${i} text is within the limit`);
      assert.ok(JSON.stringify(data).length <= 4000, `part ${i} structured is within the limit`);
      assert.equal(data["offset"], offset ?? 0);
      assert.equal(data["total"], whole.length);
      parts.push(String(data["text"]));
      if (!data["has_more"]) {
        assert.equal(data["next_offset"], null);
        assert.match(texts(r)[0]!, /End of the article/);
        break;
      }
      assert.match(texts(r)[0]!, new RegExp(`offset=${data["next_offset"]}`));
      offset = data["next_offset"] as number;
    }
    assert.ok(parts.length >= 3, `the article came in ${parts.length} parts`);
    assert.equal(parts.join(""), whole, "the parts join up to the whole text");
    assert.equal(fake.requestsTo("/w/api.php").length, 1, "later parts come from the cache");
    const sections = first!["sections"] as { index: number; title: string; offset: number }[];
    assert.deepEqual(sections.map((x) => x.title), [
      "(lead)",
      "Historie",
      "Middelalderen",
      "Moderne tid",
      "Geografi",
      "Kultur",
      "Museer",
      "Referanser",
    ]);
    for (const sec of sections.slice(1)) assert.ok(whole.startsWith("#", sec.offset), sec.title);
    const sent = fake.requestsTo("/w/api.php")[0]!;
    assert.equal(param(sent, "exsectionformat"), "wiki");
    assert.equal(param(sent, "exintro"), null);
  });
});

Deno.test("wikipedia-content reads one section with its subsections and refuses a bad section or offset", async () => {
  await withProvider(wikipedia(), async (s) => {
    const extract =
      JSON.parse(fixtureText("wikipedia/synthetic_content_oslo_fv2.json")).query.pages[0].extract;
    const { text: whole, sections } = articleText(extract);
    const r = await s.client.callTool({
      name: "wikipedia-content",
      arguments: { title: "Oslo", section: 1 },
    });
    let part = ok(r);
    assert.deepEqual(part["section"], { index: 1, title: "Historie" });
    assert.equal(part["next_section"], 4);
    assert.match(String(part["text"]), /^## Historie\n/);
    assert.match(texts(r)[0]!, /section=1 and offset=/);
    const pieces = [String(part["text"])];
    for (let i = 0; part["has_more"] && i < 10; i++) {
      const next = await s.client.callTool({
        name: "wikipedia-content",
        arguments: { title: "Oslo", section: 1, offset: part["next_offset"], response_format: "json" },
      });
      part = ok(next);
      assert.deepEqual(JSON.parse(texts(next)[0]!), next.structuredContent);
      pieces.push(String(part["text"]));
    }
    assert.equal(part["has_more"], false);
    const section = pieces.join("");
    assert.equal(
      section,
      whole.slice(sections[1]!.offset, sections[4]!.offset),
      "exactly Historie and its subsections",
    );
    assert.match(section, /### Middelalderen[\s\S]*### Moderne tid/);
    assert.doesNotMatch(section, /## Geografi/);

    const last = ok(
      await s.client.callTool({ name: "wikipedia-content", arguments: { title: "Oslo", section: 7 } }),
    );
    assert.equal(last["text"], "## Referanser");
    assert.equal(last["has_more"], false);

    const missing = errorPayload(
      await s.client.callTool({ name: "wikipedia-content", arguments: { title: "Oslo", section: 99 } }),
    );
    assert.equal(missing["field"], "section");
    assert.match(String(missing["message"]), /sections 0–7/);
    const outside = errorPayload(
      await s.client.callTool({
        name: "wikipedia-content",
        arguments: { title: "Oslo", section: 4, offset: 0 },
      }),
    );
    assert.equal(outside["field"], "offset");
    const past = errorPayload(
      await s.client.callTool({ name: "wikipedia-content", arguments: { title: "Oslo", offset: 999_999 } }),
    );
    assert.equal(past["field"], "offset");
  });
});

Deno.test("wikipedia api waits as Retry-After says on maxlag, then retries without the cached error", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const r = await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Etterslep" } });
    assert.equal(ok(r)["title"], "Oslo");
    const sent = fake.requestsTo("/w/api.php");
    assert.equal(sent.length, 2, "one maxlag answer, one retry");
    assert.equal(sent[0]!.url.search, sent[1]!.url.search);
    assert.match(s.stderr(), /wikipedia maxlag: waiting before retry/);

    const again = await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Etterslep" } });
    assert.equal(ok(again)["title"], "Oslo");
    assert.equal(fake.requestsTo("/w/api.php").length, 2, "the success was cached, the maxlag error was not");
  });
});

Deno.test("wikipedia api reports maxlag with retry_after_s when Retry-After is past the deadline", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const p = errorPayload(
      await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Treg" } }),
    );
    assert.equal(p["error_type"], "RATE_LIMITED");
    assert.equal(p["retryable"], true);
    assert.equal(p["retry_after_s"], 120);
    assert.equal(p["message_id"], "maxlag");
    assert.match(String(p["message"]), /lagging by 7 s/);
    assert.equal(fake.requestsTo("/w/api.php").length, 1, "no wait past the 5 s deadline");
  });
});

Deno.test("wikipedia api maps upstream failures: HTTP 503 after retries, an HTML page, an off-site redirect", async () => {
  await withProvider(wikipedia(), async (s, fake) => {
    const down = errorPayload(
      await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Nede" } }),
    );
    assert.equal(down["error_type"], "API_ERROR");
    assert.equal(down["status"], 503);
    assert.equal(down["retryable"], true);
    assert.match(String(down["message"]), /Wikipedia \(no\) answered HTTP 503/);
    assert.equal(fake.requestsTo("/w/api.php").length, 2, "max_retries: 1");
    const html = errorPayload(
      await s.client.callTool({ name: "wikipedia-content", arguments: { title: "Vedlikehold" } }),
    );
    assert.equal(html["error_type"], "DECODE_ERROR");
    const away = errorPayload(
      await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Omdirigert" } }),
    );
    assert.equal(away["error_type"], "UPSTREAM_REDIRECT_REFUSED");
    assert.match(String(away["message"]), /redirected to another host \("localhost:\d+"\)/);
    assert.equal(
      fake.requests.filter((r) => r.url.hostname === "localhost").length,
      0,
      "the redirect was not followed",
    );
    assert.doesNotMatch(JSON.stringify([down, html]), /127\.0\.0\.1/, "no upstream URL leaks");
  });
});

Deno.test("start-up allowlist check passes for wikipedia's template host and the five SNL hosts, and names a foreign one", async () => {
  const served = await runCli(["tools", "--providers", "wikipedia,snl"], { exactPermissions: true });
  assert.equal(served.code, 0, served.stderr);
  assert.match(served.stdout, /wikipedia-content/);
  assert.match(served.stdout, /snl-article/);
  const foreign = await runCli(["tools", "--providers", "wikipedia"], {
    exactPermissions: true,
    configYaml:
      "providers:\n  wikipedia:\n    base_url: https://{lang}.wikipedia.example\n    default_language: nn\n",
  });
  assert.equal(foreign.code, 2);
  assert.match(foreign.stderr, /"nn\.wikipedia\.example"/);
});

Deno.test("wikipedia provenance names each call's own edition in plain words, one origin for all", async () => {
  // The fake serves every edition at one origin (a base_url without {lang}).
  await withProvider(wikipedia(), async (s) => {
    const source = async (language: string) => {
      const r = await s.client.callTool({
        name: "wikipedia-search",
        arguments: { query: "meaning", language },
      });
      return String((ok(r)["provenance"] as Record<string, unknown>)["source"]);
    };
    assert.equal(await source("en"), "English Wikipedia (en)");
    assert.equal(await source("de"), "German Wikipedia (de)");
    assert.equal(await source("no"), "Norwegian Wikipedia (no)");
  });
});

Deno.test("wikipedia empty and not-found answers name the call that goes on: a wider radius, a search", async () => {
  await withProvider(wikipedia(), async (s) => {
    const empty = await s.client.callTool({ name: "wikipedia-geosearch", arguments: { lat: 1, lon: 1 } });
    assert.equal(ok(empty)["total"], 0);
    assert.match(
      texts(empty)[0]!,
      /a 10,000 m radius: wikipedia-geosearch \{"lat":1,"lon":1,"radius_m":10000,"language":"no"\}/,
    );
    const widest = await s.client.callTool({
      name: "wikipedia-geosearch",
      arguments: { lat: 1, lon: 1, radius_m: 10_000 },
    });
    assert.equal(ok(widest)["next_calls"], undefined, "nothing wider than the widest radius");

    const missing = await s.client.callTool({
      name: "wikipedia-summary",
      arguments: { title: "Finnes ikke" },
    });
    const e = errorPayload(missing);
    assert.equal(e["error_type"], "NOT_FOUND");
    assert.deepEqual(e["next_calls"], [{
      tool: "wikipedia-search",
      arguments: { query: "Finnes ikke", language: "no", limit: 5 },
      for: "articles whose text matches the title",
    }]);
    assert.match(
      texts(missing)[0]!,
      /articles whose text matches the title: wikipedia-search \{"query":"Finnes ikke"/,
    );

    const near = await s.client.callTool({
      name: "wikipedia-geosearch",
      arguments: { lat: 41.68, lon: -70.19 },
    });
    assert.match(
      texts(near)[0]!,
      /summary of "Cape Cod": wikipedia-summary \{"title":"Cape Cod","language":"no"\}/,
    );
  });
});
