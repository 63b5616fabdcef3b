// FRED point in time (docs/apis/fred.md): every observations answer says which vintage it shows, the
// ALFRED parameters reach FRED as given, hints lead to them, and the answer's provenance names the
// vintage, the series page and the request with the api_key masked; against the recorded GNPCA
// observations (FRED's documented example) over stdio.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { startFakeFred, TEST_KEY } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";

type Json = Record<string, unknown>;

Deno.test("fred_series get_observations names its vintage and reaches ALFRED's", async (t) => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({ fake }));
  const call = async (args: Json) => {
    const r = await s.client.callTool({ name: "fred_series", arguments: { output: "screen", ...args } });
    const text = (r.content as { text: string }[])[0]!.text;
    assert.notEqual(r.isError, true, text);
    return { text, structured: r.structuredContent as Json };
  };

  await t.step(
    "the current vintage is named, with FRED's own real-time date and how to ask for another",
    async () => {
      const r = await call({ operation: "get_observations", series_id: "GNPCA", limit: 3 });
      const v = r.structured["vintage"] as Json;
      assert.deepEqual(
        [v["realtime_start"], v["realtime_end"], v["output_type"], v["current"]],
        ["2013-08-14", "2013-08-14", 1, true],
      );
      assert.match(
        r.text,
        /^Vintage: current vintage \(FRED's data as of 2013-08-14\)\. Other vintages \(ALFRED\): realtime_start/m,
      );
      assert.match(r.text, /"get_vintage_dates"/, "the hint names the operation that lists vintages");
      const p = r.structured["provenance"] as Json;
      assert.equal(p["as_of"], "vintage: current vintage (FRED's data as of 2013-08-14)");
      assert.equal(p["permalink"], "https://fred.stlouisfed.org/series/GNPCA");
      assert.match(String(p["licence"]), /not endorsed by the Federal Reserve Bank of St\. Louis/);
      assert.equal(p["request"], undefined, "the citation holds the request; the answer does not repeat it");
      assert.doesNotMatch(JSON.stringify(r.structured), /api_key/);
    },
  );

  await t.step("realtime_start and realtime_end reach FRED and the answer says 'as known on'", async () => {
    const r = await call({
      operation: "get_observations",
      series_id: "GNPCA",
      realtime_start: "2008-10-01",
      realtime_end: "2008-10-01",
      limit: 2,
    });
    const sent = fake.requests.at(-1)!.url.searchParams;
    assert.deepEqual([sent.get("realtime_start"), sent.get("realtime_end")], ["2008-10-01", "2008-10-01"]);
    const v = r.structured["vintage"] as Json;
    assert.equal(v["current"], false);
    // The recorded body echoes its own real-time period (2013-08-14), which the answer reports as FRED sent it.
    assert.equal(v["realtime_start"], "2013-08-14");
    assert.equal(
      (r.structured["provenance"] as Json)["permalink"],
      "https://alfred.stlouisfed.org/series?seid=GNPCA",
    );
  });

  await t.step("vintage_dates with output_type 2 and output_type 4 are named as such", async () => {
    const by = await call({
      operation: "get_observations",
      series_id: "GNPCA",
      vintage_dates: ["2020-07-04", "2021-03-25"],
      output_type: 2,
      limit: 2,
    });
    const sent = fake.requests.at(-1)!.url.searchParams;
    assert.deepEqual([sent.get("vintage_dates"), sent.get("output_type")], ["2020-07-04,2021-03-25", "2"]);
    assert.equal(
      (by.structured["vintage"] as Json)["label"],
      "by vintage date, one column per vintage (2 vintages, 2020-07-04 to 2021-03-25)",
    );
    const first = await call({ operation: "get_observations", series_id: "GNPCA", output_type: 4, limit: 2 });
    assert.match(first.text, /Vintage: initial release only/);
  });

  await t.step("a series' metadata names FRED's last update as its as-of", async () => {
    const r = await call({ operation: "get", series_id: "GNPCA" });
    const p = r.structured["provenance"] as Json;
    assert.match(String(p["as_of"]), /^series last updated \d{4}-\d{2}-\d{2}/);
    assert.equal(p["permalink"], "https://fred.stlouisfed.org/series/GNPCA");
    assert.equal(r.structured["vintage"], undefined, "only observations name a vintage");
  });

  await t.step("the citation replays the request with the api_key left out", async () => {
    const r = await call({ operation: "get_observations", series_id: "GNPCA", limit: 2 });
    const citation = String((r.structured["provenance"] as Json)["citation"]);
    const read = await s.client.readResource({ uri: citation });
    const doc = JSON.parse((read.contents[0] as { text: string }).text);
    assert.deepEqual(doc.secrets_left_out, ["api_key"]);
    assert.match(doc.request.url, /\/fred\/series\/observations\?.*api_key=\*\*\*/);
    assert.ok(!JSON.stringify(doc).includes(TEST_KEY) && !r.text.includes(TEST_KEY), "the key never shows");
    assert.match(doc.note, /Replace the \*\*\* of "api_key"/);
  });
});
