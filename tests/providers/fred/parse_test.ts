import assert from "node:assert/strict";
import { ToolError } from "../../../lib/errors.ts";
import {
  citationUrl,
  itemsTable,
  metaLine,
  NOTICE,
  sourceLines,
  sourceOf,
} from "../../../lib/providers/fred/format.ts";
import {
  isReadable,
  itemFor,
  parseResponse,
  screenItem,
  valueFor,
} from "../../../lib/providers/fred/parse.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const fixture = (name: string): unknown => JSON.parse(fixtureText(`fred/${name}`));

Deno.test("valueFor() gives structured results numbers, '.' as null, and keeps other text", () => {
  assert.equal(valueFor("1065.9", "structured"), 1065.9);
  assert.equal(valueFor(" -0.5 ", "structured"), -0.5);
  assert.equal(valueFor(36877, "structured"), 36877);
  assert.equal(valueFor("0", "structured"), 0);
  assert.equal(valueFor(".", "structured"), null);
  assert.equal(valueFor("", "structured"), null);
  assert.equal(valueFor(null, "structured"), null);
  assert.equal(valueFor("n/a", "structured"), "n/a", "text that is no number is kept, not nulled");
  assert.equal(valueFor(Number.NaN, "structured"), "NaN");
});

Deno.test("valueFor() keeps FRED's text in CSV and markdown and its digits as JSON numbers in JSON files", () => {
  assert.equal(valueFor("1065.0", "csv"), "1065.0");
  assert.equal(valueFor(".", "csv"), null, "an empty cell");
  assert.equal(valueFor("n/a", "csv"), "n/a");
  assert.equal(valueFor("1065.0", "markdown"), "1065.0");
  assert.equal(valueFor(".", "markdown"), "missing");
  const row = itemFor("observations", { date: "2020-01-01", value: "1065.0" }, "json_file");
  assert.equal(JSON.stringify(row), '{"date":"2020-01-01","value":1065.0}');
  assert.equal(JSON.stringify({ v: valueFor(".", "json_file") }), '{"v":null}');
  assert.equal(JSON.stringify({ v: valueFor("1.", "json_file") }), '{"v":1}', "not JSON's grammar: a number");
  assert.equal(JSON.stringify({ v: valueFor("ND", "json_file") }), '{"v":"ND"}');
  assert.deepEqual(
    itemFor("series", { id: "X", value: "." }, "csv"),
    { id: "X", value: "." },
    "only value fields",
  );
});

Deno.test("parseResponse() reads the recorded observations, with count as the total", () => {
  const parsed = parseResponse("observations", fixture("official_doc_series_observations_GNPCA.json"));
  assert.equal(parsed.items.length, 84);
  assert.equal(parsed.total, 84);
  assert.deepEqual(parsed.items[0], {
    realtime_start: "2013-08-14",
    realtime_end: "2013-08-14",
    date: "1929-01-01",
    value: "1065.9",
  }, "FRED's own text is kept until an output writes it");
  assert.equal(parsed.meta["units"], "lin");
  assert.equal("observations" in parsed.meta, false);
  const missing = parseResponse("observations", {
    count: 2,
    observations: [{ date: "2020-01-01", value: "." }, { date: "2020-01-02", value: "0" }],
  });
  assert.deepEqual(missing.items.map((i) => valueFor(i["value"], "structured")), [null, 0]);
});

Deno.test("parseResponse() reads observations by vintage date (output types 2 and 3) without a value field", () => {
  // The column layout pystlouisfed's docstring shows for GNPCA: series id, "_", vintage date.
  const parsed = parseResponse("observations", {
    output_type: 3,
    count: 2,
    observations: [
      { date: "1991-01-01", GNPCA_20200704: "9406.669", GNPCA_20210729: "." },
      { date: "1992-01-01", GNPCA_20210729: "9739.841" },
    ],
  });
  const shown = parsed.items.map((i) => screenItem("observations", i, parsed.meta));
  assert.deepEqual(shown, [
    { date: "1991-01-01", GNPCA_20200704: 9406.669, GNPCA_20210729: null },
    { date: "1992-01-01", GNPCA_20210729: 9739.841 },
  ]);
  const table = itemsTable("observations", shown);
  assert.match(table, /^\| date \| GNPCA_20200704 \| GNPCA_20210729 \|/);
  assert.match(table, /\| 1991-01-01 \| 9406\.669 \| missing \|/);
  assert.ok(table.includes("| 1992-01-01 |  | 9739.841 |"), "no value for an unrevised vintage");
});

Deno.test("parseResponse() reads series from the recorded and the documented answer", () => {
  for (const name of ["recorded_series_GNPCA.json", "official_doc_series_GNPCA.json"]) {
    const parsed = parseResponse("series", fixture(name));
    assert.equal(parsed.items[0]!["id"], "GNPCA");
    assert.equal(parsed.total, undefined, "a single series has no count");
  }
});

Deno.test("parseResponse() reads maps data as recorded (integer values) and in the older title-keyed layout (strings)", () => {
  const current = parseResponse(
    "regional_data",
    fixture("recorded_geofred_regional_data_882_state_2013.json"),
  );
  assert.equal(current.items.length, 51);
  assert.deepEqual(screenItem("regional_data", current.items[0]!, current.meta), {
    date: "2013-01-01",
    region: "Arizona",
    code: "04",
    value: 36877,
    series_id: "AZPCPI",
  });
  assert.equal(current.meta["title"], "2022 Per Capita Personal Income by State (Dollars)");
  assert.equal("data" in current.meta, false);
  const old = parseResponse("regional_data", {
    "Per Capita Personal Income by State (Dollars)": {
      "2013": [{ region: "Alabama", code: "01", value: "36481", series_id: "ALPCPI" }, {
        region: "X",
        code: "99",
        value: ".",
        series_id: "X",
      }],
    },
  });
  assert.equal(old.meta["title"], "Per Capita Personal Income by State (Dollars)");
  assert.deepEqual(old.items.map((i) => [i["date"], valueFor(i["value"], "structured")]), [
    ["2013", 36481],
    ["2013", null],
  ]);
});

Deno.test("parseResponse() flattens release tables, listing children by id", () => {
  const text = fixtureText("fred/official_doc_release_tables_53_element_12886.AS_PUBLISHED_INVALID.txt");
  assert.throws(() => JSON.parse(text), "the published example is not valid JSON");
  const parsed = parseResponse("elements", JSON.parse(text.replace(/^\{\s*\{/, "{")));
  assert.deepEqual(parsed.items.map((e) => e["element_id"]), [12887, 12888, 12889, 12890]);
  assert.deepEqual(parsed.items[0]!["children"], [12888, 12889]);
  assert.equal(parsed.meta["release_id"], "53");
  const withValues = parseResponse("elements", {
    elements: {
      "1": { element_id: 1, observation_value: "12.5" },
      "2": { element_id: 2, observation_value: "." },
    },
  });
  assert.deepEqual(
    withValues.items.map((e) => screenItem("elements", e, {})["observation_value"]),
    [12.5, null],
  );
});

Deno.test("parseResponse() reads the recorded shape file as features, keeping the collection's fields", () => {
  const parsed = parseResponse("shapes", fixture("recorded_geofred_shapes_file_state.json"));
  assert.equal(parsed.items.length, 61);
  assert.equal(parsed.meta["type"], "FeatureCollection");
  assert.equal("features" in parsed.meta, false);
  const shown = screenItem("shapes", parsed.items[0]!, parsed.meta);
  assert.deepEqual(Object.keys(shown), ["type", "properties"]);
});

Deno.test("parseResponse() reads tags, dates, vintage dates and series groups", () => {
  const tags = parseResponse("tags", fixture("official_doc_series_tags_STLFSI.json"));
  assert.equal(tags.total, 8);
  assert.equal(tags.items[0]!["name"], "nation");
  const dates = parseResponse("release_dates", fixture("official_doc_release_dates_82.json"));
  assert.equal(dates.items.length, 17);
  assert.deepEqual(parseResponse("vintage_dates", { count: 1, vintage_dates: ["1958-12-21"] }).items, [{
    vintage_date: "1958-12-21",
  }]);
  assert.deepEqual(parseResponse("series_group", { series_group: { series_group: "1223" } }).items, [{
    series_group: "1223",
  }]);
  const category = parseResponse("categories", fixture("recorded_category_125.json"));
  assert.deepEqual(category.items, [{ id: 125, name: "Trade Balance", parent_id: 13 }]);
});

Deno.test("parseResponse() answers a DECODE_ERROR for shapes it cannot read", () => {
  for (
    const [kind, data] of [
      ["series", []],
      ["series", "text"],
      ["series", { seriess: "nope" }],
      ["series", { count: 0 }],
      ["observations", { seriess: [] }],
      ["observations", { observations: null }],
      ["vintage_dates", { vintage_dates: {} }],
      ["series_group", {}],
      ["series_group", { series_group: "nope" }],
      ["series_group", { series_group: [] }],
      ["shapes", { type: "FeatureCollection" }],
      ["regional_data", {}],
      ["regional_data", { meta: null }],
      ["regional_data", { meta: { title: "x" } }],
      ["regional_data", { meta: { data: { "2013-01-01": "nope" } } }],
      ["regional_data", { "Per Capita Personal Income": "nope" }],
      ["elements", { name: "x" }],
      ["elements", { elements: [] }],
      ["tags", { error_code: 400, error_message: "Bad Request." }],
      ["series", { seriess: [null] }],
      ["observations", { observations: [{ date: "2020-01-01", value: "1" }, 5] }],
      ["categories", { categories: [[]] }],
      ["vintage_dates", { vintage_dates: ["2020-01-01", null] }],
    ] as const
  ) {
    assert.throws(
      () => parseResponse(kind, data),
      (e: unknown) => e instanceof ToolError && e.errorType === "DECODE_ERROR",
      JSON.stringify([kind, data]),
    );
    assert.equal(isReadable(kind, data), false);
  }
  // Empty lists are answers with nothing in them, not decode errors.
  assert.deepEqual(parseResponse("series", { count: 0, seriess: [] }).items, []);
  assert.deepEqual(parseResponse("elements", { elements: {} }).items, []);
  assert.deepEqual(parseResponse("regional_data", { meta: { title: "x", data: {} } }).items, []);
  assert.equal(isReadable("series", { seriess: [] }), true);
});

Deno.test("screenItem() shortens long notes and drops real-time fields that repeat the answer's", () => {
  const series = screenItem("series", { id: "X", notes: "word ".repeat(100) }, {});
  assert.ok(String(series["notes"]).length <= 201);
  const meta = { realtime_start: "2020-01-01", realtime_end: "2020-01-01" };
  assert.deepEqual(screenItem("observations", { ...meta, date: "2019-01-01", value: 1 }, meta), {
    date: "2019-01-01",
    value: 1,
  });
  const vintage = { realtime_start: "2019-06-01", realtime_end: "2019-12-31", date: "2019-01-01", value: 1 };
  assert.deepEqual(screenItem("observations", vintage, meta), vintage);
});

Deno.test("itemsTable() writes missing values as 'missing' and metaLine() the notable fields", () => {
  const table = itemsTable("observations", [{ date: "2020-01-01", value: null }, {
    date: "2020-02-01",
    value: 0,
  }]);
  assert.match(table, /\| 2020-01-01 \| missing \|/);
  assert.match(table, /\| 2020-02-01 \| 0 \|/);
  assert.equal(itemsTable("tags", []), "_No items._");
  assert.match(
    itemsTable("shapes", [{ type: "Feature", properties: { name: "Ohio", fips: "39" } }]),
    /\| name \| fips \|/,
  );
  assert.equal(
    metaLine({ units: "lin", realtime_start: "2020-01-01", nested: { a: 1 } }),
    "units: lin · realtime_start: 2020-01-01",
  );
});

Deno.test("citationUrl() keeps short URLs exactly and shortens very long parameter values", () => {
  const short = "https://api.stlouisfed.org/fred/series?series_id=GNPCA&file_type=json";
  assert.equal(citationUrl(short), short);
  const dates = Array.from({ length: 2000 }, (_, i) => `2000-01-${String(i % 28 + 1).padStart(2, "0")}`);
  const long = `https://api.stlouisfed.org/fred/series/observations?series_id=GNPCA&vintage_dates=${
    dates.join(",")
  }&file_type=json`;
  const cited = citationUrl(long);
  assert.ok(cited.length < 400, `${cited.length} characters`);
  const params = new URL(cited).searchParams;
  assert.equal(params.get("series_id"), "GNPCA");
  assert.equal(params.get("file_type"), "json");
  assert.match(params.get("vintage_dates")!, /^2000-01-01,2000-01-02,.*\.\.\.\(21999 characters\)$/);
  assert.equal(sourceOf(long).url, cited);
});

Deno.test("sourceOf() cites the request, the series page and FRED's notice", () => {
  const source = sourceOf("https://api.stlouisfed.org/fred/series?series_id=GNPCA&file_type=json", "GNPCA");
  assert.equal(source.series_url, "https://fred.stlouisfed.org/series/GNPCA");
  assert.equal(source.notice, NOTICE);
  assert.match(sourceLines(source), /not endorsed or certified by the Federal Reserve Bank of St\. Louis/);
  assert.equal(sourceOf("https://x").series_url, undefined);
});
