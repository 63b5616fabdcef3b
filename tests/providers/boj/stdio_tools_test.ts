// The six BOJ tools end to end: the real server over stdio against a fake BOJ API.
import { providerTools } from "../../harness/results.ts";
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import type { Received } from "../../fakes/upstream.ts";
import { boj, ok, texts } from "./_helpers.ts";

const TOOLS = [
  "boj_get_data_code",
  "boj_get_data_layer",
  "boj_get_metadata",
  "boj_list_databases",
  "boj_get_parameter_catalog",
  "boj_get_message_catalog",
];

const q = (r: Received, key: string) => r.url.searchParams.get(key);

Deno.test("boj tools/list shows six tools with outputSchema, read-only annotations and forbidden tasks", async () => {
  await using s = await openProvider(boj());
  const { fake } = s;
  const tools = providerTools((await s.client.listTools()).tools);
  assert.deepEqual(tools.map((t) => t.name), TOOLS);
  for (const t of tools) {
    assert.ok(t.outputSchema, `${t.name} has an outputSchema`);
    assert.equal(t.annotations?.readOnlyHint, true, t.name);
    assert.equal(t.annotations?.idempotentHint, true, t.name);
    assert.equal(t.annotations?.destructiveHint, false, t.name);
    assert.deepEqual(t.execution, { taskSupport: "forbidden" }, t.name);
    const props = t.inputSchema.properties as Record<string, { description?: string }>;
    for (const [k, v] of Object.entries(props)) assert.ok(v.description, `${t.name}.${k} is described`);
  }
  const code = tools[0]!.inputSchema as {
    properties: Record<string, { enum?: string[]; default?: unknown }>;
    required: string[];
  };
  // One case is served; the upper-case aliases are still accepted (see the alias test).
  assert.deepEqual(code.properties["format"]!.enum, ["json", "csv"]);
  assert.deepEqual(code.properties["lang"]!.enum, ["jp", "en"]);
  assert.equal(code.properties["include_raw"]!.default, false);
  assert.ok(!("frequency" in code.properties), "only the layer tool takes frequency");
  assert.deepEqual(code.required.sort(), ["codes", "db"]);
  const layer = tools[1]!.inputSchema as { required: string[] };
  assert.deepEqual(layer.required.sort(), ["db", "frequency", "layers"]);
  assert.equal(fake.requests.length, 0);
});

Deno.test("boj_get_data_code returns the series in markdown and json, raw only with include_raw", async () => {
  // The provider's smoke test through the real process (the others run the server in process).
  await using s = await openProvider(boj({
    spawn: true,
    routes: [
      { path: "/api/v1/getDataCode", reply: { fixture: "boj/json_success_code_api.json" } },
    ],
  }));
  const { fake } = s;
  const args = { db: "CO", codes: ["TK99F1000601GCQ01000"], start_date: "202401", end_date: "202401" };

  const md = await s.client.callTool({ name: "boj_get_data_code", arguments: args });
  const sc = ok(md);
  assert.equal(sc.meta.message_id, "M181000I");
  assert.equal(sc.series[0].series_code, "TK99F1000601GCQ01000");
  assert.deepEqual(sc.series[0].points, [{ survey_date: "202401", period: "2024Q1", value: 11 }, {
    survey_date: "202402",
    period: "2024Q2",
    value: null,
  }]);
  assert.deepEqual(sc.series[0].latest, { survey_date: "202401", period: "2024Q1", value: 11 });
  assert.equal(sc.next_position, null);
  assert.equal("raw" in sc, false, "include_raw defaults to false");
  const text = texts(md)[0]!;
  assert.match(text, /^# BOJ getDataCode CO: series 1–1 of 1/);
  assert.match(text, /Complete: nothing more to fetch/);
  assert.equal(sc.continue_with, null);
  assert.equal(sc.next_series_offset, null);
  assert.match(
    text,
    /\| TK99F1000601GCQ01000 \| .* \| 2024Q1 = 11 \| 2, 1 missing \| \(below\) \|/,
    "one row per series",
  );
  assert.match(text, /\| 202402 \| — \|/, "a single series' observations get their own table");
  assert.match(text, /D\.I\.\/業況\/大企業\/製造業\/実績/);
  assert.match(text, /Source: .*\/api\/v1\/getDataCode\?/);
  assert.match(text, /日本銀行時系列統計データ検索サイトの API 機能を使用しています/);
  assert.equal(sc.source.terms_url, "https://www.stat-search.boj.or.jp/info/api_notice.pdf");

  const sent = fake.requests[0]!;
  assert.equal(q(sent, "db"), "CO");
  assert.equal(q(sent, "code"), "TK99F1000601GCQ01000");
  assert.equal(q(sent, "format"), "JSON");
  assert.equal(q(sent, "startDate"), "202401");
  assert.equal(q(sent, "endDate"), "202401");
  assert.equal(q(sent, "lang"), null, "lang is left to the API default when omitted");

  const json = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { ...args, response_format: "json", include_raw: true },
  });
  const withRaw = ok(json);
  assert.deepEqual(JSON.parse(texts(json)[0]!), withRaw, "the json text block is the structured content");
  assert.equal(withRaw.raw, fixtureText("boj/json_success_code_api.json"));
  assert.equal(withRaw.raw_truncated, false);
});

Deno.test("boj_get_data_code sends several codes comma-separated and continues with start_position", async () => {
  const page1 = JSON.parse(fixtureText("boj/json_success_code_api.json"));
  page1.NEXTPOSITION = 2;
  const page2 = {
    ...page1,
    NEXTPOSITION: null,
    PARAMETER: { ...page1.PARAMETER, STARTPOSITION: "2" },
    RESULTSET: [{ SERIES_CODE: "TK99F2000601GCQ01000", VALUES: { SURVEY_DATES: [202401], VALUES: [5] } }],
  };
  await using s = await openProvider(boj({
    routes: [
      { path: "/api/v1/getDataCode", match: (r) => q(r, "startPosition") === "2", reply: { json: page2 } },
      { path: "/api/v1/getDataCode", reply: { json: page1 } },
    ],
  }));
  const { fake } = s;
  const codes = ["TK99F1000601GCQ01000", "TK99F2000601GCQ01000"];
  const first = await s.client.callTool({ name: "boj_get_data_code", arguments: { db: "CO", codes } });
  const sc1 = ok(first);
  assert.equal(sc1.next_position, 2);
  assert.match(sc1.notices[0], /at most 250 series and 60,000 data points.*start_position=2/);
  assert.match(texts(first)[0]!, /Continue with: start_position=2, series_offset=0 \(BOJ next_position: 2\)/);
  assert.deepEqual(sc1.continue_with, { start_position: 2, series_offset: 0 });
  // The next page is a ready call, in the text as in the structured content.
  assert.deepEqual(sc1.next_calls, [{
    tool: "boj_get_data_code",
    arguments: { db: "CO", codes, start_position: 2 },
    for: "the next page",
  }]);
  assert.match(
    texts(first)[0]!,
    /the next page: boj_get_data_code \{"db":"CO","codes":\[[^\]]+\],"start_position":2\}/,
  );
  assert.match(
    fake.requests[0]!.url.search,
    /code=TK99F1000601GCQ01000,TK99F2000601GCQ01000/,
    "commas stay literal",
  );

  const second = ok(
    await s.client.callTool({ name: "boj_get_data_code", arguments: { db: "CO", codes, start_position: 2 } }),
  );
  assert.equal(q(fake.requests[1]!, "startPosition"), "2");
  assert.equal(second.next_position, null);
  assert.equal(second.series[0].series_code, "TK99F2000601GCQ01000");
});

Deno.test("boj tools normalise format, lang, db and frequency aliases before calling BOJ", async () => {
  await using s = await openProvider(boj({
    routes: [
      { path: "/api/v1/getDataCode", reply: { fixture: "boj/csv_success_en_utf8.csv" } },
      { path: "/api/v1/getDataLayer", reply: { fixture: "boj/constructed_getDataLayer_FM01_D_en.json" } },
      { path: "/api/v1/getMetadata", reply: { fixture: "boj/json_success_metadata_api.json" } },
    ],
  }));
  const { fake } = s;
  ok(
    await s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db: "co", codes: ["TK99F1000601GCQ01000"], format: "CSV", lang: "en" },
    }),
  );
  ok(
    await s.client.callTool({
      name: "boj_get_data_layer",
      arguments: { db: "fm01", frequency: "d", layers: ["1", "*"], format: "json", lang: "EN" },
    }),
  );
  ok(
    await s.client.callTool({
      name: "boj_get_metadata",
      arguments: { db: "Fm08", format: "JSON", lang: "JP" },
    }),
  );
  const [code, layer, meta] = fake.requests;
  assert.deepEqual([q(code!, "format"), q(code!, "lang"), q(code!, "db")], ["CSV", "EN", "CO"]);
  assert.deepEqual([q(layer!, "format"), q(layer!, "lang"), q(layer!, "db"), q(layer!, "frequency")], [
    "JSON",
    "EN",
    "FM01",
    "D",
  ]);
  assert.match(layer!.url.search, /layer=1,\*/);
  assert.deepEqual([q(meta!, "format"), q(meta!, "lang"), q(meta!, "db")], ["JSON", "JP", "FM08"]);
});

Deno.test("boj_get_data_code decodes CSV in English UTF-8 and Japanese Shift_JIS or UTF-8 with BOM", async () => {
  const jp = (date: string) => (r: Received) => q(r, "lang") === "JP" && q(r, "startDate") === date;
  await using s = await openProvider(boj({
    routes: [
      {
        path: "/api/v1/getDataCode",
        match: jp("202401"),
        reply: { fixture: "boj/csv_success_jp_shiftjis.csv" },
      },
      {
        path: "/api/v1/getDataCode",
        match: jp("202402"),
        reply: { fixture: "boj/csv_success_jp_shiftjis.csv", contentType: "text/csv; charset=Shift_JIS" },
      },
      {
        path: "/api/v1/getDataCode",
        match: jp("202403"),
        reply: { fixture: "boj/csv_success_jp_utf8_bom.csv" },
      },
      { path: "/api/v1/getDataCode", reply: { fixture: "boj/csv_success_en_utf8.csv" } },
    ],
  }));
  const call = (lang: string, start: string) =>
    s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db: "CO", codes: ["TK99F1000601GCQ01000"], format: "csv", lang, start_date: start },
    });
  const en = ok(await call("en", "202401"));
  assert.equal(en.parameter.format, "CSV");
  assert.equal(
    en.series[0].name_of_time_series,
    "D.I./Business Conditions/Large Enterprises/Manufacturing/Actual result",
  );
  assert.equal(en.series[0].unit, "% points");
  for (const start of ["202401", "202402", "202403"]) {
    const result = await call("jp", start);
    const sc = ok(result);
    assert.equal(sc.meta.message, "正常に終了しました。", start);
    assert.equal(sc.series[0].name_of_time_series_j, "D.I./業況/大企業/製造業/実績", start);
    assert.equal(sc.series[0].category_j, "全国短観・判断項目", start);
    assert.deepEqual(sc.series[0].points, [{ survey_date: "202401", period: "2024Q1", value: 11 }, {
      survey_date: "202402",
      period: "2024Q2",
      value: null,
    }]);
    assert.match(texts(result)[0]!, /%ポイント/);
  }
  const raw = ok(
    await s.client.callTool({
      name: "boj_get_data_code",
      arguments: {
        db: "CO",
        codes: ["TK99F1000601GCQ01000"],
        format: "csv",
        lang: "jp",
        start_date: "202401",
        include_raw: true,
      },
    }),
  );
  assert.match(
    raw.raw,
    /^STATUS,200\nMESSAGEID,M181000I\nMESSAGE,正常に終了しました。/,
    "raw is the decoded text",
  );
});

Deno.test("boj_get_data_layer returns the series below a layer from JSON and CSV, and passes next_position on", async () => {
  const paged = {
    ...JSON.parse(fixtureText("boj/constructed_getDataLayer_FM01_D_en.json")),
    NEXTPOSITION: 255,
  };
  await using s = await openProvider(boj({
    routes: [
      {
        path: "/api/v1/getDataLayer",
        match: (r) => q(r, "format") === "CSV",
        reply: { fixture: "boj/constructed_getDataLayer_FM01_D_en_utf8.csv" },
      },
      { path: "/api/v1/getDataLayer", match: (r) => q(r, "db") === "MD10", reply: { json: paged } },
      { path: "/api/v1/getDataLayer", reply: { fixture: "boj/constructed_getDataLayer_FM01_D_en.json" } },
    ],
  }));
  const { fake } = s;
  const args = {
    db: "FM01",
    frequency: "D",
    layers: ["1"],
    lang: "en",
    start_date: "202602",
    end_date: "202602",
  };
  const md = await s.client.callTool({ name: "boj_get_data_layer", arguments: args });
  const json = ok(md);
  assert.deepEqual(json.series.map((x: { series_code: string }) => x.series_code), [
    "STRDCLUCON",
    "STRDCLUCONH",
    "STRDCLUCONL",
  ]);
  assert.equal(json.parameter.frequency, "D");
  assert.equal(json.parameter.layer1, "1");
  assert.deepEqual(json.series[0].latest, { survey_date: "20260217", period: "2026-02-17", value: 0.728 });
  assert.match(
    texts(md)[0]!,
    /\n\| STRDCLUCON \| Call Rate, Uncollateralized Overnight, Average \(Daily\) \| .* \| 2026-02-16 0\.727; 2026-02-17 0\.728; 2026-02-18 — \|\n/,
    "one table row per series, observations inline",
  );
  const sent = fake.requests[0]!;
  assert.deepEqual([q(sent, "frequency"), q(sent, "layer"), q(sent, "startDate")], ["D", "1", "202602"]);

  const viaCsv = await s.client.callTool({
    name: "boj_get_data_layer",
    arguments: { ...args, format: "csv", response_format: "json" },
  });
  const csv = ok(viaCsv);
  assert.deepEqual(csv.series, json.series, "CSV and JSON decode to the same series");
  assert.deepEqual(JSON.parse(texts(viaCsv)[0]!), csv);

  const page = ok(
    await s.client.callTool({
      name: "boj_get_data_layer",
      arguments: { db: "MD10", frequency: "Q", layers: ["*"], lang: "en" },
    }),
  );
  assert.equal(page.next_position, 255);
  assert.deepEqual(page.continue_with, { start_position: 255, series_offset: 0 });
  assert.match(page.notices[0], /boj_get_data_layer again .* start_position=255/);
});

Deno.test("boj_get_data_code explains an answer without data (M181030I)", async () => {
  await using s = await openProvider(boj({
    routes: [
      { path: "/api/v1/getDataCode", reply: { fixture: "boj/json_success_no_data.json" } },
    ],
  }));
  const result = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db: "CO", codes: ["TK99F1000601GCQ01000"], start_date: "2050" },
  });
  const sc = ok(result);
  assert.equal(sc.meta.message_id, "M181030I");
  assert.equal(sc.series_count, 0);
  assert.match(texts(result)[0]!, /no data.*boj_get_metadata/);
});

Deno.test("boj_get_metadata filters and pages rows from JSON and reads Japanese Shift_JIS CSV", async () => {
  await using s = await openProvider(boj({
    routes: [
      {
        path: "/api/v1/getMetadata",
        match: (r) => q(r, "format") === "CSV",
        reply: { fixture: "boj/constructed_getMetadata_FM01_jp_shiftjis.csv" },
      },
      { path: "/api/v1/getMetadata", reply: { fixture: "boj/constructed_getMetadata_FM01_en.json" } },
    ],
  }));
  const all = await s.client.callTool({ name: "boj_get_metadata", arguments: { db: "FM01", lang: "en" } });
  const sc = ok(all);
  assert.equal(sc.db, "FM01");
  assert.equal(sc.total, 6);
  assert.equal(sc.entries_count, 6);
  assert.equal(sc.has_more, false);
  assert.equal(sc.entries[0].series_code, "");
  const con = sc.entries.find((e: { series_code: string }) => e.series_code === "STRDCLUCON");
  assert.equal(con.layer, "1,1");
  assert.equal(con.start_of_the_time_series, "19980105");
  assert.match(
    texts(all)[0]!,
    /\| STRDCLUCON \| Call Rate, Uncollateralized Overnight, Average \(Daily\) \|/,
  );
  assert.match(texts(all)[0]!, /Credit: /);

  const page = ok(
    await s.client.callTool({
      name: "boj_get_metadata",
      arguments: { db: "FM01", lang: "en", query: "highest", response_format: "json" },
    }),
  );
  assert.deepEqual(page.entries.map((e: { series_code: string }) => e.series_code), ["STRDCLUCONH"]);
  assert.equal(page.query, "highest");
  const second = ok(
    await s.client.callTool({
      name: "boj_get_metadata",
      arguments: { db: "FM01", lang: "en", offset: 4, limit: 1 },
    }),
  );
  assert.equal(second.entries[0].layer, "2");
  assert.equal(second.next_offset, 5);

  const jp = await s.client.callTool({
    name: "boj_get_metadata",
    arguments: { db: "FM01", format: "csv", lang: "jp", query: "最高値" },
  });
  const jsc = ok(jp);
  assert.deepEqual(jsc.entries.map((e: { series_code: string }) => e.series_code), ["STRDCLUCONH"]);
  assert.equal(jsc.entries[0].unit_j, "年％");
  assert.match(texts(jp)[0]!, /無担保コールＯ／Ｎ物レート／最高値 日次／金利/);
});

Deno.test("boj discovery tools answer from the catalog in markdown and json without calling BOJ", async () => {
  await using s = await openProvider(boj());
  const { fake } = s;
  const dbs = await s.client.callTool({ name: "boj_list_databases", arguments: {} });
  const dsc = ok(dbs);
  assert.equal(dsc.count, 50);
  assert.equal(dsc.source_date, "2026-02-18");
  assert.ok(
    dsc.databases.some((d: { code: string; name_en: string }) =>
      d.code === "FM08" && d.name_en === "Foreign exchange rates"
    ),
  );
  assert.match(texts(dbs)[0]!, /\| FM08 \| Foreign exchange rates \| 外国為替市況 \|/);
  assert.match(texts(dbs)[0]!, /Source: api_manual\.pdf/);

  const params = await s.client.callTool({
    name: "boj_get_parameter_catalog",
    arguments: { endpoint: "get_data_layer" },
  });
  const psc = ok(params);
  assert.equal(psc.endpoint_scope, "getDataLayer");
  assert.deepEqual(psc.format_codes, ["JSON", "CSV"]);
  assert.deepEqual(psc.mcp_format_codes, ["json", "csv"]);
  assert.deepEqual(psc.language_codes, ["JP", "EN"]);
  assert.deepEqual(psc.mcp_language_codes, ["jp", "en"]);
  assert.ok(psc.source_document && psc.source_date);
  assert.match(texts(params)[0]!, /\| FREQUENCY \| frequency \|/);
  const allParams = ok(
    await s.client.callTool({ name: "boj_get_parameter_catalog", arguments: { response_format: "json" } }),
  );
  assert.equal(allParams.endpoint_scope, "all");
  assert.equal(allParams.parameters.length, 9);

  const msgs = await s.client.callTool({ name: "boj_get_message_catalog", arguments: { status: 503 } });
  const msc = ok(msgs);
  assert.equal(msc.status_filter, 503);
  assert.deepEqual(msc.messages.map((m: { message_id: string }) => m.message_id), ["M181091S"]);
  assert.equal(msc.messages[0].retryable, true);
  const byId = ok(
    await s.client.callTool({
      name: "boj_get_message_catalog",
      arguments: { message_id: "M181014E", response_format: "json" },
    }),
  );
  assert.equal(byId.count, 1);
  assert.match(byId.messages[0].hint, /one frequency per call/);
  const everything = ok(await s.client.callTool({ name: "boj_get_message_catalog", arguments: {} }));
  assert.equal(everything.count, 24);
  assert.equal(fake.requests.length, 0);
});

Deno.test("boj_get_data_code: dates that hold no value name the same call over every date", async () => {
  const empty = JSON.parse(fixtureText("boj/json_success_code_api.json"));
  empty.NEXTPOSITION = null;
  empty.RESULTSET = [{ ...empty.RESULTSET[0], VALUES: { SURVEY_DATES: [], VALUES: [] } }];
  await using s = await openProvider(
    boj({ routes: [{ path: "/api/v1/getDataCode", reply: { json: empty } }] }),
  );
  const code = empty.RESULTSET[0].SERIES_CODE as string;
  const r = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db: "CO", codes: [code], start_date: "202601" },
  });
  const sc = ok(r);
  assert.equal(sc.series[0].points_total, 0);
  const widen = { tool: "boj_get_data_code", arguments: { db: "CO", codes: [code] } };
  assert.deepEqual(sc.next_calls, [{ ...widen, for: "every date: the dates asked for hold no value" }]);
  assert.match(texts(r)[0]!, /every date: the dates asked for hold no value: boj_get_data_code \{"db":"CO"/);
});
