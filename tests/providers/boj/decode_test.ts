import assert from "node:assert/strict";
import { ToolError } from "../../../lib/errors.ts";
import {
  decodeText,
  isErrorMessageId,
  isSuccess,
  parseDataBody,
  parseErrorMeta,
  parseMetadataBody,
  sniffStatus,
} from "../../../lib/providers/boj/decode.ts";
import { fixtureBytes, fixtureText } from "../../fakes/upstream.ts";

const JP_NAME = "D.I./業況/大企業/製造業/実績";

function isDecodeError(e: unknown): boolean {
  return e instanceof ToolError && e.errorType === "DECODE_ERROR" && e.retryable === false;
}

Deno.test("decodeText() reads Shift_JIS bytes when no charset is declared", () => {
  const text = decodeText(fixtureBytes("boj/csv_success_jp_shiftjis.csv"), "text/csv");
  assert.match(text, /MESSAGE,正常に終了しました。/);
  assert.ok(text.includes(JP_NAME));
});

Deno.test("decodeText() honours a declared Shift_JIS charset and strips a UTF-8 byte order mark", () => {
  const sjis = decodeText(fixtureBytes("boj/csv_success_jp_shiftjis.csv"), "text/csv; charset=Shift_JIS");
  assert.ok(sjis.includes(JP_NAME));
  const bom = decodeText(fixtureBytes("boj/csv_success_jp_utf8_bom.csv"), "text/csv");
  assert.ok(bom.startsWith("STATUS,200"), "the BOM is removed");
});

Deno.test("decodeText() is not misled by a wrong declared charset either way", () => {
  const sjis = decodeText(fixtureBytes("boj/csv_success_jp_shiftjis.csv"), "text/csv; charset=utf-8");
  assert.ok(sjis.includes(JP_NAME));
  // These UTF-8 bytes also form valid Shift_JIS ("遏ｭ隕ｳ 繝峨Ν"), so the label must not win.
  const bytes = new TextEncoder().encode('{"MESSAGE":"短観 ドル"}');
  assert.equal(decodeText(bytes, "application/json; charset=Shift_JIS"), '{"MESSAGE":"短観 ドル"}');
});

Deno.test("decodeText() refuses bytes that are neither UTF-8 nor Shift_JIS with a DECODE_ERROR", () => {
  assert.throws(() => decodeText(new Uint8Array([0x82, 0xff, 0xff, 0x80])), isDecodeError);
});

Deno.test("parseDataBody() reads a getDataCode JSON answer", () => {
  const r = parseDataBody(fixtureText("boj/json_success_code_api.json"));
  assert.deepEqual(r.meta, {
    status: 200,
    message_id: "M181000I",
    message: "正常に終了しました。",
    date: "2026-02-19T12:38:18.251+09:00",
  });
  assert.deepEqual(r.parameter, {
    format: "JSON",
    lang: "JP",
    db: "CO",
    start_date: "202401",
    end_date: "202401",
    start_position: "",
  });
  assert.equal(r.next_position, null);
  assert.equal(r.series.length, 1);
  const s = r.series[0]!;
  assert.equal(s.series_code, "TK99F1000601GCQ01000");
  assert.equal(s.name_of_time_series_j, JP_NAME);
  assert.equal(s.last_update, "20251216", "a numeric LAST_UPDATE becomes a string");
  assert.deepEqual(s.points, [{ survey_date: "202401", period: "2024Q1", value: 11 }, {
    survey_date: "202402",
    period: "2024Q2",
    value: null,
  }]);
});

Deno.test("parseDataBody() reads the same series from CSV in English UTF-8, Japanese Shift_JIS and UTF-8 with BOM", () => {
  const en = parseDataBody(decodeText(fixtureBytes("boj/csv_success_en_utf8.csv")));
  const sjis = parseDataBody(decodeText(fixtureBytes("boj/csv_success_jp_shiftjis.csv")));
  const bom = parseDataBody(decodeText(fixtureBytes("boj/csv_success_jp_utf8_bom.csv")));
  for (const r of [en, sjis, bom]) {
    assert.equal(r.meta.status, 200);
    assert.equal(r.next_position, null, "a blank NEXTPOSITION is null");
    assert.equal(r.parameter["db"], "CO");
    assert.equal(r.series.length, 1);
    assert.deepEqual(r.series[0]!.points, [{ survey_date: "202401", period: "2024Q1", value: 11 }, {
      survey_date: "202402",
      period: "2024Q2",
      value: null,
    }]);
  }
  assert.equal(
    en.series[0]!.name_of_time_series,
    "D.I./Business Conditions/Large Enterprises/Manufacturing/Actual result",
  );
  assert.equal(sjis.series[0]!.name_of_time_series_j, JP_NAME);
  assert.equal(sjis.series[0]!.unit_j, "%ポイント");
  assert.deepEqual(bom.series[0], sjis.series[0]);
});

Deno.test("parseDataBody() groups CSV rows by series and keeps quoted names whole", () => {
  const r = parseDataBody(fixtureText("boj/constructed_getDataLayer_FM01_D_en_utf8.csv"));
  assert.deepEqual(r.series.map((s) => s.series_code), ["STRDCLUCON", "STRDCLUCONH", "STRDCLUCONL"]);
  assert.equal(r.series[0]!.name_of_time_series, "Call Rate, Uncollateralized Overnight, Average (Daily)");
  assert.equal(r.series[0]!.points.length, 3);
  assert.equal(r.series[0]!.points[2]!.value, null);
  assert.equal(r.parameter["layer1"], "1");
  assert.equal(r.parameter["frequency"], "D");
});

Deno.test("parseDataBody() reads NEXTPOSITION given as a number or a numeric string", () => {
  const base = JSON.parse(fixtureText("boj/constructed_getDataLayer_FM01_D_en.json"));
  assert.equal(parseDataBody(JSON.stringify({ ...base, NEXTPOSITION: 255 })).next_position, 255);
  assert.equal(parseDataBody(JSON.stringify({ ...base, NEXTPOSITION: "251" })).next_position, 251);
});

Deno.test("parseDataBody() keeps a non-numeric value as text and numeric strings as numbers", () => {
  const body = JSON.stringify({
    STATUS: 200,
    MESSAGEID: "M181000I",
    MESSAGE: "ok",
    RESULTSET: [{ SERIES_CODE: "X", VALUES: { SURVEY_DATES: ["2024"], VALUES: ["1.5"] } }, {
      SERIES_CODE: "Y",
      VALUES: { SURVEY_DATES: [2024], VALUES: ["ND"] },
    }],
  });
  const r = parseDataBody(body);
  assert.equal(r.series[0]!.points[0]!.value, 1.5);
  assert.equal(r.series[1]!.points[0]!.value, "ND");
  assert.equal(r.meta.date, null);
});

Deno.test("parseDataBody() reads the JSON error a CSV request gets", () => {
  const r = parseDataBody(fixtureText("boj/csv_error_json_payload.json"));
  assert.equal(r.meta.status, 400);
  assert.equal(r.meta.message_id, "M181004E");
  assert.deepEqual(r.series, []);
});

Deno.test("parseDataBody() raises DECODE_ERROR for HTML, cut-off JSON and bodies without STATUS", () => {
  assert.throws(() => parseDataBody("<!DOCTYPE html><html><body>Maintenance</body></html>"), isDecodeError);
  const text = fixtureText("boj/json_success_code_api.json");
  assert.throws(() => parseDataBody(text.slice(0, 120)), isDecodeError);
  assert.throws(() => parseDataBody('{"RESULTSET": []}'), isDecodeError);
  assert.throws(() => parseDataBody("SERIES_CODE,VALUES\nX,1\n"), isDecodeError);
});

Deno.test("parseMetadataBody() reads JSON rows with layers and heading rows", () => {
  const r = parseMetadataBody(fixtureText("boj/json_success_metadata_api.json"));
  assert.equal(r.db, "FM08");
  assert.equal(r.entries.length, 2);
  assert.equal(r.entries[0]!.series_code, "");
  assert.equal(r.entries[0]!.unit, undefined, "empty fields are left out");
  const fx = r.entries[1]!;
  assert.equal(fx.series_code, "FXERD01");
  assert.deepEqual([fx.layer1, fx.layer2, fx.layer3], [1, 1, 0]);
  assert.equal(fx.start_of_the_time_series, "19990101");
  assert.equal(fx.last_update, "20260219");
});

Deno.test("parseMetadataBody() reads the trimmed observed answer with a short DATE hour", () => {
  const r = parseMetadataBody(fixtureText("boj/observed_getMetadata_FM01_en.json"));
  assert.equal(r.meta.date, "2026-02-21T5:00:11.476+09:00");
  assert.equal(r.entries[0]!.layer3, 0, "missing layers read as 0");
});

Deno.test("parseMetadataBody() reads metadata CSV in English UTF-8 and Japanese Shift_JIS", () => {
  const en = parseMetadataBody(fixtureText("boj/csv_success_metadata_en_utf8.csv"));
  assert.equal(en.db, "FM08");
  assert.equal(en.entries[1]!.notes, "Central rates");
  const jp = parseMetadataBody(decodeText(fixtureBytes("boj/constructed_getMetadata_FM01_jp_shiftjis.csv")));
  assert.equal(jp.db, "FM01");
  assert.equal(jp.entries.length, 6);
  const con = jp.entries.find((e) => e.series_code === "STRDCLUCON")!;
  assert.equal(con.name_of_time_series_j, "無担保コールＯ／Ｎ物レート／平均値 日次／金利");
  assert.equal(con.name_of_time_series, "Call Rate, Uncollateralized Overnight, Average (Daily)");
  assert.equal(con.unit_j, "年％");
});

Deno.test("parseErrorMeta() reads an error body and ignores what is not one", () => {
  assert.equal(parseErrorMeta(fixtureText("boj/json_error_400_invalid_db.json"))?.message_id, "M181005E");
  assert.equal(parseErrorMeta("<html>Bad gateway</html>"), undefined);
  assert.equal(parseErrorMeta('{"STATUS": 500, "MESS'), undefined);
  assert.equal(parseErrorMeta(undefined), undefined);
});

Deno.test("sniffStatus() reads the STATUS of JSON and CSV bodies in every encoding, and none of an HTML page", () => {
  const cases: [string, number][] = [
    ["boj/json_success_code_api.json", 200],
    ["boj/json_error_400_invalid_db.json", 400],
    ["boj/json_error_500_internal.json", 500],
    ["boj/csv_success_en_utf8.csv", 200],
    ["boj/csv_success_jp_shiftjis.csv", 200],
    ["boj/csv_success_jp_utf8_bom.csv", 200],
    ["boj/constructed_getMetadata_FM01_jp_shiftjis.csv", 200],
  ];
  for (const [fixture, status] of cases) assert.equal(sniffStatus(fixtureBytes(fixture)), status, fixture);
  const bytes = (s: string) => new TextEncoder().encode(s);
  assert.equal(sniffStatus(bytes('{"STATUS": "503", "MESSAGEID": "M181091S"}')), 503);
  assert.equal(sniffStatus(bytes("<!DOCTYPE html><html><body>Maintenance</body></html>")), undefined);
  assert.equal(sniffStatus(new Uint8Array()), undefined);
});

Deno.test("parseDataBody() refuses a STATUS 200 answer whose RESULTSET is missing or holds no series", () => {
  const ok = { STATUS: 200, MESSAGEID: "M181000I", MESSAGE: "Successfully completed", DATE: null };
  for (
    const bad of [{ ...ok }, { ...ok, RESULTSET: "x" }, { ...ok, RESULTSET: [1] }, { ...ok, RESULTSET: [{}] }]
  ) {
    assert.throws(
      () => parseDataBody(JSON.stringify(bad)),
      (e: unknown) => e instanceof ToolError && e.errorType === "DECODE_ERROR",
      JSON.stringify(bad),
    );
  }
  assert.deepEqual(
    parseDataBody(JSON.stringify({ ...ok, RESULTSET: [] })).series,
    [],
    "an empty list is no data",
  );
  // An error answer carries no RESULTSET at all.
  assert.equal(
    parseDataBody(JSON.stringify({ STATUS: 400, MESSAGEID: "M181005E", MESSAGE: "x" })).meta.status,
    400,
  );
});

Deno.test("isSuccess() wants STATUS 200 and no error MESSAGEID", () => {
  const meta = (status: number, message_id: string) => ({ status, message_id, message: "", date: null });
  assert.equal(isSuccess(meta(200, "M181000I")), true);
  assert.equal(isSuccess(meta(200, "M181030I")), true);
  assert.equal(isSuccess(meta(200, "M181005E")), false);
  assert.equal(isSuccess(meta(200, "M181091S")), false);
  assert.equal(isSuccess(meta(400, "M181005E")), false);
  assert.equal(isErrorMessageId("M181013E"), true);
});
