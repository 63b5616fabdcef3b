// The views as the host and the data make them look, in Debian's chromium through ext-apps' host
// side (tests/views/_browser.ts): a view reached through opendata_call on the default surface, the
// host's theme, style variables, display mode and container size, axes for every magnitude and
// span, mixed units, and series that are empty or partly unreadable. No console error in any case.
import assert from "node:assert/strict";
import type { FrameLocator, Page } from "playwright-core";
import { viewResources } from "../../lib/mcp/views/mod.ts";
import { startViewUpstreams, VIEW_PROVIDERS } from "./_upstreams.ts";
import { startInProcess } from "../harness/in_process.ts";
import type { InProcessSession } from "../harness/in_process.ts";
import {
  FRED_AND_BOJ,
  type HostWindow,
  type Json,
  model,
  mount,
  openBrowser,
  shot,
  show,
  startTiles,
  UI,
} from "./_browser.ts";

const FRED_ARGS = { operation: "get_observations", series_id: "GNPCA", observation_start: "1929-01-01" };

/** The bits of the DOM the page functions use (the suite is type-checked without the DOM lib). */
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}
interface El {
  getBoundingClientRect(): Box;
  querySelectorAll(selector: string): Iterable<El>;
  getAttribute(name: string): string | null;
  textContent: string | null;
  clientHeight: number;
}
type Win = {
  getComputedStyle(n: unknown): { backgroundColor: string; colorScheme: string };
  ResizeObserver: new (fn: () => void) => { observe(n: unknown): void; disconnect(): void };
};

/** A real fred_series result whose view model is changed by `edit` (the view draws only the model). */
async function fredWith(s: InProcessSession, edit: (m: Json) => void): Promise<Json> {
  const result = structuredClone(
    await s.client.callTool({ name: "fred_series", arguments: FRED_ARGS }) as Json,
  );
  const m = model(result);
  delete m["details"];
  delete m["earlier"];
  edit(m);
  return result;
}

/** Frames the series view with `result`. */
async function series(page: Page, result: Json, extra: Json = {}): Promise<FrameLocator> {
  const [view] = viewResources(["series"], { tilesUrl: null });
  return await mount(page, {
    html: await view!.html(),
    csp: view!.meta.ui.csp,
    arguments: FRED_ARGS,
    result,
    ...extra,
  });
}

/** The computed background colour of the view's root element and its colour scheme. */
async function look(frame: FrameLocator): Promise<{ background: string; scheme: string }> {
  return await frame.locator("html").evaluate((n) => {
    const style = (globalThis as unknown as Win).getComputedStyle(n);
    return { background: style.backgroundColor, scheme: style.colorScheme };
  });
}

/** Every tick label's box against the chart's, and every path's data. */
async function geometry(
  frame: FrameLocator,
): Promise<{ outside: string[]; paths: string[]; labels: string[] }> {
  return await frame.locator("#chart").evaluate((svg) => {
    const box = (svg as unknown as El).getBoundingClientRect();
    const outside: string[] = [];
    const labels: string[] = [];
    for (const t of (svg as unknown as El).querySelectorAll("text")) {
      const b = t.getBoundingClientRect();
      labels.push(t.textContent ?? "");
      if (
        b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 ||
        b.bottom > box.bottom + 0.5
      ) {
        outside.push(
          `${t.textContent} [${Math.round(b.left - box.left)}, ${Math.round(b.right - box.left)}]`,
        );
      }
    }
    const paths = [...(svg as unknown as El).querySelectorAll("path")].map((p) => p.getAttribute("d") ?? "");
    return { outside, paths, labels };
  });
}

/** The x-axis labels (the tick labels along the bottom). */
async function xLabels(frame: FrameLocator): Promise<string[]> {
  return await frame.locator("#chart text.tick[text-anchor=middle]").allTextContents();
}

Deno.test("views in chromium: opendata_call, the host's look, every magnitude and span, and bad data", async (t) => {
  await using up = startViewUpstreams();
  await using tiles = startTiles();
  await using s = await startInProcess({
    args: ["--providers", VIEW_PROVIDERS.join(","), "--toolsets", "core"],
    configYaml: up.configYaml,
    env: { MCP_MAP_TILES_URL: tiles.url },
    clientCapabilities: UI,
  });
  await using browser = await openBrowser(s);
  const { page, problems, outbound } = browser;

  await t.step(
    "opendata_call on the default surface shows each result in the view its data calls for",
    async () => {
      const { tools } = await s.client.listTools();
      assert.ok(!tools.some((x) => x.name === "fred_series"), "the default surface lists the core tools");
      const call = (tool: string, args: Json) => ({ tool, arguments: JSON.stringify(args) });
      const chart = await show(page, s, "opendata_call", call("fred_series", FRED_ARGS));
      await chart.frame.locator(`g[data-series="GNPCA"] circle.pt`).first().waitFor();
      const rows = (model(chart.result)["series"] as { points: [string, number | null][] }[])[0]!.points
        .filter((p) => p[1] !== null).length;
      assert.equal(await chart.frame.locator(`g[data-series="GNPCA"] circle.pt`).count(), rows);
      // The names come from the details call, made through opendata_call (fred_series is not listed).
      await chart.frame.getByText("Real Gross National Product").first().waitFor();
      const calls = await page.evaluate(() => (globalThis as unknown as HostWindow).viewCalls);
      assert.ok(calls.length > 0 && calls.every((c) => c.name === "opendata_call"), JSON.stringify(calls));
      await shot(page, "series-through-call");

      const map = await show(
        page,
        s,
        "opendata_call",
        call("wikipedia-geosearch", { lat: 41.68, lon: -70.2, radius_m: 10000, limit: 10 }),
      );
      const located =
        (model(map.result)["places"] as { lat: number | null }[]).filter((p) => p.lat !== null).length;
      await map.frame.locator("circle.marker").nth(located - 1).waitFor();
      assert.equal(await map.frame.locator("circle.marker").count(), located);

      const list = await show(
        page,
        s,
        "opendata_call",
        call("worldbank_search_documents", { query: "roads", limit: 2 }),
      );
      const docs = (model(list.result)["documents"] as unknown[]).length;
      await list.frame.locator("li.doc").nth(docs - 1).waitFor();
      assert.equal(await list.frame.locator("li.doc").count(), docs);
      await list.frame.locator("#next").click();
      await list.frame.locator("li.doc").nth(docs * 2 - 1).waitFor();
      // The search's hits, as a list with their sources.
      const search = await show(page, s, "opendata_search", { query: "financial inclusion" });
      const hits = model(search.result)["documents"] as { title: string; type: string }[];
      assert.ok(hits.length > 0);
      await search.frame.locator("li.doc").nth(hits.length - 1).waitFor();
      assert.equal(await search.frame.locator("li.doc .t").first().textContent(), hits[0]!.title);
    },
  );

  await t.step(
    "opendata_call in a host that passes no resource reads on shows the result's text",
    async () => {
      const args = { tool: "fred_series", arguments: JSON.stringify(FRED_ARGS) };
      const { frame, result } = await show(page, s, "opendata_call", args, { serverResources: false });
      const text = (result["content"] as { text: string }[])[0]!.text;
      await frame.locator("#status pre").waitFor();
      assert.ok((await frame.locator("#status pre").textContent())!.includes(text.slice(0, 40)));
    },
  );

  await t.step(
    "the host's theme: light and dark backgrounds, the system's when no theme, live changes",
    async () => {
      const result = await fredWith(s, () => {});
      let frame = await series(page, result, { hostContext: { theme: "dark" } });
      await frame.locator("circle.pt").first().waitFor();
      assert.deepEqual(await look(frame), { background: "rgb(23, 24, 27)", scheme: "dark" });
      await shot(page, "series-dark");
      frame = await series(page, result, { hostContext: { theme: "light" } });
      await frame.locator("circle.pt").first().waitFor();
      assert.deepEqual(await look(frame), { background: "rgb(255, 255, 255)", scheme: "light" });
      // No theme from the host: the system's preference decides.
      await page.emulateMedia({ colorScheme: "dark" });
      frame = await series(page, result, { hostContext: {} });
      await frame.locator("circle.pt").first().waitFor();
      assert.equal((await look(frame)).background, "rgb(23, 24, 27)");
      await page.emulateMedia({ colorScheme: "light" });
      // The host's style variables, and a live change of theme and variables.
      const variables = {
        "--color-background-primary": "rgb(1, 2, 3)",
        "--color-text-primary": "rgb(250, 250, 250)",
      };
      frame = await series(page, result, { hostContext: { theme: "light", styles: { variables } } });
      await frame.locator("circle.pt").first().waitFor();
      assert.equal((await look(frame)).background, "rgb(1, 2, 3)");
      await page.evaluate((c) => (globalThis as unknown as HostWindow).changeHostContext(c), {
        theme: "dark",
        styles: { variables: { "--color-background-primary": "rgb(40, 41, 42)" } },
      });
      await frame.locator("html[data-theme=dark]").waitFor({ state: "attached" });
      assert.deepEqual(await look(frame), { background: "rgb(40, 41, 42)", scheme: "dark" });
    },
  );

  await t.step("display mode and container size: the chart fills the room the host gives", async () => {
    const result = await fredWith(s, () => {});
    const frame = await series(page, result, {
      hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline", "fullscreen"] },
    });
    await frame.locator("circle.pt").first().waitFor();
    const inline = await frame.locator("#chart").evaluate((n) => (n as unknown as El).clientHeight);
    await page.evaluate((c) => (globalThis as unknown as HostWindow).changeHostContext(c), {
      containerDimensions: { height: 700, width: 760 },
    });
    // The chart grows to fill the height the host now gives (a resize, awaited, not slept on).
    await frame.locator("#chart").evaluate((n) =>
      new Promise<void>((ok, fail) => {
        const ro = new (globalThis as unknown as Win).ResizeObserver(() => {
          if ((n as unknown as El).clientHeight > 400) {
            ro.disconnect();
            ok();
          }
        });
        ro.observe(n);
        // A bound, not a wait: a chart that never grows fails instead of hanging the suite.
        setTimeout(
          () => fail(new Error(`The chart stays ${(n as unknown as El).clientHeight}px high`)),
          10_000,
        );
      })
    );
    // Full screen on request, through the host; the view says it is in it.
    await frame.locator("#fs").click();
    await frame.locator("html[data-mode=fullscreen]").waitFor({ state: "attached" });
    assert.equal(await frame.locator("#fs").textContent(), "Exit full screen");
    assert.ok(inline <= 280, `inline chart ${inline}px`);
  });

  await t.step("billions and 1e300: compact labels inside the chart, no NaN", async () => {
    const population = await fredWith(s, (m) => {
      const [one] = m["series"] as Json[];
      one!["name"] = "World population";
      one!["points"] = [["2000-01-01", 6.15e9], ["2010-01-01", 6.99e9], ["2020-01-01", 7.84e9], [
        "2023-01-01",
        8.05e9,
      ]];
    });
    let frame = await series(page, population);
    await frame.locator("circle.pt").nth(3).waitFor();
    let g = await geometry(frame);
    assert.deepEqual(g.outside, [], "no label outside the chart");
    assert.ok(g.labels.some((l) => /^\d(\.\d)?B$/.test(l)), g.labels.join(" "));
    await shot(page, "series-billions");
    const extreme = await fredWith(s, (m) => {
      const [one] = m["series"] as Json[];
      one!["points"] = [["2020-01-01", 1e300], ["2021-01-01", -1e300], ["2022-01-01", 5e299]];
    });
    frame = await series(page, extreme);
    await frame.locator("circle.pt").nth(2).waitFor();
    g = await geometry(frame);
    assert.deepEqual(g.outside, []);
    assert.ok(g.paths.every((d) => d.length > 0 && !d.includes("NaN")), g.paths.join(" | "));
    const cy = await frame.locator("circle.pt").evaluateAll((ns) => ns.map((n) => n.getAttribute("cy")));
    assert.ok(cy.every((y) => y !== null && Number.isFinite(Number(y))), cy.join(" "));
  });

  await t.step("a short range names each day once on the x axis", async () => {
    const short = await fredWith(s, (m) => {
      const [one] = m["series"] as Json[];
      one!["points"] = [["2024-03-01", 1], ["2024-03-02", 2], ["2024-03-03", 1.5], ["2024-03-04", 3]];
    });
    const frame = await series(page, short);
    await frame.locator("circle.pt").nth(3).waitFor();
    const labels = await xLabels(frame);
    assert.ok(labels.length >= 2, labels.join(" "));
    assert.equal(new Set(labels).size, labels.length, `no repeated date: ${labels.join(" ")}`);
  });

  await t.step("FRED and BOJ together: a panel per unit, no '-0' tick", async () => {
    const { frame, result } = await show(page, s, "opendata_chart", FRED_AND_BOJ);
    const all = model(result)["series"] as { id: string; units: string | null }[];
    await frame.getByText("Real Gross National Product").first().waitFor();
    const units = new Set(all.map((x) => (x.units ?? "").trim().toLowerCase())).size;
    assert.ok(units >= 2, "the chart mixes units");
    await frame.locator("#chart text.unit").nth(units - 1).waitFor();
    assert.equal(await frame.locator("#chart text.unit").count(), units);
    assert.match(await frame.locator("#status").textContent() ?? "", /one panel each/);
    const g = await geometry(frame);
    assert.ok(!g.labels.includes("-0") && !g.labels.includes("−0"), g.labels.join(" "));
    assert.deepEqual(g.outside, []);
    await shot(page, "series-both");
  });

  await t.step("a BOJ code chart's title carries the series' name and unit", async () => {
    const args = { db: "FM01", codes: ["STRDCLUCON"] };
    const result = structuredClone(
      await s.client.callTool({ name: "boj_get_data_code", arguments: args }) as Json,
    );
    const [one] = model(result)["series"] as Json[];
    assert.equal(one!["id"], "STRDCLUCON");
    // getDataCode names the series and its unit (the recorded body was trimmed of them).
    one!["name"] = "Call Rate, Uncollateralized Overnight, Average (Daily)";
    one!["units"] = "percent per annum";
    const frame = await series(page, result);
    await frame.locator("circle.pt").first().waitFor();
    assert.equal(
      await frame.locator("#title").textContent(),
      "Call Rate, Uncollateralized Overnight, Average (Daily) (percent per annum)",
    );
  });

  await t.step(
    "an empty series says so with its source; unreadable points are left out with a note",
    async () => {
      const empty = await fredWith(s, (m) => {
        (m["series"] as Json[])[0]!["points"] = [];
      });
      let frame = await series(page, empty);
      await frame.locator("#chart text.empty").waitFor();
      assert.match(await frame.locator("#status").textContent() ?? "", /No observations/);
      assert.match(await frame.locator("#foot").textContent() ?? "", /Source: FRED/);
      assert.equal(await frame.locator("#ctl").isVisible(), false, "no sliders over nothing");
      const bad = await fredWith(s, (m) => {
        (m["series"] as Json[])[0]!["points"] = [
          ["2020-01-01", 1],
          ["not a date", 2],
          ["2021-01-01", 3],
          ["2022-13-45", 4],
          ["2023-01-01", 2],
        ];
      });
      frame = await series(page, bad);
      await frame.locator("circle.pt").nth(2).waitFor();
      assert.equal(await frame.locator("circle.pt").count(), 3);
      assert.match(await frame.locator("#status").textContent() ?? "", /2 points left out/);
      assert.ok((await geometry(frame)).paths.every((d) => !d.includes("NaN")));
    },
  );

  assert.deepEqual(outbound, [], "no request left the machine");
  assert.deepEqual(problems, [], "no console error or warning");
});
