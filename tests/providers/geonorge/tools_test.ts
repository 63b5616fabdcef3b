// geonorge-datasets end to end against a fake kartkatalog serving synthetic bodies.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { payloadOf } from "../../harness/results.ts";

type Json = Record<string, unknown>;

function search(req: Received): Reply {
  const q = req.url.searchParams;
  if (q.has("offset")) return { status: 400, json: { error: "offset must not be sent" } };
  const org = q.get("facets[0].name") === "organization" ? q.get("facets[0].value") : null;
  if (org === "Riksantikvaren") return { fixture: "geonorge/search_riksantikvaren.json" };
  // Bodies of the wrong shape, each sent with HTTP 200.
  if (org === "Null") return { json: null };
  if (org === "Array") return { json: [] };
  if (org === "Text") return { json: { NumFound: 3, Results: "three" } };
  if (org === "Missing") return { json: { NumFound: 3 } };
  if (org !== null) return { json: { NumFound: 0, Results: [] } };
  // The catalogue's text search answers the organization's entries for its name in the text.
  if ((q.get("text") ?? "").startsWith("Fredete bygninger")) {
    // An entry whose abstract names the organization, as most of its entries' do.
    return {
      json: {
        numFound: 1,
        results: [{
          uuid: "0d6c1f0e-0d3c-4c51-9f5e-6a1d7c1b2a10",
          title: "Kulturmiljøer (synthetic entry)",
          type: "dataset",
          organization: "Riksantikvaren - Direktoratet for kulturminneforvaltning",
          abstract: "Datasettet forvaltes av Direktoratet for kulturminneforvaltning.",
        }],
      },
    };
  }
  if ((q.get("text") ?? "").includes("Direktoratet")) {
    return { fixture: "geonorge/search_text_fallback_camelcase.json" };
  }
  return { status: 503, body: "down" };
}

Deno.test("geonorge-datasets over stdio against a fake kartkatalog", async (t) => {
  await using fake = FakeUpstream.start([{ path: "/api/search", reply: search }]);
  await using s = await openProvider({
    provider: "geonorge",
    fake,
    settings: { max_retries: 0, cache_ttl: 0 },
  });
  const call = async (args: Json) => {
    const r = await s.client.callTool({ name: "geonorge-datasets", arguments: args });
    const content = r.content as { text: string }[];
    return {
      isError: r.isError === true,
      text: content[0]!.text,
      structured: (r.structuredContent ?? {}) as Json,
      payload: (r.isError ? payloadOf(r) : {}) as Json,
    };
  };

  await t.step(
    "geonorge-datasets lists Riksantikvaren's entries with distributions, never sending offset",
    async () => {
      const r = await call({ limit: 2, offset: 1, response_format: "json" });
      assert.equal(r.isError, false, r.text);
      const entries = r.structured["entries"] as Json[];
      assert.deepEqual(entries.map((e) => e["uuid"]), [
        "4b3d44cd-a866-4bb7-a053-e60181da3901",
        "8c2c434b-07f7-4ebc-9bc6-9c15cdd75c4c",
      ]);
      assert.deepEqual([r.structured["total"], r.structured["has_more"], r.structured["next_offset"]], [
        4,
        true,
        3,
      ]);
      assert.equal((entries[1]!["distribution"] as Json)["protocol"], "OGC:WMS");
      assert.match(String(entries[1]!["capabilities_url"]), /GetCapabilities/);
      assert.equal(entries[1]!["download_api_url"], null, "services have no download API link");
      const sent = fake.requests.at(-1)!.url.searchParams;
      assert.equal(sent.get("limit"), "3", "offset + limit entries are read from the start");
      assert.equal(sent.get("facets[0].value"), "Riksantikvaren");
    },
  );

  await t.step("geonorge-datasets drops non-web URLs and malformed entries", async () => {
    const r = await call({ limit: 10, response_format: "json" });
    const entries = r.structured["entries"] as Json[];
    assert.equal(entries.length, 4);
    assert.equal((entries[3]!["distribution"] as Json)["url"], null, "a javascript: URL is not passed on");
    const md = await call({ limit: 10 });
    assert.match(
      md.text,
      /\| Kulturminner WMS \(synthetic entry\) \| service \| {2}\| OGC:WMS https:\/\/kart\.ra\.no/,
    );
    assert.doesNotMatch(md.text, /javascript:/);
    assert.match(md.text, /Licence: Per dataset/);
  });

  await t.step(
    "geonorge-datasets falls back to a text search when the organization facet matches nothing",
    async () => {
      const r = await call({
        organization: "Direktoratet for kulturminneforvaltning",
        response_format: "json",
      });
      assert.equal(r.isError, false, r.text);
      const entries = r.structured["entries"] as Json[];
      assert.deepEqual(entries.map((e) => e["title"]), ["Kulturminner - Brannvern (synthetic entry)"]);
      assert.equal(r.structured["total_is_exact"], false);
      assert.match(
        (r.structured["warnings"] as string[])[0]!,
        /^Nothing matched with the organization filter "Direktoratet for kulturminneforvaltning" \(an organization is matched by its exact catalogue name\); searched its name as text/,
      );
    },
  );

  await t.step(
    "geonorge-datasets keeps only fallback entries that mention a word of the query",
    async () => {
      const hit = await call({
        query: "brannvern",
        organization: "Direktoratet for kulturminneforvaltning",
        response_format: "json",
      });
      assert.deepEqual(
        (hit.structured["entries"] as Json[]).map((e) => e["title"]),
        ["Kulturminner - Brannvern (synthetic entry)"],
      );
      assert.match((hit.structured["warnings"] as string[])[0]!, /mention a word of the query/);
      const miss = await call({
        query: "USD/JPY",
        organization: "Direktoratet for kulturminneforvaltning",
        response_format: "json",
      });
      assert.equal(miss.isError, false, miss.text);
      assert.deepEqual(miss.structured["entries"], []);
      // A word the organization's name holds picks no entry: its entries are likely to say it.
      const own = await call({
        query: "Fredete bygninger Direktoratet",
        organization: "Direktoratet for kulturminneforvaltning",
        response_format: "json",
      });
      assert.deepEqual(own.structured["entries"], [], JSON.stringify(own.structured["entries"]));
      // A short word counts only whole: "set" is not in "Datasettet", "av" is a word of the abstract.
      const short = (query: string) =>
        call({ query, organization: "Direktoratet for kulturminneforvaltning", response_format: "json" });
      assert.deepEqual((await short("Fredete bygninger set")).structured["entries"], []);
      assert.equal(((await short("Fredete bygninger av")).structured["entries"] as Json[]).length, 1);
    },
  );

  await t.step(
    "geonorge-datasets answers DECODE_ERROR for bodies of the wrong shape, never no entries",
    async () => {
      const cases: [string, RegExp][] = [
        ["Null", /did not answer with search results: it sent null/],
        ["Array", /it sent an array/],
        ["Text", /it sent an object whose "Results" is a string/],
        ["Missing", /it sent an object without "Results"/],
      ];
      for (const [organization, message] of cases) {
        const r = await call({ organization });
        assert.equal(r.payload["error_type"], "DECODE_ERROR", organization);
        assert.match(String(r.payload["message"]), message);
        assert.doesNotMatch(r.text, /No entries/);
      }
    },
  );

  await t.step("geonorge-datasets validates arguments and reports an outage", async () => {
    const bad = await call({ offset: 195, limit: 10 });
    assert.equal(bad.payload["error_type"], "VALIDATION_ERROR");
    assert.equal(bad.payload["field"], "offset");
    const down = await call({ organization: "all" });
    assert.equal(down.payload["error_type"], "API_ERROR");
    assert.equal(down.payload["status"], 503);
    assert.equal(fake.requests.at(-1)!.url.searchParams.get("facets[0].name"), null, '"all": no facet');
  });
});
