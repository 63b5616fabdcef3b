// BOJ period labels (docs/apis/boj.md): survey dates are labelled by the series' frequency and the raw
// value is kept, against recorded bodies (a quarterly CSV and an observed daily JSON) over stdio.
import assert from "node:assert/strict";
import { parseDataBody } from "../../../lib/providers/boj/decode.ts";
import { periodLabel } from "../../../lib/providers/boj/period.ts";
import { openProvider } from "../../harness/provider.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { boj, ok, texts } from "./_helpers.ts";

Deno.test("periodLabel() names each frequency's periods and leaves what does not fit raw", () => {
  const cases: [string, string, string][] = [
    ["202504", "QUARTERLY", "2025Q4"],
    ["202504", "Q", "2025Q4"],
    ["202502", "SEMIANNUAL", "2025H2"],
    ["202501", "SEMIANNUAL(SEP)", "FY2025H1"],
    ["2025", "ANNUAL(MAR)", "FY2025"],
    ["2025", "FY", "FY2025"],
    ["2025", "ANNUAL", "2025"],
    ["202504", "MONTHLY", "2025-04"],
    ["20250418", "DAILY", "2025-04-18"],
    ["20250414", "WEEKLY(MONDAY)", "2025-04-14"],
    ["202505", "QUARTERLY", "202505"],
    ["202513", "MONTHLY", "202513"],
    ["202504", "", "202504"],
    ["20250418", "", "2025-04-18"],
    ["202504", "HOURLY", "202504"],
  ];
  for (const [raw, frequency, label] of cases) {
    assert.equal(periodLabel(raw, frequency), label, `${raw} ${frequency}`);
  }
});

function bodies(r: Received): Reply {
  const db = r.url.searchParams.get("db") ?? r.url.searchParams.get("DB");
  return db === "FM01"
    ? { fixture: "boj/observed_getDataCode_FM01_STRDCLUCON_en.json" }
    : { fixture: "boj/csv_success_en_utf8.csv", contentType: "text/csv; charset=utf-8" };
}

Deno.test("boj_get_data_code labels quarters and days by frequency and keeps survey_date raw", async () => {
  await using s = await openProvider(boj({ routes: [{ path: "/api/v1/getDataCode", reply: bodies }] }));

  const quarterly = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: {
      db: "CO",
      codes: ["TK99F1000601GCQ01000"],
      format: "csv",
      lang: "en",
      response_format: "json",
    },
  });
  const q = ok(quarterly).series[0];
  assert.equal(q.frequency, "QUARTERLY");
  assert.deepEqual(
    q.points.map((p: { survey_date: string; period: string }) => [p.survey_date, p.period]),
    [["202401", "2024Q1"], ["202402", "2024Q2"]],
  );
  assert.deepEqual([q.latest.survey_date, q.latest.period], ["202401", "2024Q1"]);
  const md = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db: "CO", codes: ["TK99F1000601GCQ01000"], format: "csv", lang: "en" },
  });
  const text = texts(md)[0]!;
  assert.match(text, /\| 2024Q1 \| 202401 \| 11 \|/, text);
  assert.doesNotMatch(text, /^\| 202401 \|/m, "the raw value is never shown alone as the period");
  assert.match(
    text,
    /Provenance: BOJ API .*as of series last updated 2025-12-16; answer dated 2026-02-19T12:38:31\.167\+09:00/,
  );

  const daily = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db: "FM01", codes: ["STRDCLUCON"], lang: "en", response_format: "json" },
  });
  const d = ok(daily);
  assert.deepEqual(
    d.series[0].points.map((p: { survey_date: string; period: string }) => [p.survey_date, p.period]),
    [["19980105", "1998-01-05"], ["19980106", "1998-01-06"]],
  );
  assert.match(d.provenance.sha256, /^[0-9a-f]{64}$/);
  assert.match(d.provenance.licence, /Source: Bank of Japan/);
});

Deno.test("parseDataBody() labels a series without FREQUENCY by the layer request's frequency echo", () => {
  // The observed answer's shape (trimmed: no FREQUENCY per series), as a quarterly getDataLayer.
  const body = JSON.parse(fixtureText("boj/observed_getDataCode_FM01_STRDCLUCON_en.json"));
  body.PARAMETER = { ...body.PARAMETER, FREQUENCY: "Q" };
  body.RESULTSET[0].VALUES.SURVEY_DATES = [202503, 202504];
  const r = parseDataBody(JSON.stringify(body));
  assert.deepEqual(r.series[0]!.points.map((p) => p.period), ["2025Q3", "2025Q4"]);
});
