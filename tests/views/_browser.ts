// What the browser tests of the views share: Debian's chromium, headless, driven by playwright-core,
// with a host page that frames each view as MCP Apps hosts do with ext-apps' own host side
// (AppBridge, tests/views/host/host.ts), tool calls and resource reads from a view sent to the
// test's real MCP client. Every request the browser makes is intercepted: one that is not for
// 127.0.0.1 is recorded (the tests assert none), and console errors, warnings and page errors too.
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import type { BrowserContext, FrameLocator, Page } from "playwright-core";
import type { InProcessSession } from "../harness/in_process.ts";

/** The system browser (Debian's chromium package; `.ci/run` installs it). */
const CHROMIUM = "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const HOST = new URL("./host/host.ts", import.meta.url).pathname;

/** Where screenshots go (ignored by git; docs/images/ keeps one of each for the README). */
export const SHOTS = new URL("./screenshots/", import.meta.url);

/** The client capabilities of a host that renders views. */
export const UI = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
};

export type Json = Record<string, unknown>;

/** opendata_chart's arguments for GNPCA from FRED and the BOJ call rates on one chart. */
export const FRED_AND_BOJ = {
  calls: [
    { tool: "fred_series", arguments: JSON.stringify({ operation: "get_observations", series_id: "GNPCA" }) },
    { tool: "boj_get_data_layer", arguments: JSON.stringify({ db: "FM01", frequency: "D", layers: ["*"] }) },
  ],
};

/** What the host page (host/host.ts) puts on `window`. */
export interface HostWindow {
  mountView(mount: Json): Promise<void>;
  changeHostContext(context: Json): void;
  openedLinks: string[];
  viewCalls: { name: string; arguments: unknown }[];
}

/** A browser with the host page loaded, and what it saw. */
export interface Browser extends AsyncDisposable {
  page: Page;
  /** Console errors and warnings, and page errors. */
  problems: string[];
  /** Requests for anything but 127.0.0.1 (aborted). */
  outbound: string[];
  /** Paths of the tile requests. */
  tileRequests: string[];
}

/** A grey placeholder tile with its z/x/y (SVG, so the test needs no image encoder). */
function tile(path: string): Response {
  const label = path.replace(/^\/tiles\//, "").replace(/\.png$/, "");
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><rect width="256" height="256" ` +
    `fill="#e8ecef" stroke="#cfd6dc"/><text x="8" y="20" font-size="11" fill="#9aa5ad">${label}</text></svg>`;
  return new Response(svg, { headers: { "content-type": "image/svg+xml" } });
}

/** A loopback tile server, and the `MCP_MAP_TILES_URL` that names it. */
export function startTiles(): { url: string } & AsyncDisposable {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => tile(new URL(req.url).pathname),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/tiles/{z}/{x}/{y}.png`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The host page's script, bundled for the browser by `deno bundle`. */
async function hostScript(): Promise<string> {
  const out = await Deno.makeTempFile({ suffix: ".js" });
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "-q", "--platform", "browser", "-o", out, HOST],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(out).catch(() => {});
  }
}

/** Starts chromium with the host page, its tool calls and resource reads going to `s`. */
export async function openBrowser(s: InProcessSession): Promise<Browser> {
  // Fails, never skips: a machine without the browser cannot say the views work.
  try {
    Deno.statSync(CHROMIUM);
  } catch {
    throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium)`);
  }
  const script = await hostScript();
  Deno.mkdirSync(SHOTS, { recursive: true });
  const profile = Deno.makeTempDirSync({ prefix: "opendata-mcp-chromium-" });
  let context: BrowserContext | undefined;
  const close = async () => {
    await context?.close();
    Deno.removeSync(profile, { recursive: true });
  };
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 800, height: 900 },
    });
    const outbound: string[] = [];
    const tileRequests: string[] = [];
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.protocol === "data:" || url.protocol === "about:") return route.continue();
      if (url.hostname !== "127.0.0.1") {
        outbound.push(url.href);
        return route.abort();
      }
      if (url.pathname.startsWith("/tiles/")) tileRequests.push(url.pathname);
      return route.continue();
    });
    const page = context.pages()[0] ?? await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    await page.exposeFunction(
      "hostCallTool",
      (params: { name: string; arguments?: Json }) => s.client.callTool(params),
    );
    await page.exposeFunction("hostReadResource", (params: { uri: string }) => s.client.readResource(params));
    await page.setContent(
      `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:8px">` +
        `<script type="module">${script.replaceAll("</script", "<\\/script")}</script></body></html>`,
    );
    await page.waitForFunction(() => typeof (globalThis as unknown as HostWindow).mountView === "function");
    return { page, problems, outbound, tileRequests, [Symbol.asyncDispose]: close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Frames `html` (a view's resource) with `result` as the call's answer, as a host does. */
export async function mount(page: Page, mount: Json): Promise<FrameLocator> {
  await page.evaluate((m) => (globalThis as unknown as HostWindow).mountView(m), mount);
  return page.frameLocator("#view");
}

/** A tool's view from tools/list, its resource and one call's result, framed by the host page. */
export async function show(
  page: Page,
  s: InProcessSession,
  name: string,
  args: Json,
  extra: Json = {},
): Promise<{ frame: FrameLocator; result: Json }> {
  const { tools } = await s.client.listTools();
  const tool = tools.find((t) => t.name === name);
  const uri = (tool?._meta?.["ui"] as { resourceUri?: string } | undefined)?.resourceUri;
  assert.ok(uri, `${name} names its view`);
  const read = await s.client.readResource({ uri });
  const content = read.contents[0] as { text: string; mimeType: string; _meta?: { ui?: { csp?: Json } } };
  assert.equal(content.mimeType, "text/html;profile=mcp-app");
  const result = await s.client.callTool({ name, arguments: args }) as Json;
  assert.notEqual(result["isError"], true, JSON.stringify(result).slice(0, 300));
  const frame = await mount(page, {
    html: content.text,
    csp: content._meta?.ui?.csp,
    arguments: args,
    result,
    ...extra,
  });
  return { frame, result };
}

/** The view model a result carries. */
export function model(result: Json): Json {
  return (result["_meta"] as Json)["opendata-mcp/view"] as Json;
}

/** A screenshot of the framed view, to tests/views/screenshots/<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  await page.locator("#view").screenshot({ path: new URL(`${name}.png`, SHOTS).pathname });
}
