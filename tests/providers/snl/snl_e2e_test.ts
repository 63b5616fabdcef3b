// snl-search and snl-article end to end: the real server in process (the search test spawns the
// real process, scoped permissions and all, as the provider's smoke test), the SDK Client (which
// checks structuredContent against each outputSchema), and a fake SNL serving the recorded
// article JSON and synthetic search answers (tests/fixtures/snl/README.md).
import assert from "node:assert/strict";
import { bodyToText } from "../../../lib/providers/snl/parse.ts";
import { preset, withProvider } from "../../harness/provider.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import type { Received, Route } from "../../fakes/upstream.ts";
import { errorOf as errorPayload, ok, providerTools, texts } from "../../harness/results.ts";
import type { ToolResult } from "../../harness/results.ts";

type Result = ToolResult;

const query = (r: Received) => r.url.searchParams.get("query");
const ARTICLE = "snl/article_fortolket_programmeringsspraak.json";
const ARTICLE_PATH = "/fortolket_programmeringsspr%C3%A5k.json";

function snlRoutes(): Route[] {
  return [
    {
      path: "/api/v1/search",
      match: (r) => query(r) === "programmering",
      reply: { fixture: "snl/synthetic_search_programmering_first_sentences.json" },
    },
    {
      path: "/api/v1/search",
      match: (r) => query(r) === "dansband",
      reply: { fixture: "snl/synthetic_search_dansband_first_two_sentences.json" },
    },
    { path: "/api/v1/search", match: (r) => query(r) === "ingenting", reply: { json: [] } },
    { path: "/api/v1/search", match: (r) => query(r) === "rart", reply: { json: { message: "oops" } } },
    { path: "/api/v1/search", match: (r) => query(r) === "feil", reply: { status: 500, body: "boom" } },
    { path: ARTICLE_PATH, reply: { fixture: ARTICLE } },
    { path: "/api/v1/article/4242", reply: { fixture: ARTICLE } },
    {
      path: "/flyttet.json",
      reply: (r) => ({ status: 301, headers: { location: `http://localhost:${r.url.port}/flyttet.json` } }),
    },
    {
      path: "/finnes_ikke.json",
      reply: { status: 404, body: "<html><body>Ikke funnet</body></html>", contentType: "text/html" },
    },
  ];
}

/** The snl provider against its fake, in process (`spawn: true`: the real process). */
const snl = preset({
  provider: "snl",
  routes: snlRoutes(),
  // 3,600: a fifth of it is kept for each answer's provenance.
  server: { character_limit: 3600 },
  // Room for the synthetic 5 MB article below; the default cap (4 MiB) is sized to real articles.
  settings: { max_retries: 1, max_body_mb: 16 },
});

Deno.test("snl tools are listed with annotations, output schemas and the site choices", async () => {
  await withProvider(snl(), async (s) => {
    const tools = providerTools((await s.client.listTools()).tools);
    assert.deepEqual(tools.map((t) => t.name), ["snl-search", "snl-article"]);
    for (const t of tools) {
      assert.equal(t.annotations?.readOnlyHint, true);
      assert.equal(t.annotations?.openWorldHint, true);
      assert.ok(t.outputSchema);
      const site = (t.inputSchema.properties as Record<string, { enum?: string[] }>)["site"]!;
      assert.deepEqual(site.enum, ["snl", "nbl", "sml", "nkl", "lille"]);
    }
  });
});

Deno.test("snl-search reads first_sentences, licences and pages with the envelope in both formats", async () => {
  await withProvider(snl({ spawn: true }), async (s, fake) => {
    const r = await s.client.callTool({
      name: "snl-search",
      arguments: { query: "programmering", limit: 2 },
    });
    const data = ok(r);
    const results = data["results"] as Record<string, unknown>[];
    assert.equal(results.length, 2);
    assert.deepEqual(
      [data["total"], data["count"], data["offset"], data["has_more"], data["next_offset"]],
      [null, 2, 0, true, 2],
    );
    const first = results[0]!;
    assert.equal(first["title"], "fortolket programmeringsspråk");
    assert.equal(first["slug"], "fortolket_programmeringsspråk");
    assert.equal(first["url"], "https://snl.no/fortolket_programmeringsspr%C3%A5k");
    assert.match(String(first["first_sentences"]), /^Syntetisk: et programmeringsspråk/);
    assert.equal(first["snippet"], "… fortolket programmeringsspråk (syntetisk utdrag for testene) …");
    assert.equal(first["license_name"], "fri");
    assert.equal(first["clarification"], null);
    assert.deepEqual(first["taxonomy"], { id: 3689, title: "Programmering" });
    assert.equal(results[1]!["clarification"], "programmeringsspråk");
    assert.equal(
      (data["source"] as Record<string, string>)["license_url"],
      "https://meta.snl.no/fri_gjenbruk",
    );
    const text = texts(r)[0]!;
    assert.match(text, /licence: fri/);
    assert.match(text, /slug: fortolket_programmeringsspråk/);
    assert.match(
      text,
      /More results follow\.[\s\S]*next page: snl-search \{"query":"programmering","limit":2,"offset":2\}/,
    );
    const sent = fake.requestsTo("/api/v1/search")[0]!;
    assert.equal(sent.url.searchParams.get("limit"), "3", "one more than shown, to know whether more follow");
    assert.equal(sent.url.searchParams.get("offset"), "0");

    const json = await s.client.callTool({
      name: "snl-search",
      arguments: { query: "programmering", limit: 5, response_format: "json" },
    });
    const all = ok(json);
    assert.deepEqual(JSON.parse(texts(json)[0]!), json.structuredContent);
    assert.deepEqual([all["count"], all["has_more"], all["next_offset"]], [3, false, null]);
    assert.equal(
      ((all["results"] as Record<string, unknown>[])[2]!)["license_name"],
      "begrenset",
    );
  });
});

Deno.test("snl-search reads the older first_two_sentences name and a sister site", async () => {
  await withProvider(snl(), async (s, fake) => {
    const r = await s.client.callTool({ name: "snl-search", arguments: { query: "dansband", site: "nbl" } });
    const data = ok(r);
    assert.equal(data["site"], "nbl");
    assert.equal(data["encyclopedia"], "Norsk biografisk leksikon");
    const results = data["results"] as Record<string, unknown>[];
    assert.match(String(results[0]!["first_sentences"]), /^Syntetisk: et dansebandeksempel/);
    assert.equal(fake.requestsTo("/api/v1/search").length, 1, "a base_url override sends every site to it");

    const empty = await s.client.callTool({ name: "snl-search", arguments: { query: "ingenting" } });
    const none = ok(empty);
    assert.deepEqual([none["count"], none["has_more"]], [0, false]);
    // The same words on the other general encyclopedias, never the same search (nor opendata_search) again.
    assert.deepEqual((none["next_calls"] as { arguments: unknown }[]).map((c) => c.arguments), [
      { query: "ingenting", site: "lille" },
      { query: "ingenting", site: "nbl" },
    ]);
    assert.doesNotMatch(texts(empty)[0]!, /opendata_search/);
    // An error object in an HTTP 200 answer is an error with the upstream's words, not "no hits".
    const odd = errorPayload(await s.client.callTool({ name: "snl-search", arguments: { query: "rart" } }));
    assert.equal(odd["error_type"], "API_ERROR");
    assert.match(String(odd["message"]), /answered with an error: "oops"/);
  });
});

Deno.test("snl tools reject bad arguments with a VALIDATION_ERROR naming the field, before any request", async () => {
  await withProvider(snl(), async (s, fake) => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["snl-search", { query: "x", site: "evil.example" }, "site"],
      ["snl-search", { query: "x", limit: 11 }, "limit"],
      ["snl-search", { query: "x", limit: 0 }, "limit"],
      ["snl-search", { query: "" }, "query"],
      ["snl-search", { query: "x", offset: -5 }, "offset"],
      ["snl-article", {}, "slug"],
      ["snl-article", { slug: "Oslo", url: "https://snl.no/Oslo" }, "slug"],
      ["snl-article", { slug: "../../etc/passwd" }, "slug"],
      ["snl-article", { slug: ".taxonomy" }, "slug"],
      ["snl-article", { slug: "Oslo?x=1" }, "slug"],
      ["snl-article", { url: "https://evil.example/Oslo" }, "url"],
      ["snl-article", { url: "https://snl.no.evil.example/Oslo" }, "url"],
      ["snl-article", { url: "https://snl.no:8443/Oslo" }, "url"],
      ["snl-article", { url: "https://user@snl.no/Oslo" }, "url"],
      ["snl-article", { url: "file:///etc/passwd" }, "url"],
      ["snl-article", { url: "https://snl.no/.taxonomy/3689" }, "url"],
      ["snl-article", { url: "not a url" }, "url"],
      ["snl-article", { url: "https://sml.snl.no/hjerteinfarkt", site: "snl" }, "site"],
      ["snl-article", { id: 0 }, "id"],
      ["snl-article", { slug: "Oslo", site: "wiki" }, "site"],
      ["snl-article", { slug: "Oslo", max_chars: 10 }, "max_chars"],
      // A lone surrogate is not valid Unicode, and encodeURIComponent throws on it.
      ["snl-article", { slug: "a\udfffb" }, "slug"],
      ["snl-article", { url: "https://snl.no/a\udfffb" }, "url"],
      ["snl-search", { query: "a\ud800" }, "query"],
    ];
    for (const [name, args, field] of cases) {
      const p = errorPayload(await s.client.callTool({ name, arguments: args }));
      assert.equal(p["error_type"], "VALIDATION_ERROR", `${name} ${JSON.stringify(args)}`);
      assert.equal(p["field"], field, `${name} ${JSON.stringify(args)}`);
    }
    assert.equal(fake.requests.length, 0, "no request left the server");
  });
});

Deno.test("snl-article reads an article by slug, url and id with text, links, authors and licence", async () => {
  await withProvider(snl(), async (s, fake) => {
    const bySlug = await s.client.callTool({
      name: "snl-article",
      arguments: { slug: "fortolket programmeringsspråk" },
    });
    const data = ok(bySlug);
    assert.equal(data["title"], "fortolket programmeringsspråk");
    assert.equal(data["url"], "https://snl.no/fortolket_programmeringsspr%C3%A5k");
    assert.deepEqual(data["subject"], { title: "Programmering", url: "https://snl.no/.taxonomy/3689" });
    assert.deepEqual(data["authors"], ["Henrik Dvergsdal"]);
    assert.equal(data["license_name"], "fri");
    assert.deepEqual((data["license"] as Record<string, unknown>)["name"], "CC BY-SA 3.0");
    assert.equal(data["created_at"], "2017-12-12T10:34:18.189+01:00");
    const provenance = data["provenance"] as Record<string, unknown>;
    assert.deepEqual(
      [provenance["permalink"], provenance["licence"], provenance["as_of"]],
      [
        "https://snl.no/fortolket_programmeringsspr%C3%A5k",
        'CC BY-SA 3.0 (SNL: "fri")',
        "changed 2017-12-12T10:38:37.626+01:00",
      ],
      "the article's own page, licence and last change",
    );
    const text = String(data["text"]);
    assert.match(text, /^programmeringsspråk som ikke blir kompilert/);
    assert.match(text, /Eksempler på fortolkede språk:\n- Python\n- Javascript\n- PHP\n- Perl$/);
    assert.doesNotMatch(text, /<|&/);
    const links = data["links"] as { text: string; url: string }[];
    assert.deepEqual(links.map((l) => l.text), ["datamaskiner", "operativsystemer", "Python", "PHP"]);
    assert.equal(links[0]!.url, "https://snl.no/datamaskin");
    assert.deepEqual([data["offset"], data["has_more"], data["next_offset"]], [0, false, null]);
    const source = data["source"] as Record<string, string>;
    assert.match(
      source["attribution"]!,
      /^Henrik Dvergsdal: "fortolket programmeringsspråk" in Store norske leksikon/,
    );
    const md = texts(bySlug)[0]!;
    assert.match(md, /Licence: fri = CC BY-SA 3\.0 \(credit at the end\)\.\n/);
    // Said once each: the reuse terms and credit close the text, the provenance line names the licence.
    assert.doesNotMatch(md, /Free to reuse/);
    assert.match(
      md,
      /\nLicence: CC BY-SA 3\.0 \(https:\/\/creativecommons\.org\/licenses\/by-sa\/3\.0\/\)\. Henrik Dvergsdal: "fortolket programmeringsspråk" in Store norske leksikon/,
    );
    assert.equal(md.split("\n").filter((l) => l.startsWith("Provenance: ")).length, 1);
    assert.match(md, /Authors: Henrik Dvergsdal/);
    assert.match(md, /Links in the article: datamaskiner \(https:\/\/snl\.no\/datamaskin\)/);

    const byUrl = await s.client.callTool({
      name: "snl-article",
      arguments: { url: "https://snl.no/fortolket_programmeringsspråk", response_format: "json" },
    });
    assert.deepEqual(JSON.parse(texts(byUrl)[0]!), byUrl.structuredContent);
    assert.equal(ok(byUrl)["text"], data["text"]);

    const sister = ok(
      await s.client.callTool({
        name: "snl-article",
        arguments: { url: "https://www.nbl.snl.no/fortolket_programmeringsspr%C3%A5k.json" },
      }),
    );
    assert.equal(sister["site"], "nbl");
    assert.equal(sister["encyclopedia"], "Norsk biografisk leksikon");

    const byId = ok(await s.client.callTool({ name: "snl-article", arguments: { id: 4242 } }));
    assert.equal(byId["title"], "fortolket programmeringsspråk");
    assert.equal(fake.requestsTo("/api/v1/article/4242").length, 1);
    assert.equal(fake.requestsTo(ARTICLE_PATH).length, 1, "the same article is served from the cache");
  });
});

Deno.test("snl-article gives a long article in parts that join up to the whole text", async () => {
  await withProvider(snl(), async (s) => {
    const whole = bodyToText(JSON.parse(fixtureText(ARTICLE)).xhtml_body).text;
    const parts: string[] = [];
    let offset = 0;
    for (let i = 0; i < 10; i++) {
      const r = await s.client.callTool({
        name: "snl-article",
        arguments: { slug: "fortolket_programmeringsspråk", offset, max_chars: 200 },
      });
      const data = ok(r);
      assert.ok(Number(data["count"]) <= 200);
      assert.equal(data["total"], whole.length);
      parts.push(String(data["text"]));
      if (!data["has_more"]) break;
      assert.match(texts(r)[0]!, new RegExp(`offset=${data["next_offset"]}`));
      offset = data["next_offset"] as number;
    }
    assert.ok(parts.length >= 2, `${parts.length} parts`);
    assert.equal(parts.join(""), whole);
    const past = errorPayload(
      await s.client.callTool({
        name: "snl-article",
        arguments: { slug: "fortolket_programmeringsspråk", offset: 5000 },
      }),
    );
    assert.equal(past["field"], "offset");
  });
});

Deno.test("snl tools answer DECODE_ERROR for bodies that are not SNL answers, API_ERROR for an error object", async () => {
  await withProvider(snl(), async (s, fake) => {
    let current: unknown = null;
    fake.route({
      path: /^\/api\/v1\/search$/,
      match: (r) => /^søppel/.test(query(r) ?? ""),
      reply: () => ({ json: current }),
    })
      .route({ path: /^\/soppel\d+\.json$/, reply: () => ({ json: current }) });
    const garbage: unknown[] = [null, "text", 5, [1, "x", null], { results: "x" }, {}, [{ title: 5 }], {
      title: "Uten tekst",
    }, { title: "Feil type", xhtml_body: 7 }];
    let round = 0;
    for (const body of garbage) {
      current = body;
      round++;
      const search = errorPayload(
        await s.client.callTool({ name: "snl-search", arguments: { query: `søppel ${round}` } }),
      );
      // A search answer of [] is a real empty result; an object that is no article is not a search answer either.
      assert.equal(search["error_type"], "DECODE_ERROR", `search on ${JSON.stringify(body)}`);
      const article = errorPayload(
        await s.client.callTool({ name: "snl-article", arguments: { slug: `soppel${round}` } }),
      );
      assert.equal(article["error_type"], "DECODE_ERROR", `article on ${JSON.stringify(body)}`);
    }
    current = { error: "Artikkelen er midlertidig utilgjengelig" };
    round++;
    const search = errorPayload(
      await s.client.callTool({ name: "snl-search", arguments: { query: `søppel ${round}` } }),
    );
    assert.equal(search["error_type"], "API_ERROR");
    assert.match(String(search["message"]), /midlertidig utilgjengelig/);
    const article = errorPayload(
      await s.client.callTool({ name: "snl-article", arguments: { slug: `soppel${round}` } }),
    );
    assert.equal(article["error_type"], "API_ERROR");
    assert.match(
      String(article["message"]),
      /"soppel\d+" with an error: "Artikkelen er midlertidig utilgjengelig"/,
    );
    // Nothing of this was cached: the same call asks again.
    await s.client.callTool({ name: "snl-article", arguments: { slug: `soppel${round}` } });
    assert.equal(fake.requestsTo(`/soppel${round}.json`).length, 2);
  });
});

Deno.test("snl-article keeps every part within the limit when the upstream sends huge fields", async () => {
  await withProvider(snl(), async (s, fake) => {
    const body = Array.from({ length: 12 }, (_, i) => `<p>Avsnitt ${i}: ${"syntetisk tekst ".repeat(20)}</p>`)
      .join("");
    const huge = {
      title: "T".repeat(100_000),
      headword: "H".repeat(50_000),
      url: `https://snl.no/${"u".repeat(5000)}`,
      subject_title: "S".repeat(20_000),
      created_at: "2020-01-01T00:00:00Z".repeat(1000),
      license_name: "fri",
      authors: Array.from({ length: 500 }, (_, i) => ({ full_name: `Forfatter ${i} ${"x".repeat(500)}` })),
      images: Array.from(
        { length: 1000 },
        (_, i) => ({ url: `https://snl.no/img/${i}.jpg`, caption: "c".repeat(5000) }),
      ),
      xhtml_body: body,
    };
    fake.route({ path: "/enorm.json", reply: { json: huge } });
    const whole = bodyToText(body).text;
    for (const format of ["markdown", "json"]) {
      const parts: string[] = [];
      let offset = 0;
      for (let i = 0; i < 40; i++) {
        const r = await s.client.callTool({
          name: "snl-article",
          arguments: { slug: "enorm", offset, response_format: format },
        });
        const data = ok(r);
        assert.ok(texts(r)[0]!.length <= 3600, `${format} part ${i}: text ${texts(r)[0]!.length}`);
        assert.ok(
          JSON.stringify(data).length <= 3600,
          `${format} part ${i}: structured ${JSON.stringify(data).length}`,
        );
        assert.ok(Number(data["count"]) > 0, "every part carries text");
        assert.equal(data["authors_total"], 500);
        assert.equal(data["images_total"], 1000);
        parts.push(String(data["text"]));
        if (!data["has_more"]) break;
        offset = data["next_offset"] as number;
      }
      assert.equal(parts.join(""), whole, `${format}: the parts join up to the whole text`);
    }
  });
});

Deno.test("snl-article reports a missing article as NOT_FOUND, refuses an off-site redirect, and snl-search a failure", async () => {
  await withProvider(snl(), async (s, fake) => {
    const missing = errorPayload(
      await s.client.callTool({ name: "snl-article", arguments: { slug: "finnes_ikke" } }),
    );
    assert.equal(missing["error_type"], "NOT_FOUND");
    assert.equal(missing["status"], 404);
    assert.match(String(missing["message"]), /Store norske leksikon has no article "finnes_ikke"/);
    assert.match(String(missing["hint"]), /snl-search/);

    const byId = errorPayload(await s.client.callTool({ name: "snl-article", arguments: { id: 7 } }));
    assert.equal(byId["error_type"], "NOT_FOUND");
    assert.match(String(byId["hint"]), /does not document/);

    const away = errorPayload(
      await s.client.callTool({ name: "snl-article", arguments: { slug: "flyttet" } }),
    );
    assert.equal(away["error_type"], "UPSTREAM_REDIRECT_REFUSED");
    assert.match(String(away["message"]), /redirected to another host/);

    const down = errorPayload(await s.client.callTool({ name: "snl-search", arguments: { query: "feil" } }));
    assert.equal(down["error_type"], "API_ERROR");
    assert.equal(down["status"], 500);
    assert.equal(down["retryable"], true);
    assert.equal(fake.requestsTo("/api/v1/search").length, 2, "max_retries: 1");
    assert.doesNotMatch(JSON.stringify([missing, byId, down]), /127\.0\.0\.1/, "no upstream URL leaks");
  });
});
