// Over HTTP a result file (output: "file") of the Wikipedia, SNL, Riksantikvaren and GeoNorge
// tools belongs to the session that wrote it: another session neither lists nor reads it, and the
// answer gives no path on the server's disk. One server process, one fake upstream for all five.
import assert from "node:assert/strict";
import { connectHttp } from "../harness/provider.ts";
import { startHttpServer } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";

import { FakeUpstream, fixtureText } from "../fakes/upstream.ts";
import { ok } from "../harness/results.ts";

const ARCGIS = "/arcgis/rest/services/Distribusjon";
const LAYER7 = `${ARCGIS}/Kulturminner20180301/MapServer/7`;
const OGC_ITEMS = "/LokaliteterEnkeltminnerOgSikringssoner/collections/lokaliteter/items";

Deno.test("result files over HTTP belong to the session that wrote them", async () => {
  await using fake = FakeUpstream.start([
    {
      path: "/w/api.php",
      reply: { fixture: "wikipedia/synthetic_content_oslo_fv2.json" },
    },
    { path: "/api/v1/search", reply: { fixture: "snl/synthetic_search_programmering_first_sentences.json" } },
    { path: "/api/search", reply: { fixture: "geonorge/search_riksantikvaren.json" } },
    {
      path: OGC_ITEMS,
      reply: {
        body: fixtureText("ra_ogc/items_lokaliteter_p2.json"),
        contentType: "application/geo+json",
      },
    },
    { path: LAYER7, reply: { fixture: "ra_arcgis/layer_7.json" } },
    {
      path: `${LAYER7}/query`,
      reply: (r) =>
        r.url.searchParams.get("returnCountOnly") === "true"
          ? { json: { count: 7 } }
          : { fixture: "ra_arcgis/query_layer7_all.json" },
    },
  ]);
  const o = fake.origin;
  const home = scratchHome([
    "providers:",
    ...["wikipedia", "snl", "geonorge", "riksantikvaren_ogc"].flatMap((id) => [
      `  ${id}:`,
      `    base_url: ${o}`,
      "    cache_ttl: 0",
      "    max_retries: 0",
    ]),
    "  riksantikvaren_arcgis:",
    `    base_url: ${o}${ARCGIS}`,
    "    cache_ttl: 0",
    "    max_retries: 0",
  ].join("\n"));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({
    args: ["--providers", "wikipedia,snl,geonorge,riksantikvaren_ogc,riksantikvaren_arcgis"],
    home,
  });
  const { client: a } = await connectHttp(server.origin);
  const { client: b } = await connectHttp(server.origin);
  try {
    const calls: [string, Record<string, unknown>][] = [
      ["wikipedia-content", { title: "Oslo", output: "file" }],
      ["snl-search", { query: "programmering", output: "file" }],
      ["geonorge-datasets", { output: "file" }],
      ["riksantikvaren-features", { collection: "lokaliteter", output: "file" }],
      ["arcgis-query", { layer: 7, output: "file" }],
    ];
    const uris: string[] = [];
    for (const [name, args] of calls) {
      const file = ok(await a.callTool({ name, arguments: args }))["file"] as Record<string, unknown>;
      assert.ok(String(file["uri"]).startsWith("opendata://files/"), name);
      assert.equal(file["path"], undefined, `${name}: no server path over HTTP`);
      uris.push(String(file["uri"]));
    }
    const listedByA = (await a.listResources()).resources.map((r) => r.uri);
    const listedByB = (await b.listResources()).resources.map((r) => r.uri);
    for (const uri of uris) {
      assert.ok(listedByA.includes(uri), `A lists ${uri}`);
      assert.ok(!listedByB.includes(uri), `B does not list ${uri}`);
      assert.ok(((await a.readResource({ uri })).contents[0] as { text: string }).text.length > 0);
      await assert.rejects(() => b.readResource({ uri }), `B cannot read ${uri}`);
    }
  } finally {
    await a.close().catch(() => {});
    await b.close().catch(() => {});
  }
});
