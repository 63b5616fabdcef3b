// The three views in a real browser: Debian's chromium, headless, driven by playwright-core,
// through a host page that frames each view as MCP Apps hosts do with ext-apps' own host side
// (AppBridge, tests/views/host/host.ts). The server is the real one over stdio (in process), reached
// by a real MCP client that declares the extension; its upstreams are loopback fakes serving recorded
// bodies, and map tiles come from a loopback tile server declared in the view's CSP. Every request
// the browser makes is intercepted: one that is not for 127.0.0.1 fails the test. Screenshots go
// to tests/views/screenshots/ (ignored by git; docs/images/ keeps one of each for the README).
import assert from "node:assert/strict";
import { viewResources } from "../../lib/mcp/views/mod.ts";
import { startViewUpstreams, VIEW_PROVIDERS } from "./_upstreams.ts";
import { startInProcess } from "../harness/in_process.ts";
import {
  FRED_AND_BOJ,
  type HostWindow,
  type Json,
  model,
  openBrowser,
  shot,
  show,
  startTiles,
  UI,
} from "./_browser.ts";

const DS = "LokaliteterEnkeltminnerOgSikringssoner";

Deno.test("views in chromium through ext-apps' AppBridge: what a person sees, with nothing leaving the machine", async (t) => {
  await using tiles = startTiles();
  await using up = startViewUpstreams();
  await using s = await startInProcess({
    args: ["--providers", VIEW_PROVIDERS.join(",")],
    configYaml: up.configYaml,
    env: { MCP_MAP_TILES_URL: tiles.url },
    clientCapabilities: UI,
  });
  {
    await using browser = await openBrowser(s);
    const { page, problems, outbound, tileRequests } = browser;

    await t.step(
      "series: FRED observations, a point per row, the latest value, names from the details call",
      async () => {
        const args = { operation: "get_observations", series_id: "GNPCA", observation_start: "1929-01-01" };
        const { frame, result } = await show(page, s, "fred_series", args);
        const items =
          (result["structuredContent"] as { items: { date: string; value: number | null }[] }).items;
        const rows = items.filter((i) => i.value !== null);
        assert.equal(rows.length, 84);
        await frame.locator(`g[data-series="GNPCA"] circle.pt`).nth(rows.length - 1).waitFor();
        assert.equal(await frame.locator(`g[data-series="GNPCA"] circle.pt`).count(), rows.length);
        const last = rows.at(-1)!;
        const latest = await frame.locator(".latest").first().textContent();
        assert.equal(
          latest,
          `${last.value!.toLocaleString("en-US", { maximumFractionDigits: 0 })} (${last.date})`,
        );
        // The view asked the host for the series' title, units and frequency (fred_series get).
        await frame.getByText("Real Gross National Product").first().waitFor();
        await frame.locator(".lg").getByText("Billions of Chained 2012 Dollars").waitFor();
        assert.match(await frame.locator("#foot").textContent() ?? "", /not endorsed or certified/);
        // Zooming to the last part of the range keeps fewer points on the chart.
        await frame.locator("#r0").fill("800");
        const zoomed = await frame.locator(`g[data-series="GNPCA"] circle.pt`).count();
        assert.ok(zoomed > 0 && zoomed < rows.length, `zoomed to ${zoomed} points`);
        await frame.locator("#reset").click();
        // Earlier data: the same tool, through the host, for the window before the first point.
        await frame.locator("#earlier").click();
        await page.waitForFunction(() =>
          (globalThis as unknown as HostWindow).viewCalls.some((c) =>
            (c.arguments as { observation_end?: string }).observation_end === "1928-12-31"
          )
        );
        await frame.locator("#status").getByText("84 observations").waitFor();
        await shot(page, "series");
      },
    );

    await t.step("series: a hostile name stays text, and values one float apart still draw", async () => {
      const [series] = viewResources(["series"], { tilesUrl: null });
      const args = { operation: "get_observations", series_id: "GNPCA", observation_start: "1929-01-01" };
      const hostile = structuredClone(
        await s.client.callTool({ name: "fred_series", arguments: args }) as Json,
      );
      const m = model(hostile);
      delete m["details"];
      const [first] = m["series"] as { name: string; points: [string, number | null][] }[];
      first!.name = "<img src=x onerror=\"parent.postMessage(1,'*')\">GNP";
      // Finite and one ulp apart: a tick step below the float's precision never advanced.
      first!.points = [["2020-01-01", 1e20], ["2021-01-01", 1.0000000000000002e20]];
      await page.evaluate((v) => (globalThis as unknown as HostWindow).mountView(v), {
        html: await series!.html(),
        csp: series!.meta.ui.csp,
        arguments: args,
        result: hostile,
      });
      const frame = page.frameLocator("#view");
      await frame.locator("circle.pt").nth(1).waitFor({ timeout: 20_000 });
      assert.equal(await frame.locator("circle.pt").count(), 2);
      assert.equal(await frame.locator("#legend b").first().textContent(), first!.name, "shown as text");
      assert.equal(await frame.locator("img").count(), 0, "not parsed as HTML");
    });

    await t.step("series: BOJ data by layer, one line per series", async () => {
      const args = { db: "FM01", frequency: "D", layers: ["*"], start_date: "202601", end_date: "202602" };
      const { frame, result } = await show(page, s, "boj_get_data_layer", args);
      const series = model(result)["series"] as { id: string; points: [string, number | null][] }[];
      assert.ok(series.length >= 1);
      for (const one of series) {
        const n = one.points.filter((p) => p[1] !== null).length;
        await frame.locator(`.lg[data-series="${one.id}"]`).waitFor();
        assert.equal(await frame.locator(`g[data-series="${one.id}"] circle.pt`).count(), n, one.id);
      }
      // Earlier data: the two months before, through the host (the fake answers the same rows).
      await frame.locator("#earlier").click();
      await page.waitForFunction(() =>
        (globalThis as unknown as HostWindow).viewCalls.some((c) =>
          (c.arguments as { start_date?: string; end_date?: string }).start_date === "202511" &&
          (c.arguments as { end_date?: string }).end_date === "202512"
        )
      );
    });

    await t.step("series: FRED and BOJ at once (opendata_chart), a point per row of each", async () => {
      const { frame, result } = await show(page, s, "opendata_chart", FRED_AND_BOJ);
      const series = model(result)["series"] as { id: string; points: [string, number | null][] }[];
      assert.ok(series.some((x) => x.id === "GNPCA") && series.some((x) => x.id.startsWith("STRDCL")));
      await frame.locator(".lg").nth(series.length - 1).waitFor();
      assert.equal(await frame.locator(".lg").count(), series.length);
      for (const one of series) {
        const n = one.points.filter((p) => p[1] !== null).length;
        assert.equal(await frame.locator(`g[data-series="${one.id}"] circle.pt`).count(), n, one.id);
      }
      // The FRED title comes back through opendata_chart (the view's details call).
      await frame.getByText("Real Gross National Product").first().waitFor();
      await frame.locator("#rebase").check();
    });

    await t.step("places: OGC features, a marker per located feature, a popup, the next page", async () => {
      const args = { dataset: DS, collection: "lokaliteter", limit: 2 };
      const { frame, result } = await show(page, s, "riksantikvaren-features", args);
      const first = model(result)["places"] as { lat: number | null; name: string }[];
      const located = first.filter((p) => p.lat !== null).length;
      await frame.locator("circle.marker").nth(located - 1).waitFor();
      assert.equal(await frame.locator("circle.marker").count(), located);
      await frame.locator("circle.marker").first().click();
      await frame.locator("#pop").getByText(first[0]!.name).waitFor();
      const next = await s.client.callTool({
        name: "riksantikvaren-features",
        arguments: model(result)["next"] as Json,
      });
      const more = (model(next as Json)["places"] as { lat: number | null }[]).filter((p) =>
        p.lat !== null
      ).length;
      await frame.locator("#next").click();
      await frame.locator("circle.marker").nth(located + more - 1).waitFor();
      assert.equal(await frame.locator("circle.marker").count(), located + more);
      assert.ok(await frame.locator("line.gr").count() >= 2, "a graticule is drawn");
      assert.ok(tileRequests.length > 0, "tiles come from the tile server the CSP declares");
      await frame.locator("circle.marker").nth(1).click();
      await frame.locator("#pop").waitFor();
      await shot(page, "places");
    });

    await t.step("places without tiles: the markers, the circle and a graticule still draw", async () => {
      const [bare] = viewResources(["places"], { tilesUrl: null });
      const args = { lat: 41.68, lon: -70.2, radius_m: 10000, limit: 10 };
      const result = await s.client.callTool({ name: "wikipedia-geosearch", arguments: args }) as Json;
      const before = tileRequests.length;
      await page.evaluate((m) => (globalThis as unknown as HostWindow).mountView(m), {
        html: await bare!.html(),
        csp: bare!.meta.ui.csp,
        arguments: args,
        result,
      });
      const frame = page.frameLocator("#view");
      const located = (model(result)["places"] as { lat: number | null }[]).filter((p) =>
        p.lat !== null
      ).length;
      await frame.locator("circle.marker").nth(located - 1).waitFor();
      assert.equal(await frame.locator("circle.marker").count(), located);
      assert.equal(await frame.locator("polygon.area").count(), 1, "the searched circle");
      assert.ok(await frame.locator("line.gr").count() >= 2, "a graticule");
      assert.equal(await frame.locator("image").count(), 0, "no tiles");
      assert.equal(tileRequests.length, before, "no tile requested");
      await shot(page, "places-without-tiles");
    });

    await t.step(
      "places: hostile names stay text, and a coordinate off the globe is listed without a location",
      async () => {
        const [bare] = viewResources(["places"], { tilesUrl: null });
        const args = { lat: 41.68, lon: -70.2, radius_m: 10000, limit: 10 };
        const hostile = structuredClone(
          await s.client.callTool({ name: "wikipedia-geosearch", arguments: args }) as Json,
        );
        const places = model(hostile)["places"] as {
          name: string;
          lat: number | null;
          lon: number | null;
          url: string | null;
        }[];
        const located = places.filter((p) => p.lat !== null && p.lon !== null).length;
        assert.ok(places.length >= 2 && places[0]!.lat !== null && places[1]!.lat !== null);
        // Finite, so numberOrNull lets it through; drawn, it would freeze the graticule loop.
        places[0]!.lon = 1e20;
        places[0]!.name = "<img src=x onerror=\"parent.postMessage(1,'*')\">Far";
        places[1]!.url = "javascript:parent.postMessage(1,'*')";
        await page.evaluate((m) => (globalThis as unknown as HostWindow).mountView(m), {
          html: await bare!.html(),
          csp: bare!.meta.ui.csp,
          arguments: args,
          result: hostile,
        });
        const frame = page.frameLocator("#view");
        await frame.locator("#status", { hasText: "without a location" }).waitFor({ timeout: 20_000 });
        assert.equal(await frame.locator("circle.marker").count(), located - 1);
        assert.equal(await frame.locator("#list li").first().textContent(), places[0]!.name, "shown as text");
        assert.equal(await frame.locator("img").count(), 0, "not parsed as HTML");
        await frame.locator("#list li").nth(1).click();
        await frame.locator("#pop").waitFor();
        assert.equal(await frame.locator("#pop a").count(), 0, "no javascript: link");
      },
    );

    await t.step(
      "places: nearby draws its circle; ArcGIS and Wikipedia geosearch their markers",
      async () => {
        const nearby = await show(page, s, "riksantikvaren-nearby", {
          lat: 59.908,
          lon: 10.764,
          radius_m: 500,
          dataset: DS,
          collection: "lokaliteter",
        });
        await nearby.frame.locator("polygon.area").waitFor();
        const n =
          (model(nearby.result)["places"] as { lat: number | null }[]).filter((p) => p.lat !== null).length;
        assert.equal(await nearby.frame.locator("circle.marker").count(), n);
        for (
          const [name, args] of [
            ["arcgis-query", { service: "Kulturminner20180301", layer: 7 }],
            ["wikipedia-geosearch", { lat: 41.68, lon: -70.2, radius_m: 10000, limit: 10 }],
          ] as const
        ) {
          const { frame, result } = await show(page, s, name, args);
          const located = (model(result)["places"] as { lat: number | null }[]).filter((p) =>
            p.lat !== null
          ).length;
          assert.ok(located > 0, name);
          await frame.locator("circle.marker").nth(located - 1).waitFor();
          assert.equal(await frame.locator("circle.marker").count(), located, name);
        }
      },
    );

    await t.step(
      "documents: World Bank list with citation, date, country, type; links open through the host",
      async () => {
        const args = { query: "financial inclusion", limit: 2 };
        const { frame, result } = await show(page, s, "worldbank_search_documents", args);
        const docs = model(result)["documents"] as {
          title: string;
          url: string;
          country: string;
          date: string;
        }[];
        await frame.locator("li.doc").nth(docs.length - 1).waitFor();
        assert.equal(await frame.locator("li.doc").count(), docs.length);
        const item = frame.locator("li.doc").first();
        assert.match(await item.textContent() ?? "", new RegExp(`${docs[0]!.date}.*${docs[0]!.country}`));
        assert.match(await item.locator(".cite").textContent() ?? "", /^World Bank\. \d{4}\./);
        await item.locator("a").click();
        await page.waitForFunction(
          (url) => (globalThis as unknown as HostWindow).openedLinks.includes(url),
          docs[0]!.url,
        );
        await shot(page, "documents");
        const next = await s.client.callTool({
          name: "worldbank_search_documents",
          arguments: model(result)["next"] as Json,
        });
        const more = (model(next as Json)["documents"] as unknown[]).length;
        await frame.locator("#next").click();
        await frame.locator("li.doc").nth(docs.length + more - 1).waitFor();
        assert.equal(await frame.locator("li.doc").count(), docs.length + more);
      },
    );

    await t.step(
      "documents: upstream text stays text, and a link that is not http(s) is no link",
      async () => {
        const { result } = await show(page, s, "worldbank_search_documents", { query: "roads", limit: 2 });
        const hostile = structuredClone(result);
        const docs = model(hostile)["documents"] as { title: string; url: string | null }[];
        docs[0]!.title = "<img src=x onerror=\"parent.postMessage(1,'*')\">Title";
        docs[0]!.url = "javascript:parent.postMessage(1,'*')";
        const [documents] = viewResources(["documents"], { tilesUrl: null });
        await page.evaluate((m) => (globalThis as unknown as HostWindow).mountView(m), {
          html: await documents!.html(),
          csp: documents!.meta.ui.csp,
          arguments: {},
          result: hostile,
        });
        const frame = page.frameLocator("#view");
        const first = frame.locator("li.doc").first();
        await first.waitFor();
        assert.equal(await first.locator(".t").textContent(), docs[0]!.title, "shown as text");
        assert.equal(await first.locator("img").count(), 0, "not parsed as HTML");
        assert.equal(await first.locator("a").count(), 0, "no javascript: link");
      },
    );

    await t.step("documents: SNL and Wikipedia search", async () => {
      for (
        const [name, args] of [["snl-search", { query: "programmering" }], ["wikipedia-search", {
          query: "meaning",
        }]] as const
      ) {
        const { frame, result } = await show(page, s, name, args);
        const n = (model(result)["documents"] as unknown[]).length;
        await frame.locator("li.doc").nth(n - 1).waitFor();
        assert.equal(await frame.locator("li.doc").count(), n, name);
      }
    });

    assert.deepEqual(outbound, [], "no request left the machine");
    assert.deepEqual(problems, [], "no console error or warning");
  }
});
