// What GeoNorge costs an agent's context (docs/TOOLS.md): the toolset and lean schema (organization is one
// plain string: null, as strict clients send for a field left out, keeps the Riksantikvaren default, "all"
// lifts it), output: "file" with every entry past the answer's paging window, and the opendata_search source
// whose `next` call works as given. Against a fake catalogue with 250 synthetic entries.
import assert from "node:assert/strict";
import { openProvider, preset, withProvider } from "../../harness/provider.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { ok, texts } from "../../harness/results.ts";
import { assertLean, providerFor, readLinked, searchContext } from "../_norway.ts";

const TOTAL = 250;

/** Entries "Datasett 0" .. "Datasett 249" of Riksantikvaren (or of "Kartverket" without a facet). */
function search(r: Received): Reply {
  const q = r.url.searchParams;
  const org = q.get("facets[0].name") === "organization" ? q.get("facets[0].value") : null;
  const text = q.get("text");
  if (text !== null && text.startsWith("Datasett ")) {
    const i = Number(text.slice("Datasett ".length));
    return { json: { NumFound: 1, Results: [entry(i, org ?? "Riksantikvaren")] } };
  }
  const limit = Number(q.get("limit"));
  const results = Array.from({ length: Math.min(limit, TOTAL) }, (_, i) => entry(i, org ?? "Kartverket"));
  return { json: { NumFound: TOTAL, Results: results } };
}

function entry(i: number, organization: string): Record<string, unknown> {
  const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  return {
    Uuid: uuid,
    Title: `Datasett ${i}`,
    Abstract: `Synthetic abstract ${i}.`,
    Type: i % 3 ? "dataset" : "service",
    Organization: organization,
    DistributionProtocol: "OGC:WFS",
    DistributionUrl: `https://wfs.example.invalid/${i}`,
    ShowDetailsUrl: `https://kartkatalog.geonorge.no/metadata/uuid/${uuid}`,
    IsOpenData: true,
    Date: "2026-01-02",
  };
}

/** The geonorge provider against its fake kartkatalog, in process (`spawn: true`: the real process). */
const geonorge = preset({
  provider: "geonorge",
  routes: [{ path: "/api/search", reply: search }],
  settings: { max_retries: 0, cache_ttl: 0 },
});

Deno.test("geonorge-datasets belongs to the geonorge toolset and keeps the strict-client rules within budget", async () => {
  await assertLean("geonorge", "geonorge", { tokens: 250, chars: 1800 });
});

Deno.test("geonorge-datasets organization: null keeps the default, all lifts it, a name filters", async () => {
  await withProvider(geonorge(), async (s, f) => {
    const facet = () => f.requests.at(-1)!.url.searchParams.get("facets[0].value");
    ok(await s.client.callTool({ name: "geonorge-datasets", arguments: { organization: null, limit: 1 } }));
    assert.equal(facet(), "Riksantikvaren", "null is what strict clients send for a field left out");
    ok(await s.client.callTool({ name: "geonorge-datasets", arguments: { limit: 1 } }));
    assert.equal(facet(), "Riksantikvaren");
    const all = ok(
      await s.client.callTool({ name: "geonorge-datasets", arguments: { organization: "all" } }),
    );
    assert.equal(facet(), null);
    assert.equal(all["organization"], null);
    ok(await s.client.callTool({ name: "geonorge-datasets", arguments: { organization: "*", limit: 1 } }));
    assert.equal(facet(), null);
    ok(await s.client.callTool({ name: "geonorge-datasets", arguments: { organization: "Kartverket" } }));
    assert.equal(facet(), "Kartverket");
  });
});

Deno.test("geonorge-datasets pages to its window, then output file holds every entry", async () => {
  await withProvider(geonorge(), async (s, f) => {
    const last = await s.client.callTool({
      name: "geonorge-datasets",
      arguments: { offset: 190, limit: 10 },
    });
    const data = ok(last);
    assert.deepEqual([data["has_more"], data["next_offset"]], [true, null]);
    assert.match(texts(last)[0]!, /Paging stops at 200 entries: call with output "file" for up to 1000/);

    const r = await s.client.callTool({ name: "geonorge-datasets", arguments: { output: "file", limit: 2 } });
    const file = ok(r)["file"] as Record<string, unknown>;
    assert.deepEqual([file["rows"], file["complete"]], [TOTAL, true]);
    assert.equal(f.requests.at(-1)!.url.searchParams.get("limit"), "1000", "one request of file_max_entries");
    const csv = (await readLinked(s.client, r)).text.trim().split(/\r?\n/);
    assert.match(csv[0]!, /^uuid,title,type,organization,open_data,access,protocol,distribution_url,/);
    assert.equal(csv.length, TOTAL + 1);
    assert.match(csv[TOTAL]!, /Datasett 249/);
  });
});

Deno.test("geonorge search source: the organization's entries, each next call works as given", async () => {
  await using f = FakeUpstream.start([{ path: "/api/search", reply: search }]);
  const provider = await providerFor("geonorge", { base_url: f.origin, cache_ttl: 0, max_retries: 0 });
  const hits = await provider.search!.search("kulturminner", { limit: 3 }, searchContext());
  assert.equal(hits.length, 3);
  const sent = f.requests.at(-1)!.url.searchParams;
  assert.deepEqual([sent.get("text"), sent.get("facets[0].value"), sent.get("limit")], [
    "kulturminner",
    "Riksantikvaren",
    "3",
  ]);
  assert.deepEqual(hits[1]!.next, { tool: "geonorge-datasets", arguments: { query: "Datasett 1" } });
  assert.equal(hits[1]!.date, "2026-01-02");
  assert.match(hits[1]!.url!, /kartkatalog\.geonorge\.no\/metadata\/uuid\//);
  await provider.close?.();

  await using s = await openProvider({ provider: "geonorge", fake: f, settings: { cache_ttl: 0 } });
  const found = ok(await s.client.callTool({ name: hits[1]!.next.tool, arguments: hits[1]!.next.arguments }));
  const entries = found["entries"] as Record<string, unknown>[];
  assert.equal(entries[0]!["title"], "Datasett 1");
  assert.equal((entries[0]!["distribution"] as Record<string, unknown>)["protocol"], "OGC:WFS");
});
