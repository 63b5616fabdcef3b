// The six FRED data tools end to end: the real server over stdio (scoped permissions, scratch
// HOME) against a fake FRED serving the recorded fixtures.
import assert from "node:assert/strict";
import type { StdioSession } from "../../harness/spawn.ts";
import { startInProcess } from "../../harness/in_process.ts";
import { openProvider } from "../../harness/provider.ts";
import { fredError, startFakeFred, TEST_KEY } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";
import { errorOf, ok, providerTools, texts } from "../../harness/results.ts";

type Result = Awaited<ReturnType<StdioSession["client"]["callTool"]>>;
type Text = { type: string; text: string };

// Every operation of every data tool, with the endpoint it must reach and a check of its items.
const CASES: [
  tool: string,
  args: Record<string, unknown>,
  path: string,
  check: (s: Record<string, unknown>) => void,
][] = [
  [
    "fred_category",
    { operation: "get" },
    "/fred/category",
    (s) => assert.equal(first(s)["name"], "Trade Balance"),
  ],
  [
    "fred_category",
    { operation: "list_children", category_id: 13 },
    "/fred/category/children",
    (s) => assert.equal(first(s)["parent_id"], 13),
  ],
  [
    "fred_category",
    { operation: "get_related", category_id: 32073 },
    "/fred/category/related",
    (s) => assert.equal(first(s)["id"], 125),
  ],
  [
    "fred_category",
    { operation: "get_series", category_id: 125, filter_variable: "frequency", filter_value: "Annual" },
    "/fred/category/series",
    (s) => assert.equal(first(s)["id"], "GNPCA"),
  ],
  [
    "fred_category",
    { operation: "get_tags", category_id: 125, tag_group_id: "geo" },
    "/fred/category/tags",
    (s) => assert.equal(first(s)["name"], "nation"),
  ],
  [
    "fred_category",
    { operation: "get_related_tags", category_id: 125, tag_names: ["services", "quarterly"] },
    "/fred/category/related_tags",
    (s) => assert.equal(s["count"], 8),
  ],
  [
    "fred_release",
    { operation: "list", order_by: "name" },
    "/fred/releases",
    (s) => assert.equal(first(s)["id"], 53),
  ],
  [
    "fred_release",
    { operation: "get", release_id: 53 },
    "/fred/release",
    (s) => assert.equal(first(s)["name"], "Gross Domestic Product"),
  ],
  ["fred_release", { operation: "get_dates", release_id: 82 }, "/fred/release/dates", (s) => {
    assert.equal(s["total"], 17);
    assert.equal(first(s)["date"], "1997-02-10");
  }],
  [
    "fred_release",
    { operation: "get_dates", include_release_dates_with_no_data: true },
    "/fred/releases/dates",
    (s) => assert.equal(first(s)["release_name"], "Gross Domestic Product"),
  ],
  [
    "fred_release",
    { operation: "get_series", release_id: 53 },
    "/fred/release/series",
    (s) => assert.equal(first(s)["id"], "GNPCA"),
  ],
  [
    "fred_release",
    { operation: "get_sources", release_id: 53 },
    "/fred/release/sources",
    (s) => assert.equal(first(s)["id"], 1),
  ],
  [
    "fred_release",
    { operation: "get_tags", release_id: 53 },
    "/fred/release/tags",
    (s) => assert.equal(first(s)["group_id"], "geot"),
  ],
  [
    "fred_release",
    { operation: "get_related_tags", release_id: 53, tag_names: "usa" },
    "/fred/release/related_tags",
    (s) => assert.equal(s["count"], 8),
  ],
  [
    "fred_release",
    { operation: "get_tables", release_id: 53, element_id: 12886 },
    "/fred/release/tables",
    (s) => {
      assert.equal(first(s)["element_id"], 12887);
      assert.deepEqual(first(s)["children"], [12888, 12889]);
    },
  ],
  [
    "fred_series",
    { operation: "get", series_id: "GNPCA" },
    "/fred/series",
    (s) => assert.equal(first(s)["title"], "Real Gross National Product"),
  ],
  [
    "fred_series",
    { operation: "search", search_text: "gross national product", order_by: "popularity" },
    "/fred/series/search",
    (s) => assert.equal(first(s)["id"], "GNPCA"),
  ],
  [
    "fred_series",
    { operation: "get_categories", series_id: "GNPCA" },
    "/fred/series/categories",
    (s) => assert.equal(first(s)["id"], 125),
  ],
  ["fred_series", { operation: "get_observations", series_id: "GNPCA" }, "/fred/series/observations", (s) => {
    assert.equal(s["total"], 84);
    assert.deepEqual(first(s), { date: "1929-01-01", value: 1065.9 });
  }],
  [
    "fred_series",
    { operation: "get_release", series_id: "GNPCA" },
    "/fred/series/release",
    (s) => assert.equal(first(s)["id"], 53),
  ],
  [
    "fred_series",
    { operation: "get_tags", series_id: "STLFSI", order_by: "popularity" },
    "/fred/series/tags",
    (s) => assert.equal(first(s)["name"], "nation"),
  ],
  [
    "fred_series",
    { operation: "search_tags", series_search_text: "monetary service index" },
    "/fred/series/search/tags",
    (s) => assert.equal(s["count"], 8),
  ],
  [
    "fred_series",
    { operation: "search_related_tags", series_search_text: "mortgage rate", tag_names: ["30-year"] },
    "/fred/series/search/related_tags",
    (s) => assert.equal(s["count"], 8),
  ],
  [
    "fred_series",
    { operation: "get_updates", filter_value: "macro" },
    "/fred/series/updates",
    (s) => assert.equal((s["meta"] as Record<string, unknown>)["filter_variable"], "geography"),
  ],
  [
    "fred_series",
    { operation: "get_vintage_dates", series_id: "GNPCA" },
    "/fred/series/vintagedates",
    (s) => assert.deepEqual(first(s), { vintage_date: "1958-12-21" }),
  ],
  ["fred_source", { operation: "list" }, "/fred/sources", (s) => assert.equal(first(s)["id"], 1)],
  [
    "fred_source",
    { operation: "get", source_id: 1 },
    "/fred/source",
    (s) => assert.equal(first(s)["name"], "Board of Governors of the Federal Reserve System"),
  ],
  [
    "fred_source",
    { operation: "get_releases", source_id: 1 },
    "/fred/source/releases",
    (s) => assert.equal(first(s)["id"], 53),
  ],
  [
    "fred_tag",
    { operation: "list", search_text: "nation" },
    "/fred/tags",
    (s) => assert.equal(s["count"], 8),
  ],
  [
    "fred_tag",
    { operation: "get_related_tags", tag_names: ["monetary aggregates", "weekly"] },
    "/fred/related_tags",
    (s) => assert.equal(s["count"], 8),
  ],
  [
    "fred_tag",
    { operation: "get_series", tag_names: ["slovenia", "food"], exclude_tag_names: ["alcohol"] },
    "/fred/tags/series",
    (s) => assert.equal(first(s)["id"], "GNPCA"),
  ],
  [
    "fred_maps",
    { operation: "get_shapes", shape: "state", output: "screen" },
    "/geofred/shapes/file",
    (s) => {
      const f = first(s);
      assert.equal(f["type"], "Feature");
      assert.equal("geometry" in f, false, "inline shapes leave the geometry out");
    },
  ],
  [
    "fred_maps",
    { operation: "get_series_group", series_id: "SMU56000000500000001a" },
    "/geofred/series/group",
    (s) => assert.equal(first(s)["series_group"], "1223"),
  ],
  [
    "fred_maps",
    {
      operation: "get_regional_data",
      series_group: "882",
      region_type: "state",
      date: "2013-01-01",
      season: "NSA",
      units: "Dollars",
      frequency: "a",
    },
    "/geofred/regional/data",
    (s) => {
      assert.deepEqual(first(s), {
        date: "2013-01-01",
        region: "Arizona",
        code: "04",
        value: 36877,
        series_id: "AZPCPI",
      });
      assert.equal(s["count"], 51);
    },
  ],
  [
    "fred_maps",
    { operation: "get_series_data", series_id: "WIPCPI", date: "2013-01-01" },
    "/geofred/series/data",
    (s) => assert.equal(s["count"], 51),
  ],
];

function first(s: Record<string, unknown>): Record<string, unknown> {
  const items = s["items"] as Record<string, unknown>[];
  assert.ok(items.length > 0, "items are present");
  return items[0]!;
}

Deno.test("fred data tools answer every operation, refuse bad input, map upstream failures and never leak the key", async (t) => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({
    fake,
    // The breaker would open after the fault steps' failures; its wiring is tested in client_test.ts.
    settings: { breaker_threshold: 100 },
    env: { LOG_LEVEL: "debug" },
  }));
  const outputs: string[] = [];
  const call = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const r = await s.client.callTool({ name, arguments: args });
    outputs.push(JSON.stringify(r));
    return r;
  };
  const tools = providerTools((await s.client.listTools()).tools);

  await t.step("tools/list serves twelve tools with operation enums, output schemas and annotations", () => {
    assert.deepEqual(tools.map((x) => x.name), [
      "fred_category",
      "fred_release",
      "fred_series",
      "fred_source",
      "fred_tag",
      "fred_maps",
      "fred_job_status",
      "fred_job_list",
      "fred_job_cancel",
      "fred_project_list",
      "fred_project_create",
      "fred_project_files",
    ]);
    const series = tools.find((x) => x.name === "fred_series")!;
    const op = (series.inputSchema.properties as Record<string, { enum?: string[] }>)["operation"]!;
    assert.equal(op.enum?.length, 10);
    assert.equal(series.inputSchema.additionalProperties, false);
    for (const tool of tools) {
      assert.ok(tool.outputSchema, `${tool.name} declares an outputSchema`);
      assert.equal(typeof tool.annotations?.openWorldHint, "boolean", `${tool.name} has annotations`);
    }
  });

  await t.step(
    "each operation of each tool reaches its endpoint with the key and file_type=json",
    async () => {
      for (const [tool, args, path, check] of CASES) {
        const before = fake.requestsTo(path).length;
        const r = await call(tool, { output: "screen", ...args });
        const structured = ok(r);
        const md = texts(r)[0]!;
        assert.match(md, /^## FRED /, "markdown heading");
        assert.match(md, /\n\| .* \|\n\| --- /, "markdown table");
        assert.match(md, /Source: .*not endorsed or certified/s);
        assert.equal(structured["operation"], args["operation"]);
        check(structured);
        const sent = fake.requestsTo(path).slice(before);
        assert.equal(sent.length, 1, `${tool} ${args["operation"]} made one request to ${path}`);
        assert.equal(sent[0]!.url.searchParams.get("api_key"), TEST_KEY);
        assert.equal(sent[0]!.url.searchParams.get("file_type"), "json");
        const src = structured["source"] as Record<string, string>;
        assert.match(src["notice"]!, /not endorsed or certified by the Federal Reserve Bank of St\. Louis/);
        assert.ok(!src["url"]!.includes("api_key"), "the cited URL has no key");
      }
    },
  );

  await t.step("parameters are sent in FRED's encoding", () => {
    const related = fake.requestsTo("/fred/category/related_tags").at(-1)!.url.searchParams;
    assert.equal(related.get("tag_names"), "services;quarterly");
    const tagged = fake.requestsTo("/fred/tags/series").at(-1)!.url.searchParams;
    assert.equal(tagged.get("exclude_tag_names"), "alcohol");
    const dates = fake.requestsTo("/fred/releases/dates").at(-1)!.url.searchParams;
    assert.equal(dates.get("include_release_dates_with_no_data"), "true");
    assert.equal(dates.get("limit"), "500");
    const root = fake.requestsTo("/fred/category").at(-1)!.url.searchParams;
    assert.equal(root.get("category_id"), "0", "category 0 (the root) is the default");
  });

  await t.step(
    "get_observations forwards every transformation and marks '.' as missing, never zero",
    async () => {
      const r = await call("fred_series", {
        operation: "get_observations",
        series_id: "MID",
        output: "screen",
        limit: 100,
        units: "pc1",
        frequency: "m",
        aggregation_method: "eop",
        output_type: 2,
        vintage_dates: ["2020-01-01", "2021-01-01"],
        observation_start: "1900-01-01",
        observation_end: "1900-12-31",
        realtime_start: "2020-01-01",
        realtime_end: "2021-01-01",
        sort_order: "asc",
      });
      const structured = ok(r);
      const q = fake.requestsTo("/fred/series/observations").at(-1)!.url.searchParams;
      for (
        const [k, v] of Object.entries({
          units: "pc1",
          frequency: "m",
          aggregation_method: "eop",
          output_type: "2",
          vintage_dates: "2020-01-01,2021-01-01",
          observation_start: "1900-01-01",
          limit: "100",
        })
      ) assert.equal(q.get(k), v, k);
      // Output type 2 answers one value column per vintage date and no "value" field.
      const items = structured["items"] as Record<string, unknown>[];
      assert.deepEqual(Object.keys(items[0]!), ["date", "MID_20200101", "MID_20210101"]);
      assert.equal(items[0]!["MID_20200101"], null, "FRED's '.' is null");
      assert.equal(items[0]!["MID_20210101"], null, "the synthetic series' own '.' at row 0");
      assert.equal(items[1]!["MID_20200101"], 100.143, "vintage values are numbers");
      assert.equal(items[3]!["MID_20200101"], null);
      assert.equal(structured["total"], 3000);
      assert.equal(structured["has_more"], true);
      assert.equal(structured["next_offset"], 100);
      const md = texts(r)[0]!;
      assert.match(md, /\| date \| MID_20200101 \| MID_20210101 \|/);
      assert.match(md, /\| 1900-01-02 \| 100\.143 \| 100\.143 \|/);
      assert.match(md, /\| 1900-01-04 \| missing \| 100\.429 \|/);
    },
  );

  await t.step("get_observations with output_type 1 keeps FRED's value field, '.' as missing", async () => {
    const r = await call("fred_series", {
      operation: "get_observations",
      series_id: "MID",
      output: "screen",
      limit: 100,
    });
    const items = ok(r)["items"] as { value: unknown }[];
    assert.equal(items[0]!.value, null, "FRED's '.' is null");
    assert.equal(items[97]!.value, null);
    assert.notEqual(items[1]!.value, null);
    assert.match(texts(r)[0]!, /\| 1900-01-01 \| missing \|/);
  });

  await t.step(
    "response_format json returns the structured content as text, for every data tool",
    async () => {
      const md = await call("fred_series", { operation: "get", series_id: "GNPCA" });
      assert.match(texts(md)[0]!, /\| id \| title \|/);
      for (
        const [tool, args] of [
          ["fred_category", { operation: "get", category_id: 125 }],
          ["fred_release", { operation: "get", release_id: 53 }],
          ["fred_series", { operation: "get", series_id: "GNPCA" }],
          ["fred_source", { operation: "list" }],
          ["fred_tag", { operation: "list" }],
          ["fred_maps", { operation: "get_series_group", series_id: "SMU56000000500000001a" }],
        ] as const
      ) {
        const js = await call(tool, { ...args, response_format: "json" });
        assert.deepEqual(JSON.parse(texts(js)[0]!), js.structuredContent, tool);
      }
    },
  );

  await t.step(
    "bad input gets INVALID_OPERATION, MISSING_PARAMETER or VALIDATION_ERROR naming the field",
    async () => {
      const invalid = errorOf(await call("fred_series", { operation: "fetch_everything" }));
      assert.equal(invalid["error_type"], "INVALID_OPERATION");
      assert.match(String(invalid["message"]), /get_observations/);
      assert.equal(invalid["field"], "operation");

      const missing = errorOf(await call("fred_series", { operation: "get_observations" }));
      assert.equal(missing["error_type"], "MISSING_PARAMETER");
      assert.equal(missing["field"], "series_id");
      const missingTags = errorOf(
        await call("fred_category", { operation: "get_related_tags", category_id: 1 }),
      );
      assert.equal(missingTags["field"], "tag_names");
      const regional = errorOf(
        await call("fred_maps", { operation: "get_regional_data", series_group: "882" }),
      );
      assert.equal(regional["error_type"], "MISSING_PARAMETER");
      const window = errorOf(
        await call("fred_series", { operation: "get_updates", start_time: "202401010000" }),
      );
      assert.equal(window["field"], "end_time");

      const notApplicable = errorOf(
        await call("fred_series", { operation: "get", series_id: "GNPCA", units: "log" }),
      );
      assert.equal(notApplicable["error_type"], "VALIDATION_ERROR");
      assert.equal(notApplicable["field"], "units");

      const tooMany = errorOf(
        await call("fred_series", { operation: "search", search_text: "gdp", limit: 5000 }),
      );
      assert.equal(tooMany["field"], "limit");
      assert.match(String(tooMany["message"]), /1,000/);

      const order = errorOf(await call("fred_tag", { operation: "list", order_by: "title" }));
      assert.equal(order["field"], "order_by");
      assert.match(String(order["message"]), /series_count/);

      const badDate = errorOf(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          observation_start: "2020/01/01",
        }),
      );
      assert.equal(badDate["error_type"], "VALIDATION_ERROR");
      assert.equal(badDate["field"], "observation_start");

      const badUnits = errorOf(
        await call("fred_series", { operation: "get_observations", series_id: "GNPCA", units: "percent" }),
      );
      assert.equal(badUnits["field"], "units");

      const unknown = errorOf(await call("fred_tag", { operation: "list", surprise: 1 }));
      assert.equal(unknown["error_type"], "VALIDATION_ERROR");
      assert.match(String(unknown["message"]), /"surprise"/);

      const update = errorOf(
        await call("fred_series", { operation: "get_updates", filter_value: "everything" }),
      );
      assert.equal(update["field"], "filter_value");
      assert.equal(fake.requestsTo("/fred/series/updates").length, 1, "refused calls never reach FRED");
    },
  );

  await t.step("a 400 'series does not exist' is NOT_FOUND and not retried", async () => {
    const before = fake.requestsTo("/fred/series").length;
    const e = errorOf(await call("fred_series", { operation: "get", series_id: "NOPE" }));
    assert.equal(e["error_type"], "NOT_FOUND");
    assert.equal(e["status"], 400);
    assert.equal(e["retryable"], false);
    assert.match(String(e["message"]), /The series does not exist/);
    assert.match(String(e["hint"]), /search/);
    assert.equal(fake.requestsTo("/fred/series").length - before, 1);
  });

  await t.step("a 400 about the key is INVALID_API_KEY, with FRED's words and no retry", async () => {
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "KEYFAIL",
      reply: {
        status: 400,
        fixture: "fred/official_doc_error_400_api_key_not_registered.json",
        contentType: "text/xml;charset=utf-8",
      },
    });
    const e = errorOf(await call("fred_series", { operation: "get", series_id: "KEYFAIL" }));
    assert.equal(e["error_type"], "INVALID_API_KEY");
    assert.match(String(e["message"]), /is not registered/);
    assert.equal(fake.requests.filter((r) => r.url.searchParams.get("series_id") === "KEYFAIL").length, 1);
  });

  await t.step("429 twice then success is retried to success", async () => {
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "RATE",
      reply: [
        fredError(429, "Too Many Requests.  Exceeded Rate Limit"),
        fredError(429, "Too Many Requests.  Exceeded Rate Limit"),
        { fixture: "fred/recorded_series_GNPCA.json" },
      ],
    });
    const r = await call("fred_series", { operation: "get", series_id: "RATE" });
    assert.equal(first(ok(r))["id"], "GNPCA");
    assert.equal(fake.requests.filter((q) => q.url.searchParams.get("series_id") === "RATE").length, 3);
  });

  await t.step("429 four times gives up after three retries with RATE_LIMIT_EXCEEDED", async () => {
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "RATE4",
      reply: fredError(429, "Too Many Requests.  Exceeded Rate Limit"),
    });
    const e = errorOf(await call("fred_series", { operation: "get", series_id: "RATE4" }));
    assert.equal(e["error_type"], "RATE_LIMIT_EXCEEDED");
    assert.equal(e["retryable"], true);
    assert.equal(typeof e["retry_after_s"], "number");
    assert.equal(fake.requests.filter((q) => q.url.searchParams.get("series_id") === "RATE4").length, 4);
  });

  await t.step("5xx is retried twice, then SERVER_ERROR", async () => {
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "DOWN",
      reply: { status: 503, body: "<html><body>Service Unavailable</body></html>", contentType: "text/html" },
    });
    const e = errorOf(await call("fred_series", { operation: "get", series_id: "DOWN" }));
    assert.equal(e["error_type"], "SERVER_ERROR");
    assert.equal(e["status"], 503);
    assert.equal(fake.requests.filter((q) => q.url.searchParams.get("series_id") === "DOWN").length, 3);
  });

  await t.step("XML instead of JSON, and the tables example as published, are DECODE_ERRORs", async () => {
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "PAYEMS",
      reply: { fixture: "fred/recorded_xml_series_PAYEMS_notes_elided.xml" },
    });
    const xml = errorOf(await call("fred_series", { operation: "get", series_id: "PAYEMS" }));
    assert.equal(xml["error_type"], "DECODE_ERROR");
    fake.route({
      path: "/fred/release/tables",
      match: (r) => r.url.searchParams.get("release_id") === "54",
      reply: {
        fixture: "fred/official_doc_release_tables_53_element_12886.AS_PUBLISHED_INVALID.txt",
        contentType: "application/json",
      },
    });
    const tables = errorOf(await call("fred_release", { operation: "get_tables", release_id: 54 }));
    assert.equal(tables["error_type"], "DECODE_ERROR");
  });

  await t.step(
    "the key appears in no result, no error and no log line, though every request carried it",
    async () => {
      await s.close();
      const stderr = s.stderr();
      assert.ok(stderr.includes("api_key=***"), "logged URLs show the key redacted");
      assert.ok(stderr.includes("upstream retry"), "debug logging was on, so retries were logged too");
      assert.ok(fake.requests.length > 40);
      assert.ok(
        fake.requests.every((r) => r.url.searchParams.get("api_key") === TEST_KEY),
        "every request sent the key",
      );
      for (const out of [...outputs, stderr]) assert.ok(!out.includes(TEST_KEY), "the key leaked");
    },
  );
});

Deno.test("fred without a key serves only the project tools and says in the log what the key would add", async () => {
  await using s = await startInProcess({ args: ["--providers", "fred"] });
  const tools = providerTools((await s.client.listTools()).tools);
  assert.deepEqual(tools.map((t) => t.name), [
    "fred_project_list",
    "fred_project_create",
    "fred_project_files",
  ]);
  // A tool that is not served is a protocol error, not a tool result, that says how to enable it.
  await assert.rejects(
    s.client.callTool({ name: "fred_series", arguments: { operation: "get", series_id: "GNPCA" } }),
    /Tool "fred_series" is not served: .*set FRED_API_KEY/,
  );
  // The core tools say why and how to enable them.
  const described = await s.client.callTool({ name: "opendata_describe", arguments: {} });
  assert.match(JSON.stringify(described.structuredContent), /fred-data.*FRED_API_KEY/);
  // Project tools need no key.
  const projects = await s.client.callTool({ name: "fred_project_list", arguments: {} });
  assert.notEqual(projects.isError, true);
  await s.close();
  const warning = s.stderr().split("\n").find((l) =>
    l.includes('"level":"warn"') && l.includes("FRED_API_KEY")
  );
  assert.ok(warning, "a start-up warning names FRED_API_KEY");
  const msg = String(JSON.parse(warning!)["msg"]);
  assert.match(msg, /FRED_API_KEY is not set/);
  assert.match(msg, /not served/);
  assert.match(msg, /fred_series/);
  assert.match(msg, /fred_job_status/);
  assert.match(msg, /fredaccount\.stlouisfed\.org\/apikeys/);
  assert.doesNotMatch(msg, /configuration error/);
});

Deno.test("fred with a malformed key starts with a warning that does not show the key", async () => {
  const badKey = "NOT-A-REAL-FRED-KEY-0123456789";
  await using s = await startInProcess({ args: ["--providers", "fred"], env: { FRED_API_KEY: badKey } });
  const tools = providerTools((await s.client.listTools()).tools);
  assert.equal(tools.length, 12);
  await s.close();
  assert.match(s.stderr(), /FRED_API_KEY does not look like a FRED API key/);
  assert.ok(!s.stderr().includes(badKey));
});
