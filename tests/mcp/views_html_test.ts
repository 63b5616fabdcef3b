// The views as documents (size budget, nothing loaded from elsewhere, the tile origin in the CSP
// and nowhere else), the capability check, the map_tiles_url setting, and the adapters' edge cases.
import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/parse.ts";
import { ConfigError } from "../../lib/errors.ts";
import { rendersViews, requestCapabilities, viewResources, withViewMeta } from "../../lib/mcp/views/mod.ts";
import { placesHtml } from "../../lib/mcp/views/_places.ts";
import { callWith, VIEW_IDS } from "../../lib/mcp/views/model.ts";
import { earlierWindow, surveyDate } from "../../lib/providers/boj/view.ts";
import { fredSeriesView } from "../../lib/providers/fred/view.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import { VIEW_BUDGET_BYTES } from "../../tools/bench/views.ts";
import { schemaProblems } from "../../tools/schema_rules.ts";
import { chartTool } from "../../lib/mcp/tools/chart.ts";

const OSM = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";
const MIME = "text/html;profile=mcp-app";

Deno.test("viewResources() serves each view as one self-contained HTML5 document within its size budget", async () => {
  for (const view of viewResources(VIEW_IDS, { tilesUrl: OSM })) {
    const html = await view.html();
    assert.match(html, /^<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">/, view.id);
    const bytes = new TextEncoder().encode(html).byteLength;
    assert.ok(bytes <= VIEW_BUDGET_BYTES, `${view.id}: ${bytes} bytes, budget ${VIEW_BUDGET_BYTES}`);
    // Nothing is loaded from anywhere: no external script, style, font or frame, no network API.
    assert.doesNotMatch(
      html,
      /<script[^>]*\ssrc=|<link\b|@import|url\(|<iframe|fetch\(|XMLHttpRequest|WebSocket|EventSource/,
    );
    assert.equal(html.match(/<script>/g)?.length, 1, `${view.id}: one inline script`);
    // The only absolute URL in a view is the tile template of the places view.
    const urls = html.match(/https?:\/\/[^"'\s)]+/g) ?? [];
    const allowed = view.id === "places" ? [OSM] : [];
    assert.deepEqual(urls.filter((u) => !u.startsWith("http://www.w3.org/")), allowed, view.id);
    assert.equal(await view.html(), html, "built once and kept");
  }
});

Deno.test("viewResources() declares the tile origin in the places view's CSP, and nothing when there are no tiles", async () => {
  const [series, places] = viewResources(["series", "places"], { tilesUrl: OSM });
  assert.deepEqual(series!.meta.ui.csp, { connectDomains: [], resourceDomains: [] });
  assert.deepEqual(places!.meta.ui.csp, {
    connectDomains: [],
    resourceDomains: ["https://tile.openstreetmap.org"],
  });
  const [bare] = viewResources(["places"], { tilesUrl: null });
  assert.deepEqual(bare!.meta.ui.csp.resourceDomains, []);
  assert.match(await bare!.html(), /var TILES=null,TILE_CREDIT="";/);
  // The router hands its frame to the places view, so it declares the tiles too.
  const served = viewResources(["documents"], { tilesUrl: OSM });
  assert.deepEqual(served.map((v) => v.uri), [
    "ui://opendata-mcp/documents.html",
    "ui://opendata-mcp/view.html",
  ]);
  assert.deepEqual(served[1]!.meta.ui.csp.resourceDomains, ["https://tile.openstreetmap.org"]);
  assert.deepEqual(viewResources([], { tilesUrl: OSM }), [], "no views, no router");
});

Deno.test("placesHtml() writes the tile template so that no value can end the script element", () => {
  const html = placesHtml({
    tilesUrl: "https://t.example/</script><script>alert(1)</script>/{z}/{x}/{y}.png",
  });
  assert.equal(html.match(/<\/script>/g)?.length, 1);
  assert.match(html, /\\u003c\/script>/);
});

Deno.test("rendersViews() needs the extension with the MCP App MIME type; requestCapabilities() prefers the request's envelope", () => {
  const ui = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } };
  assert.equal(rendersViews(ui), true);
  for (
    const caps of [
      undefined,
      null,
      {},
      { extensions: {} },
      { extensions: { "io.modelcontextprotocol/ui": {} } },
      { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html"] } } },
      { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: MIME } } },
      { experimental: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } },
    ]
  ) {
    assert.equal(rendersViews(caps), false, JSON.stringify(caps));
  }
  const key = "io.modelcontextprotocol/clientCapabilities";
  assert.equal(requestCapabilities({ mcpReq: { envelope: { [key]: ui } } }, {}), ui);
  assert.equal(requestCapabilities({ mcpReq: { _meta: { [key]: ui } } }, {}), ui);
  assert.deepEqual(requestCapabilities({ mcpReq: {} }, { roots: {} }), { roots: {} });
});

Deno.test("withViewMeta() adds the view to a copy, keeping the tool's own _meta", () => {
  const tool = { name: "t", _meta: { "x/y": 1 } };
  const out = withViewMeta(tool, "series");
  assert.deepEqual(tool, { name: "t", _meta: { "x/y": 1 } }, "the cached entry is untouched");
  assert.deepEqual(out._meta, {
    "x/y": 1,
    ui: { resourceUri: "ui://opendata-mcp/series.html", visibility: ["model", "app"] },
    "ui/resourceUri": "ui://opendata-mcp/series.html",
  });
});

Deno.test("parseConfig() takes map_tiles_url from the environment and refuses a value that is no tile template", () => {
  const env = (value: string) => parseConfig({ flags: {}, env: { MCP_MAP_TILES_URL: value } }, PROVIDERS);
  assert.equal(
    env("https://tiles.example.org/{z}/{x}/{y}.png").server.map_tiles_url,
    "https://tiles.example.org/{z}/{x}/{y}.png",
  );
  assert.equal(parseConfig({ flags: {}, env: {} }, PROVIDERS).server.map_tiles_url, OSM);
  assert.throws(() => env("https://tiles.example.org/tile.png"), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /map_tiles_url.*\{z\}\/\{x\}\/\{y\}/s);
    return true;
  });
});

Deno.test("parseConfig() refuses a map_tiles_url whose host would widen the view's CSP or crash the server", () => {
  const env = (value: string) => parseConfig({ flags: {}, env: { MCP_MAP_TILES_URL: value } }, PROVIDERS);
  // A wildcard host becomes "https://*" in _meta.ui.csp.resourceDomains: images from any host.
  for (
    const bad of [
      "https://*/{z}/{x}/{y}.png",
      "https://*.tile.example.org/{z}/{x}/{y}.png",
      "https://{s}.tile.example.org/{z}/{x}/{y}.png",
      "https://user:pw@tiles.example.org/{z}/{x}/{y}.png",
      "https://tiles example.org/{z}/{x}/{y}.png",
      "https://tiles.example.org'/{z}/{x}/{y}.png",
      "http://tiles.example.org/{z}/{x}/{y}.png",
    ]
  ) {
    assert.throws(() => env(bad), (e: unknown) => {
      assert.ok(e instanceof ConfigError, `${bad}: ${e}`);
      assert.match(e.message, /map_tiles_url/);
      return true;
    }, bad);
  }
  assert.equal(
    env("http://127.0.0.1:8123/{z}/{x}/{y}.png").server.map_tiles_url,
    "http://127.0.0.1:8123/{z}/{x}/{y}.png",
  );
  const [places] = viewResources(["places"], {
    tilesUrl: env("https://a-b.tiles.example.org:8443/t/{z}/{x}/{y}.png").server.map_tiles_url,
  });
  assert.deepEqual(places?.meta.ui.csp, {
    connectDomains: [],
    resourceDomains: ["https://a-b.tiles.example.org:8443"],
  });
});

Deno.test("callWith() applies changes, drops undefined ones and never carries fresh over", () => {
  assert.deepEqual(callWith({ a: 1, b: 2, fresh: true }, { b: undefined, c: 3 }), { a: 1, c: 3 });
});

Deno.test("surveyDate() dates BOJ periods by their first day", () => {
  assert.equal(surveyDate("19980105", "DAILY"), "1998-01-05");
  assert.equal(surveyDate("2024", "ANNUAL"), "2024-01-01");
  assert.equal(surveyDate("202403", "QUARTERLY"), "2024-07-01");
  assert.equal(surveyDate("202402", "SEMIANNUAL"), "2024-07-01");
  assert.equal(surveyDate("202411", "MONTHLY"), "2024-11-01");
  assert.equal(surveyDate("202405", "QUARTERLY"), null);
  assert.equal(surveyDate("2024-01", "MONTHLY"), null);
});

Deno.test("fredSeriesView.model() draws observations oldest first, offers the window before, and nothing for other operations", () => {
  const args = {
    operation: "get_observations",
    series_id: "gdp",
    observation_start: "2020-01-01",
    units: "pc1",
    fresh: true,
  };
  const model = fredSeriesView.model!({
    operation: "get_observations",
    items: [{ date: "2021-01-01", value: 2 }, { date: "2020-01-01", value: null }],
    has_more: true,
    next_offset: 2,
    source: { series_url: "https://fred.stlouisfed.org/series/GDP", notice: "Not endorsed" },
  }, args);
  assert.ok(model && model.view === "series");
  assert.deepEqual(model.series[0], {
    id: "GDP",
    name: "GDP",
    units: "Percent change from a year ago",
    frequency: null,
    points: [["2020-01-01", null], ["2021-01-01", 2]],
  });
  assert.deepEqual(model.earlier, {
    operation: "get_observations",
    series_id: "gdp",
    observation_start: "2018-12-31",
    observation_end: "2019-12-31",
    units: "pc1",
  });
  assert.deepEqual(model.next, {
    operation: "get_observations",
    series_id: "gdp",
    observation_start: "2020-01-01",
    units: "pc1",
    offset: 2,
  }, "fresh is not carried over");
  assert.equal(fredSeriesView.model!({ operation: "search", items: [] }, { operation: "search" }), undefined);
  assert.equal(
    fredSeriesView.model!({ operation: "get_observations", output_mode: "file" }, args),
    undefined,
  );
});

Deno.test("chartTool() is listed with a strict-client-safe input schema, an output schema and its series view", () => {
  const tool = chartTool(["fred_series", "boj_get_data_code"], "ui://opendata-mcp/series.html");
  assert.deepEqual(schemaProblems(tool.inputSchema), []);
  assert.equal(tool.inputSchema["$schema"], undefined);
  assert.ok(tool.outputSchema);
  assert.match(tool.description ?? "", /fred_series, boj_get_data_code/);
  assert.deepEqual(tool._meta?.["ui"], {
    resourceUri: "ui://opendata-mcp/series.html",
    visibility: ["model", "app"],
  });
  assert.equal(tool.annotations?.readOnlyHint, true);
});

Deno.test("earlierWindow() asks BOJ for the window of the same length before start_date, in the call's format", () => {
  const base = { db: "FM01", codes: ["X"], series_offset: 3 };
  assert.deepEqual(earlierWindow({ ...base, start_date: "202401", end_date: "202406" }, "MONTHLY"), {
    db: "FM01",
    codes: ["X"],
    start_date: "202307",
    end_date: "202312",
  });
  assert.deepEqual(earlierWindow({ ...base, start_date: "202402" }, "QUARTERLY"), {
    db: "FM01",
    codes: ["X"],
    start_date: "201902",
    end_date: "202401",
  });
  assert.deepEqual(earlierWindow({ start_date: "2000", end_date: "2009" }, "ANNUAL"), {
    start_date: "1990",
    end_date: "1999",
  });
  assert.deepEqual(earlierWindow({ start_date: "185202" }, "SEMIANNUAL"), {
    start_date: "185001",
    end_date: "185201",
  });
  assert.equal(earlierWindow({ start_date: "185001" }, "MONTHLY"), null, "nothing before 1850");
  assert.equal(earlierWindow({}, "MONTHLY"), null, "no start, nothing earlier");
});

Deno.test("fredSeriesView.model() leaves out rows whose date cannot be read and counts them, keeping the chart", () => {
  const args = { operation: "get_observations", series_id: "GNPCA", observation_start: "2020-01-01" };
  const model = fredSeriesView.model!({
    operation: "get_observations",
    items: [
      { date: "2020-01-01", value: 1 },
      { date: "not a date", value: 2 },
      { date: "2021-02-30", value: 3 },
      { date: "2022-01-01", value: 4 },
      { value: 5 },
    ],
    source: {},
  }, args);
  assert.ok(model && model.view === "series");
  assert.deepEqual(model.series[0]!.points, [["2020-01-01", 1], ["2022-01-01", 4]]);
  assert.equal(model.series[0]!.dropped, 3);
  assert.equal((model.earlier as { observation_end?: string }).observation_end, "2019-12-31");
});
