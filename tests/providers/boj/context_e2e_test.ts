// Context economy (docs/TOOLS.md) for the BOJ tools: two toolsets, lean strict-client-safe schemas within the
// provider's budget (aliases still accepted), output: "file" on the three data tools (every page followed
// through NEXTPOSITION up to file_max_requests, partial files continued to the end, files private to their
// HTTP session), and the local catalogue's opendata_search hits, whose next calls work as given.
import { parseCsv } from "../../harness/results.ts";
import assert from "node:assert/strict";
import { recentStart, searchCatalog } from "../../../lib/providers/boj/search.ts";
import { startHttpServer } from "../../harness/spawn_http.ts";
import { searchContext } from "../_norway.ts";
import { connectHttp, openProvider } from "../../harness/provider.ts";
import { Client } from "../../harness/sdk_client.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { schemaProblems } from "../../../tools/schema_rules.ts";
import { measureTools } from "../../../tools/tool_budget.ts";
import { boj, BOJ_ARGS, bojConfig, errorPayload, ok, texts } from "./_helpers.ts";

const CODES = ["S1", "S2", "S3", "S4", "S5"];
const POINTS = 30;

/** A getDataCode/getDataLayer answer: two series per page from `start` (1-based), 30 months each. */
function dataPage(start: number): unknown {
  const series = CODES.slice(start - 1, start + 1).map((code) => ({
    SERIES_CODE: code,
    NAME_OF_TIME_SERIES: `Synthetic series ${code}, with a comma`,
    UNIT: "percent",
    FREQUENCY: "MONTHLY",
    CATEGORY: "Synthetic",
    LAST_UPDATE: 20260220,
    VALUES: {
      SURVEY_DATES: Array.from({ length: POINTS }, (_, i) => 202001 + Math.floor(i / 12) * 100 + (i % 12)),
      VALUES: Array.from({ length: POINTS }, (_, i) => i === 5 ? null : i / 10),
    },
  }));
  const next = start + 2 <= CODES.length ? start + 2 : null;
  return {
    STATUS: 200,
    MESSAGEID: "M181000I",
    MESSAGE: "Successfully completed",
    DATE: "2026-02-21T23:41:54.410+09:00",
    PARAMETER: { FORMAT: "JSON", LANG: "EN", DB: "FM01", STARTPOSITION: String(start) },
    NEXTPOSITION: next,
    RESULTSET: series,
  };
}

/** One series with `n` daily observations. */
function longSeries(n: number): unknown {
  return {
    STATUS: 200,
    MESSAGEID: "M181000I",
    MESSAGE: "Successfully completed",
    DATE: "2026-02-21T23:41:54.410+09:00",
    PARAMETER: { FORMAT: "JSON", LANG: "EN", DB: "FM08" },
    NEXTPOSITION: null,
    RESULTSET: [{
      SERIES_CODE: "FXERD01",
      NAME_OF_TIME_SERIES: "US.Dollar/Yen Spot Rate at 9:00 in JST, Tokyo Market",
      UNIT: "Yen per U.S. Dollar",
      FREQUENCY: "DAILY",
      VALUES: {
        SURVEY_DATES: Array.from({ length: n }, (_, i) => 20000000 + i),
        VALUES: Array.from({ length: n }, (_, i) => 100 + i / 100),
      },
    }],
  };
}

function startFake(state: { failing: boolean }): FakeUpstream {
  const data = (r: Received): Reply => {
    const start = Number(r.url.searchParams.get("startPosition") ?? 1);
    if (r.url.searchParams.get("code") === "FXERD01") return { json: longSeries(400) };
    if (r.url.searchParams.get("code")?.startsWith("STRDCLUCON")) {
      return { fixture: "boj/observed_getDataCode_FM01_STRDCLUCON_en.json" };
    }
    if (r.url.searchParams.get("db") === "SLOW") {
      // An answer that never ends, 300 ms a page: only the call's deadline stops a file.
      return { json: { ...(dataPage(1) as Record<string, unknown>), NEXTPOSITION: start + 2 }, delayMs: 300 };
    }
    if (r.url.searchParams.get("db") === "FAIL" && start >= 3 && state.failing) {
      return { status: 400, fixture: "boj/json_error_400_invalid_db.json" };
    }
    return { json: dataPage(start) };
  };
  return FakeUpstream.start([
    { path: "/api/v1/getDataCode", reply: data },
    { path: "/api/v1/getDataLayer", reply: data },
    { path: "/api/v1/getMetadata", reply: { fixture: "boj/constructed_getMetadata_FM01_en.json" } },
  ]);
}

function linkOf(result: unknown): string {
  const block = (result as { content: { type: string; uri?: string }[] }).content.find((c) =>
    c.type === "resource_link"
  );
  assert.ok(block?.uri, "the result links its file");
  return block.uri;
}

async function csvOf(client: Client, uri: string): Promise<string[][]> {
  const read = await client.readResource({ uri });
  return parseCsv((read.contents[0] as { text: string }).text);
}

Deno.test("boj tools: two toolsets, strict-client-safe schemas within the budget, aliases still accepted", async () => {
  const { app, costs } = await measureTools({ providers: ["boj"] });
  try {
    const provider = app.providers.find((p) => p.id === "boj")!;
    assert.deepEqual(provider.toolsets?.map((t) => t.id), ["boj-data", "boj-discovery"]);
    assert.deepEqual(
      Object.fromEntries(provider.tools.map((t) => [t.name, t.toolset])),
      {
        boj_get_data_code: "boj-data",
        boj_get_data_layer: "boj-data",
        boj_get_metadata: "boj-data",
        boj_list_databases: "boj-discovery",
        boj_get_parameter_catalog: "boj-discovery",
        boj_get_message_catalog: "boj-discovery",
      },
    );
    const tokens = costs.reduce((n, c) => n + c.tokens, 0);
    const chars = costs.reduce((n, c) => n + c.chars, 0);
    assert.ok(tokens <= 1300, `${tokens} tokens`);
    assert.ok(chars <= 9500, `${chars} characters`);
    for (const c of costs) {
      assert.doesNotMatch(JSON.stringify(c.tool.outputSchema), /"description"|9007199254740991/, c.name);
    }
  } finally {
    await app.close();
  }

  await using fake = startFake({ failing: false });
  await using s = await openProvider(boj({ fake }));
  const { tools } = await s.client.listTools();
  for (const tool of tools) {
    assert.deepEqual(schemaProblems(tool.inputSchema as Record<string, unknown>), [], tool.name);
  }
  const layer = tools.find((t) => t.name === "boj_get_data_layer")!.inputSchema as {
    properties: Record<string, { enum?: string[] }>;
  };
  assert.deepEqual(layer.properties["frequency"]!.enum, ["CY", "FY", "CH", "FH", "Q", "M", "W", "D"]);
  // The other case is still accepted (docs/apis/boj.md): upper-case format and lang, lower-case frequency.
  ok(
    await s.client.callTool({
      name: "boj_get_data_layer",
      arguments: { db: "fm01", frequency: "m", layers: ["1"], format: "JSON", lang: "EN" },
    }),
  );
  const sent = fake.requests.at(-1)!.url.searchParams;
  assert.deepEqual([sent.get("frequency"), sent.get("format"), sent.get("lang"), sent.get("db")], [
    "M",
    "JSON",
    "EN",
    "FM01",
  ]);
  const bad = errorPayload(
    await s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db: "FM01", codes: ["S1"], format: "xml" },
    }),
  );
  assert.equal(bad["error_type"], "VALIDATION_ERROR");
  assert.equal(bad["field"], "format");
});

Deno.test("boj_get_data_code output file follows NEXTPOSITION up to file_max_requests; start_position goes on", async (t) => {
  const state = { failing: true };
  await using fake = startFake(state);
  await using s = await openProvider(boj({ fake, settings: { file_max_requests: 2 } }));
  const header = [
    "series_code",
    "name",
    "unit",
    "frequency",
    "category",
    "last_update",
    "survey_date",
    "period",
    "value",
  ];

  await t.step("two requests of the three, then the rest from start_position 5", async () => {
    const first = await s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db: "FM01", codes: CODES, lang: "en", output: "file", series_offset: 1 },
    });
    const out = ok(first);
    assert.deepEqual(
      fake.requests.map((r) => r.url.searchParams.get("startPosition")),
      [null, "3"],
      "the first request as asked, then BOJ's NEXTPOSITION",
    );
    assert.equal(out.series, undefined, "no series inline");
    assert.deepEqual([out.series_total, out.next_position, out.truncated], [4, 5, true]);
    assert.deepEqual(out.continue_with, { start_position: 5, series_offset: 0 });
    assert.equal(out.file.rows, 4 * POINTS);
    assert.equal(out.file.partial, true);
    assert.match(out.notices[0], /at most 2 BOJ requests \(file_max_requests\)/);
    assert.match(out.notices[0], /start_position=5 and output "file"/);
    const uri = linkOf(first);
    assert.equal(uri, out.file.uri);
    assert.match(uri, /^opendata:\/\/files\/boj\/files\/FM01_S1_S2_S3_S4_and_1_more\.csv$/);
    assert.match(
      texts(first)[0]!,
      new RegExp(`Wrote 120 observations of 4 series \\(from 2 BOJ requests\\)`),
    );
    assert.ok(texts(first)[0]!.includes(uri));
    const rows = await csvOf(s.client, uri);
    assert.deepEqual(rows[0], header);
    assert.equal(rows.length, 1 + 4 * POINTS, "series_offset does not apply to a file: every series");
    assert.deepEqual(rows[1], [
      "S1",
      "Synthetic series S1, with a comma",
      "percent",
      "MONTHLY",
      "Synthetic",
      "20260220",
      "202001",
      "2020-01",
      "0",
    ]);
    assert.equal(rows[6]![8], "", "a missing value is an empty cell");

    const rest = await s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db: "FM01", codes: CODES, lang: "en", output: "file", start_position: 5 },
    });
    const restOut = ok(rest);
    assert.deepEqual([restOut.series_total, restOut.next_position, restOut.continue_with], [1, null, null]);
    assert.equal(restOut.file.partial, false);
    assert.deepEqual(restOut.notices, []);
    const more = await csvOf(s.client, linkOf(rest));
    assert.deepEqual([...new Set(more.slice(1).map((r) => r[0]))], ["S5"]);
  });

  await t.step("a request that fails ends the file early and says where to continue", async () => {
    const failed = ok(
      await s.client.callTool({
        name: "boj_get_data_layer",
        arguments: { db: "FAIL", frequency: "M", layers: ["*"], output: "file", response_format: "json" },
      }),
    );
    assert.deepEqual([failed.series_total, failed.next_position, failed.file.partial], [2, 3, true]);
    assert.match(failed.notices[0], /request from start_position 3 failed \(API_ERROR: The BOJ API refused/);
    state.failing = false;
    const rest = ok(
      await s.client.callTool({
        name: "boj_get_data_layer",
        arguments: { db: "FAIL", frequency: "M", layers: ["*"], output: "file", start_position: 3 },
      }),
    );
    assert.deepEqual([rest.series_total, rest.next_position], [3, null]);
    assert.equal(rest.file.rows, 3 * POINTS);
  });

  await t.step("a refused first request is the usual error and writes no file", async () => {
    state.failing = true;
    const before = (await s.client.listResources()).resources.length;
    const e = errorPayload(
      await s.client.callTool({
        name: "boj_get_data_layer",
        arguments: { db: "FAIL", frequency: "M", layers: ["*"], output: "file", start_position: 3 },
      }),
    );
    assert.equal(e["error_type"], "API_ERROR");
    assert.equal((await s.client.listResources()).resources.length, before);
  });
});

Deno.test("boj output file stops before the call's deadline and names start_position", async () => {
  await using fake = startFake({ failing: false });
  await using s = await openProvider(boj({
    fake,
    settings: { file_max_requests: 1000 },
    server: { call_timeout: 2 },
  }));
  const out = ok(
    await s.client.callTool({
      name: "boj_get_data_layer",
      arguments: { db: "SLOW", frequency: "M", layers: ["*"], output: "file" },
    }),
  );
  const requests = fake.requests.length;
  assert.ok(requests >= 1 && requests < 1000, `${requests} requests`);
  assert.equal(out.series_total, 2 * requests);
  assert.equal(out.next_position, 1 + 2 * requests);
  assert.equal(out.file.partial, true);
  assert.match(
    out.notices[0],
    new RegExp(
      `the call's deadline drew near\\. Call boj_get_data_layer again .*start_position=${out.next_position}`,
    ),
  );
});

Deno.test("boj data cut to the size limit names output file, which holds every observation", async () => {
  await using fake = startFake({ failing: false });
  await using s = await openProvider(boj({
    fake,
    // 4,000: a quarter of it is kept for the answer's provenance.
    server: { character_limit: 4000 },
  }));
  const args = { db: "FM08", codes: ["FXERD01"], lang: "en" };
  const screen = ok(await s.client.callTool({ name: "boj_get_data_code", arguments: args }));
  const series = screen.series[0];
  assert.equal(series.points_total, 400);
  assert.ok(series.points_truncated && series.points.length < 400, `${series.points.length} shown`);
  const notice = screen.notices.find((n: string) => n.includes("most recent"));
  assert.match(notice, /Call again with output "file" for every observation/);

  const file = await s.client.callTool({ name: "boj_get_data_code", arguments: { ...args, output: "file" } });
  assert.ok(texts(file)[0]!.length <= 4000);
  const rows = await csvOf(s.client, linkOf(file));
  assert.equal(rows.length, 401, "the file holds all 400 observations");
  assert.deepEqual(
    rows.slice(1).map((r) => r[6]),
    Array.from({ length: 400 }, (_, i) => String(20000000 + i)),
  );
});

Deno.test("boj_get_metadata output file holds every matching row", async () => {
  await using fake = startFake({ failing: false });
  await using s = await openProvider(boj({ fake }));
  const all = await s.client.callTool({
    name: "boj_get_metadata",
    arguments: { db: "fm01", lang: "en", limit: 1, output: "file" },
  });
  const out = ok(all);
  assert.equal(out.entries, undefined);
  assert.deepEqual([out.total, out.count, out.has_more, out.file.partial], [6, 6, false, false]);
  const rows = await csvOf(s.client, linkOf(all));
  assert.equal(rows[0]![0], "series_code");
  assert.equal(rows[0]![8], "layer");
  assert.equal(rows.length, 7, "every row, not the one `limit` would show");
  assert.deepEqual(rows.slice(1).map((r) => [r[0], r[8]]), [
    ["", "1"],
    ["STRDCLUCON", "1,1"],
    ["STRDCLUCONH", "1,2"],
    ["STRDCLUCONL", "1,3"],
    ["", "2"],
    ["STRDCLUCV", "2,1"],
  ]);
  assert.match(texts(all)[0]!, /Wrote 6 of the 6 rows/);

  const some = ok(
    await s.client.callTool({
      name: "boj_get_metadata",
      arguments: { db: "FM01", lang: "en", query: "highest", output: "file", response_format: "json" },
    }),
  );
  assert.deepEqual([some.total, some.query, some.file.rows], [1, "highest", 1]);
});

Deno.test("boj result files over HTTP belong to the session that wrote them", async () => {
  await using fake = startFake({ failing: false });
  await using server = await startHttpServer({ args: BOJ_ARGS, configYaml: bojConfig(fake) });
  const { client: a } = await connectHttp(server.origin);
  const { client: b } = await connectHttp(server.origin);
  try {
    const written = await a.callTool({
      name: "boj_get_metadata",
      arguments: { db: "FM01", lang: "en", output: "file" },
    });
    const uri = linkOf(written);
    assert.equal((await csvOf(a, uri)).length, 7);
    assert.ok(!(await b.listResources()).resources.some((r) => r.uri.startsWith("opendata://files/")));
    await assert.rejects(b.readResource({ uri }), /There is no file/);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("boj search source answers from the local catalogue; a hit's next call works as given", async () => {
  const { app } = await measureTools({ providers: ["boj"] });
  let hits;
  try {
    const source = app.providers.find((p) => p.id === "boj")!.search!;
    assert.match(source.name, /Bank of Japan/);
    assert.match(source.licence, /not guaranteed by the Bank of Japan/);
    hits = await source.search("call rate average", { limit: 5 }, searchContext());
  } finally {
    await app.close();
  }
  assert.equal(hits[0]!.title, "FM01 STRDCLUCON: Call Rate, Uncollateralized Overnight, Average (Daily)");
  assert.match(hits[0]!.snippet!, /無担保コール.*percent per annum · daily, 1998-01-05 to 2026-02-18/);
  // A daily series' next call asks for the recent periods only (about a month), not since 1998.
  const start = String(hits[0]!.next.arguments["start_date"]);
  assert.match(start, /^\d{6}$/);
  assert.deepEqual(hits[0]!.next, {
    tool: "boj_get_data_code",
    arguments: { db: "FM01", codes: ["STRDCLUCON"], start_date: start, lang: "en" },
    for: "recent values",
  });
  // Counted back from the series' last value (2026-02-18 here), not from the clock.
  assert.equal(start, "202601");
  assert.equal(recentStart("DAILY", undefined, Date.UTC(2026, 1, 20)), "202601");
  assert.equal(recentStart("MONTHLY", undefined, Date.UTC(2026, 1, 20)), "202502");
  assert.equal(recentStart("QUARTERLY", undefined, Date.UTC(2026, 1, 20)), "202401");
  assert.equal(recentStart("ANNUAL", undefined, Date.UTC(2026, 1, 20)), "2021");
  // A series that ended long before today: the window still ends at its last value.
  const today = Date.UTC(2026, 10, 29);
  assert.equal(recentStart("DAILY", "20250912", today), "202508");
  assert.equal(recentStart("MONTHLY", "202506", today), "202406");
  assert.equal(recentStart("ANNUAL", "2019", today), "2014");
  assert.equal(recentStart("DAILY", "", today), "202610", "no last period: as of today");

  // Exact codes first, Japanese words, then databases, each with the call that lists its series.
  assert.equal(searchCatalog("fxerd04", 3)[0]!.title.startsWith("FM08 FXERD04:"), true);
  assert.deepEqual(searchCatalog("ドル 円", 20).map((h) => h.title.split(":")[0]).slice(0, 3), [
    "FM08 FXERD01",
    "FM08 FXERD02",
    "FM08 FXERD03",
  ]);
  const db = searchCatalog("effective exchange", 5);
  assert.deepEqual(db.map((h) => h.next), [{
    for: "its series",
    tool: "boj_get_metadata",
    arguments: { db: "FM09", lang: "en" },
  }]);
  assert.equal(
    searchCatalog("fm01", 1)[0]!.next.tool,
    "boj_get_metadata",
    "a database code names the database",
  );
  assert.deepEqual(searchCatalog("no such thing anywhere", 5), []);
  assert.equal(searchCatalog("yen", 2).length, 2, "at most limit hits");

  await using fake = startFake({ failing: false });
  await using s = await openProvider(boj({ fake }));
  for (
    const hit of [hits[0]!, searchCatalog("uncollateralized overnight call rate business day", 5).at(-1)!]
  ) {
    const result = ok(await s.client.callTool({ name: hit.next.tool, arguments: hit.next.arguments }));
    assert.ok(result.source.url.startsWith(fake.origin), `${hit.next.tool} reached the upstream`);
  }
  assert.deepEqual(fake.requests.map((r) => r.url.pathname), ["/api/v1/getDataCode", "/api/v1/getMetadata"]);
});
