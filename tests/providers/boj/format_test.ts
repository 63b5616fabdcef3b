import assert from "node:assert/strict";
import type { DataResponse, MetadataResponse } from "../../../lib/providers/boj/decode.ts";
import { parseDataBody, parseMetadataBody } from "../../../lib/providers/boj/decode.ts";
import { latestPoint, MIN_POINTS, renderData } from "../../../lib/providers/boj/format.ts";
import { layerPath, matchesQuery, renderMetadata } from "../../../lib/providers/boj/metadata_format.ts";
import { dataOutput, metadataOutput } from "../../../lib/providers/boj/schemas.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const META = { status: 200, message_id: "M181000I", message: "Successfully completed", date: null };

function daily(code: string, n: number): DataResponse["series"][number] {
  return {
    series_code: code,
    name_of_time_series: `Series ${code}`,
    frequency: "DAILY",
    points: Array.from({ length: n }, (_, i) => ({
      survey_date: String(19900101 + i),
      period: String(19900101 + i),
      value: i === n - 1 ? null : i / 100,
    })),
  };
}

function big(series: number, points: number): DataResponse {
  return {
    meta: META,
    parameter: { db: "FM01" },
    next_position: null,
    series: Array.from({ length: series }, (_, i) => daily(`S${i}`, points)),
  };
}

Deno.test("latestPoint() skips trailing missing values", () => {
  assert.deepEqual(
    latestPoint([{ survey_date: "1", period: "1", value: 2 }, {
      survey_date: "2",
      period: "2",
      value: null,
    }]),
    { survey_date: "1", period: "1", value: 2 },
  );
  assert.equal(latestPoint([{ survey_date: "1", period: "1", value: null }]), null);
});

Deno.test("renderData() returns a small answer whole, with source and credit", () => {
  const response = parseDataBody(fixtureText("boj/json_success_code_api.json"));
  const r = renderData({
    tool: "boj_get_data_code",
    response,
    url: "https://www.stat-search.boj.or.jp/api/v1/getDataCode?db=CO",
    responseFormat: "markdown",
    limit: 25_000,
  });
  dataOutput.parse(r.structured);
  assert.equal(r.structured.truncated, false);
  assert.deepEqual(r.structured.notices, []);
  assert.equal(r.structured.raw, undefined, "no raw unless asked");
  assert.deepEqual(r.structured.series![0]!.latest, { survey_date: "202401", period: "2024Q1", value: 11 });
  assert.match(r.text, /\| 202402 \| — \|/);
  assert.match(r.text, /日本銀行時系列統計データ検索サイト/);
  assert.match(r.text, /not guaranteed by the Bank of Japan/);
  assert.match(r.structured.source.credit_ja, /保証されたものではありません/);
});

Deno.test("renderData() keeps the most recent points of every series when the answer is too long", () => {
  for (const format of ["markdown", "json"] as const) {
    const r = renderData({
      tool: "boj_get_data_code",
      response: big(3, 5000),
      url: "u",
      responseFormat: format,
      limit: 25_000,
    });
    assert.ok(r.text.length <= 25_000, `${format} text fits`);
    assert.ok(JSON.stringify(r.structured).length <= 25_000, `${format} structured fits`);
    assert.equal(r.structured.truncated, true);
    assert.equal(r.structured.series_count, 3);
    const s = r.structured.series![0]!;
    assert.equal(s.points_total, 5000);
    assert.equal(s.points_truncated, true);
    assert.ok(s.points.length > 10 && s.points.length < 5000);
    assert.equal(s.points.at(-1)!.survey_date, String(19900101 + 4999), "the newest point is kept");
    assert.deepEqual(s.latest, {
      survey_date: String(19900101 + 4998),
      period: String(19900101 + 4998),
      value: 49.98,
    });
    assert.match(r.structured.notices.join(" "), /most recent \d+ observations/);
    assert.match(r.text, /most recent \d+ observations/);
  }
});

Deno.test("renderData() leaves whole series for the next call when MIN_POINTS each do not fit, and says where to go on", () => {
  const r = renderData({
    tool: "boj_get_data_code",
    response: big(250, 40),
    url: "u",
    responseFormat: "markdown",
    limit: 5_000,
  });
  assert.ok(r.text.length <= 5_000);
  const n = r.structured.series_count;
  assert.ok(n > 0 && n < 250);
  assert.equal(r.structured.series_total, 250);
  assert.ok(
    r.structured.series!.every((s) => s.points.length >= MIN_POINTS),
    "each shown series keeps MIN_POINTS",
  );
  assert.equal(r.structured.next_series_offset, n);
  assert.deepEqual(r.structured.continue_with, { start_position: null, series_offset: n });
  assert.ok(
    r.structured.notices.some((x) => x.includes(`series_offset=${n}`)),
    r.structured.notices.join("\n"),
  );
  const next = renderData({
    tool: "boj_get_data_code",
    response: big(250, 40),
    url: "u",
    responseFormat: "markdown",
    limit: 5_000,
    seriesOffset: n,
  });
  assert.equal(next.structured.series_offset, n);
  assert.equal(next.structured.series![0]!.series_code, `S${n}`);
});

Deno.test("renderData() keeps a raw excerpt and says how much of the body it holds, keeping the data whole", () => {
  const response = big(1, 50);
  const raw = "x".repeat(40_000);
  const r = renderData({
    tool: "boj_get_data_layer",
    response,
    url: "u",
    raw,
    responseFormat: "json",
    limit: 25_000,
  });
  assert.equal(r.structured.series![0]!.points.length, 50);
  assert.equal(r.structured.raw_truncated, true);
  assert.ok(r.structured.raw!.length > 1000 && r.structured.raw!.length < 40_000);
  assert.ok(r.text.length <= 25_000);
  assert.match(r.structured.notices.join(" "), /raw holds the first [\d,]+ of the 40,000 characters/);
});

Deno.test("renderData() passes next_position through and says how to continue", () => {
  const response = { ...big(1, 3), next_position: 255 };
  const r = renderData({
    tool: "boj_get_data_layer",
    response,
    url: "u",
    responseFormat: "markdown",
    limit: 25_000,
  });
  assert.equal(r.structured.next_position, 255);
  assert.equal(r.structured.truncated, false, "BOJ paging is not a cut of ours");
  assert.match(r.structured.notices[0]!, /250 series and 60,000 data points.*start_position=255/);
  assert.match(r.text, /start_position=255/);
});

Deno.test("renderData() explains an empty M181030I answer", () => {
  const response = parseDataBody(fixtureText("boj/json_success_no_data.json"));
  const r = renderData({
    tool: "boj_get_data_code",
    response,
    url: "u",
    responseFormat: "markdown",
    limit: 25_000,
  });
  assert.equal(r.structured.series_count, 0);
  assert.match(r.structured.notices.join(" "), /no data.*boj_get_metadata/);
});

Deno.test("layerPath() drops trailing zero levels", () => {
  assert.equal(layerPath({ layer1: 1, layer2: 2, layer3: 0, layer4: 0, layer5: 0 }), "1,2");
  assert.equal(layerPath({ layer1: 3, layer2: 0, layer3: 0, layer4: 0, layer5: 0 }), "3");
  assert.equal(layerPath({ layer1: 1, layer2: 0, layer3: 4, layer4: 0, layer5: 0 }), "1,0,4");
});

Deno.test("matchesQuery() needs every word, in English or Japanese, ignoring case and width", () => {
  const meta = parseMetadataBody(fixtureText("boj/json_success_metadata_api.json"));
  const fx = meta.entries[1]!;
  assert.ok(matchesQuery(fx, "dollar YEN"));
  assert.ok(matchesQuery(fx, "ドル 円"));
  assert.ok(matchesQuery(fx, "ｆｘｅｒｄ01"), "full-width letters fold to ASCII");
  assert.ok(!matchesQuery(fx, "dollar euro"));
});

function fm01(): MetadataResponse {
  return parseMetadataBody(fixtureText("boj/constructed_getMetadata_FM01_en.json"));
}

Deno.test("renderMetadata() filters, pages and adds the layer argument", () => {
  const r = renderMetadata({
    response: fm01(),
    url: "u",
    query: "call",
    offset: 1,
    limit: 2,
    responseFormat: "markdown",
    characterLimit: 25_000,
  });
  metadataOutput.parse(r.structured);
  assert.equal(r.structured.entries_in_db, 6);
  assert.equal(r.structured.total, 6);
  assert.equal(r.structured.count, 2);
  assert.equal(r.structured.entries_count, 2);
  assert.equal(r.structured.has_more, true);
  assert.equal(r.structured.next_offset, 3);
  assert.deepEqual(r.structured.entries!.map((e) => [e.series_code, e.layer]), [["STRDCLUCON", "1,1"], [
    "STRDCLUCONH",
    "1,2",
  ]]);
  assert.match(r.text, /call again with offset=3/);
});

Deno.test("renderMetadata() cuts rows to the character limit and points at the next offset", () => {
  const response = fm01();
  const many = { ...response, entries: Array.from({ length: 400 }, () => response.entries[1]!) };
  const r = renderMetadata({
    response: many,
    url: "u",
    offset: 0,
    limit: 400,
    responseFormat: "json",
    characterLimit: 10_000,
  });
  assert.ok(r.text.length <= 10_000);
  assert.equal(r.structured.truncated, true);
  assert.ok(r.structured.count < 400);
  assert.equal(r.structured.next_offset, r.structured.count);
  assert.match(r.structured.notices[0]!, new RegExp(`offset=${r.structured.count}`));
});

Deno.test("renderMetadata() says when a query matches nothing", () => {
  const r = renderMetadata({
    response: fm01(),
    url: "u",
    query: "bitcoin",
    offset: 0,
    limit: 50,
    responseFormat: "markdown",
    characterLimit: 25_000,
  });
  assert.equal(r.structured.total, 0);
  assert.match(r.structured.notices.join(" "), /No row of FM01 matches "bitcoin"/);
});
