// geonorge-datasets against a real kartkatalog search page (tests/fixtures/geonorge/README.md): the download
// API only for GEONORGE:DOWNLOAD distributions, the WMS and WFS capabilities of each dataset, the Oslo
// calendar date, and the operator's contact in the User-Agent.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";

type Json = Record<string, unknown>;

const PAGE = "geonorge/real_search_page_limit25.json";

Deno.test("geonorge-datasets reads the services, downloads and dates of a real catalogue page", async (t) => {
  await using fake = FakeUpstream.start([{ path: "/api/search", reply: () => ({ fixture: PAGE }) }]);
  // The provider's smoke test through the real process (the others run the server in process).
  await using s = await openProvider({
    spawn: true,
    provider: "geonorge",
    fake,
    settings: { max_retries: 0, cache_ttl: 0 },
    env: { OPENDATA_MCP_CONTACT: "ops@example.org" },
  });
  const call = async (args: Json) => {
    const r = await s.client.callTool({ name: "geonorge-datasets", arguments: args });
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    const entries = (r.structuredContent as { entries: Json[] }).entries;
    const byUuid = new Map(entries.map((e) => [e["uuid"] as string, e]));
    return { text: (r.content as { text: string }[])[0]!.text, entries, byUuid };
  };
  // The whole page does not fit one answer's character limit as JSON: read it five at a time.
  const all = { entries: [] as Json[], byUuid: new Map<string, Json>() };
  for (let offset = 0; offset < 25; offset += 5) {
    const r = await call({ organization: "all", limit: 5, offset, response_format: "json" });
    all.entries.push(...r.entries);
    for (const [k, v] of r.byUuid) all.byUuid.set(k, v);
  }

  await t.step("download_api_url comes from the GEONORGE:DOWNLOAD distribution, not the entry type", () => {
    assert.equal(all.entries.length, 25);
    const fkb = all.byUuid.get("07af6d79-a3f8-4234-bbe9-89fcba3d3af8")!;
    assert.equal(fkb["type"], "series");
    assert.equal(
      fkb["download_api_url"],
      "https://nedlasting.geonorge.no/api/capabilities/07af6d79-a3f8-4234-bbe9-89fcba3d3af8",
      "the FKB series is downloadable",
    );
    const ortofoto = all.byUuid.get("d5b180dd-0cef-4c4a-9174-ba5af69c3551")!;
    assert.equal(ortofoto["type"], "dataset");
    assert.equal(ortofoto["download_api_url"], null, "a WWW:LINK dataset has no download API");
    const vern = all.byUuid.get("5857ec0a-8d2c-4cd8-baa2-0dc54ae213b4")!;
    assert.equal(
      vern["download_api_url"],
      "https://geoapi.p.aks.miljodirektoratet.no/geonorge/capabilities/5857ec0a-8d2c-4cd8-baa2-0dc54ae213b4",
      "another agency's download API is used as published",
    );
    const kommuneplaner = all.byUuid.get("41435fda-93ba-48a8-bd56-79a9287b6dad")!;
    assert.equal(
      kommuneplaner["download_api_url"],
      "https://nap.ft.dibk.no/services/nedlasting/api/capabilities/41435fda-93ba-48a8-bd56-79a9287b6dad",
      "a GEONORGE:DOWNLOAD among other distributions counts",
    );
  });

  await t.step("datasets carry their WMS and WFS capabilities; capabilities_url is for services", () => {
    const adm = all.byUuid.get("041f1e6e-bdbc-4091-b48f-8a5990f3cc5b")!;
    assert.equal(adm["capabilities_url"], null, "a dataset's GetCapabilitiesUrl is its download URL");
    assert.equal(
      adm["wms_url"],
      "https://wms.geonorge.no/skwms1/wms.adm_enheter2?service=wms&request=GetCapabilities",
    );
    assert.match(
      String(adm["wfs_url"]),
      /^https:\/\/wfs\.geonorge\.no\/skwms1\/wfs\.administrative_enheter\?/,
    );
    assert.deepEqual(adm["map_services"], [{
      uuid: "666e4559-60bf-4a1d-9e72-c43502a9a58b",
      title: "Administrative enheter WMS",
      protocol: "OGC:WMS",
      capabilities_url: "https://wms.geonorge.no/skwms1/wms.adm_enheter2?service=wms&request=GetCapabilities",
    }]);
    const n50 = all.byUuid.get("ea192681-d039-42ec-b1bc-f3ce04c189ac")!;
    assert.equal(n50["wfs_url"], null, "an empty WFS address is none");
    const services = n50["map_services"] as Json[];
    assert.ok(
      services.every((m) => String(m["capabilities_url"]).startsWith("https://")),
      "empty ones dropped",
    );
    const topo = all.byUuid.get("f004268c-d4a1-4801-91cb-daa46236fab7")!;
    assert.equal(topo["type"], "service");
    assert.equal(
      topo["capabilities_url"],
      "https://wms.geonorge.no/skwms1/wms.topo?service=wms&request=getcapabilities",
    );
  });

  await t.step("Date (Oslo midnight written in UTC) is shown as the Oslo calendar date, raw kept", () => {
    const adm = all.byUuid.get("041f1e6e-bdbc-4091-b48f-8a5990f3cc5b")!;
    assert.deepEqual([adm["date"], adm["date_raw"]], ["2025-12-10", "2025-12-09T23:00:00Z"]);
    const teig = all.byUuid.get("74340c24-1c8a-4454-b813-bfe498e80f16")!;
    assert.deepEqual([teig["date"], teig["date_raw"]], ["2026-06-28", "2026-06-27T22:00:00Z"], "summer time");
  });

  await t.step("the markdown names the download API, WMS and WFS of each entry", async () => {
    const md = await call({ organization: "all", limit: 3 });
    assert.match(md.text, /\| Administrative enheter kommuner \| dataset \| 2025-12-10 \|/);
    assert.match(
      md.text,
      /download API https:\/\/nedlasting\.geonorge\.no\/api\/capabilities\/041f1e6e-bdbc-4091-b48f-8a5990f3cc5b; WMS https:\/\/wms\.geonorge\.no\/skwms1\/wms\.adm_enheter2\S*; WFS https:\/\/wfs\.geonorge\.no/,
    );
  });

  await t.step("the answer names its provenance, and its citation replays the exact request", async () => {
    const r = await s.client.callTool({ name: "geonorge-datasets", arguments: { query: "kulturminner" } });
    const p = (r.structuredContent as { provenance: Json }).provenance;
    const sent = fake.requests.at(-1)!;
    const body = await Deno.readFile(new URL("../../fixtures/" + PAGE, import.meta.url));
    const sha = [...new Uint8Array(await crypto.subtle.digest("SHA-256", body))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    assert.equal(p["sha256"], sha, "the hash of the body the upstream sent");
    assert.equal(p["source"], "GeoNorge's catalogue (kartkatalog.geonorge.no)");
    assert.equal(p["permalink"], sent.url.href.replace(/^http:\/\/[^/]+/, fake.origin));
    assert.match(String(p["licence"]), /Kartverket/);
    assert.match(String(p["retrieved_at"]), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal(p["as_of"], null, "the catalogue gives no as-of for a search");
    const text = (r.content as { text: string }[])[0]!.text;
    const line = text.split("\n").find((l) => l.startsWith("Provenance: "))!;
    assert.match(text, /\nNext: next page: geonorge-datasets \{"query":"kulturminner","offset":10\}$/);
    assert.match(String(p["citation"]), /^opendata:\/\/citation\/geonorge\/[0-9a-f]{20}$/);
    // The request is named in the text above (its source line), so the provenance line does not repeat it.
    assert.match(line, /^Provenance: GeoNorge's catalogue \(kartkatalog\.geonorge\.no\) · /);
    assert.ok(text.includes(String(p["permalink"])), "the permalink is in the text once");
    assert.ok(line.includes(`sha256 ${sha}`) && line.includes(`replay ${p["citation"]}`), line);
    const read = await s.client.readResource({ uri: String(p["citation"]) });
    const cited = JSON.parse((read.contents[0] as { text: string }).text);
    assert.deepEqual(cited.request.method, "GET");
    assert.equal(cited.request.url, p["permalink"]);
    assert.equal(cited.response.sha256, sha);
    assert.match(cited.request.headers["user-agent"], /ops@example\.org/);
    assert.equal(cited.replay, `curl -sS -A '${sent.headers.get("user-agent")}' '${cited.request.url}'`);
    const json = await s.client.callTool({
      name: "geonorge-datasets",
      arguments: { query: "kulturminner", response_format: "json" },
    });
    const parsed = JSON.parse((json.content as { text: string }[])[0]!.text);
    assert.equal(parsed.provenance.sha256, sha, "the JSON text carries the provenance inside it");
    await assert.rejects(
      s.client.readResource({ uri: "opendata://citation/geonorge/00000000000000000000" }),
      /No such citation here/,
    );
  });

  await t.step("every upstream request names the project and the operator's contact", () => {
    const ua = fake.requests.at(-1)!.headers.get("user-agent") ?? "";
    assert.match(
      ua,
      /^opendata-mcp\/\S+ \(\+https:\/\/github\.com\/opendata-mcp\/opendata-mcp; ops@example\.org\)$/,
    );
  });
});
