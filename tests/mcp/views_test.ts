// The MCP Apps capability gate, end to end against the real server (in process): a client that
// advertises `io.modelcontextprotocol/ui` sees each view-backed tool's `_meta.ui.resourceUri`, the
// `ui://` resources and a view model in each result's `_meta`; a client that does not gets byte
// for byte what it got before views existed. Both protocol eras, stdio and HTTP, stateful and
// stateless; the views themselves are checked against ext-apps' own schemas.
import assert from "node:assert/strict";
import { McpUiResourceMetaSchema, McpUiToolMetaSchema } from "@modelcontextprotocol/ext-apps/app-bridge";
import LISTINGS from "../../lib/providers/listings.json" with { type: "json" };
import { Client as V1Client, StreamableHTTPClientTransport as V1Http } from "../harness/sdk_client.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { Client, MODERN, StreamableHTTPClientTransport } from "../harness/sdk2_client.ts";
import { serveInProcess, startHttpInProcess, startInProcess } from "../harness/in_process.ts";
import type { InProcessSession } from "../harness/in_process.ts";

type Json = Record<string, unknown>;

const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const CAPS_KEY = "io.modelcontextprotocol/clientCapabilities";
const WDS = "/api/v3/wds";
const SEARCH = { name: "worldbank_search_documents", arguments: { query: "roads", limit: 2 } };

/** A fake World Bank and BOJ, and the config naming them. */
function worldbank(): { fake: FakeUpstream; configYaml: string } {
  const fake = FakeUpstream.start([
    { path: WDS, reply: { fixture: "worldbank/synthetic_search_list_shapes.json" } },
    { path: "/api/v1/getDataCode", reply: { fixture: "boj/json_success_code_api.json" } },
  ]);
  const block = (id: string, base: string) =>
    `  ${id}:\n    base_url: ${base}\n    cache_ttl: 0\n    max_retries: 0\n`;
  return {
    fake,
    configYaml: `providers:\n${block("worldbank", `${fake.origin}${WDS}`)}${block("boj", fake.origin)}`,
  };
}

const PROVIDERS = ["--providers", "worldbank,boj"];

/** The generated tools/list entries of those providers' tools, by name. */
const LISTED = new Map(
  ["worldbank", "boj"].flatMap((id) =>
    (LISTINGS.providers[id as "worldbank" | "boj"] as {
      variants: { listing: { tools: { tool: Json }[] } }[];
    })
      .variants[0]!.listing.tools.map((t) => [String(t.tool["name"]), t.tool] as const)
  ),
);

/** `value` as JSON with the keys views add taken out again (in place of a copy, key order kept). */
function withoutViews(value: unknown): string {
  return JSON.stringify(value, (key, v) => {
    if (key !== "_meta" || typeof v !== "object" || v === null) return v;
    const rest = { ...v as Json };
    delete rest["ui"];
    delete rest["ui/resourceUri"];
    delete rest["opendata-mcp/view"];
    return Object.keys(rest).length ? rest : undefined;
  });
}

/**
 * `json` with what differs between two calls of the same tool a second apart taken out: the
 * provenance's retrieval time and the citation id made from it.
 */
function sameMoment(json: string): string {
  return json
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, "<time>")
    .replace(/opendata:\/\/citation\/[a-z_]+\/[0-9a-f]+/g, "<citation>");
}

/**
 * Checks one pair of answers: the plain one has no trace of views, and is the other minus them.
 * That the plain one is what the server sent before views existed is pinned by the listings
 * (generated without views) and, for results, by the gate returning the result untouched.
 */
function assertGate(plain: unknown, withUi: unknown, what: string): void {
  const text = JSON.stringify(plain);
  assert.doesNotMatch(
    text,
    /ui:\/\/|"ui\/resourceUri"|opendata-mcp\/view|"ui":/,
    `${what}: no view for a plain client`,
  );
  assert.notEqual(JSON.stringify(withUi), text, `${what}: the UI client sees views`);
  // Deep equality: the SDK puts its own `_meta` keys after a result's, so key order may differ.
  assert.deepEqual(
    JSON.parse(sameMoment(withoutViews(withUi))),
    JSON.parse(sameMoment(JSON.stringify(plain))),
    `${what}: the same answer once the view keys are taken out`,
  );
}

/** A UI client's tools without opendata_chart, which only it is offered (checked to be there). */
function withoutChart(tools: { name: string }[]): { name: string }[] {
  assert.equal(tools.at(-1)?.name, "opendata_chart", "opendata_chart is offered to a UI client, last");
  return tools.slice(0, -1);
}

/** Posts one 2026-07-28 request with the given client capabilities; the raw answer text. */
async function postModern(origin: string, method: string, params: Json, capabilities: Json): Promise<string> {
  const res = await fetch(`${origin}/mcp`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": MODERN,
      "Mcp-Method": method,
      ...(typeof params["name"] === "string" ? { "Mcp-Name": params["name"] } : {}),
      ...(typeof params["uri"] === "string" ? { "Mcp-Name": params["uri"] } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "views-test", version: "0" },
          [CAPS_KEY]: capabilities,
        },
      },
    }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return text.startsWith("event:") || text.startsWith("data:")
    ? text.split("\n").find((l) => l.startsWith("data:"))!.slice(5).trim()
    : text;
}

Deno.test("views are declared only to clients that advertise io.modelcontextprotocol/ui (2026-07-28 over HTTP, raw bytes)", async () => {
  for (const stateless of [false, true]) {
    const { fake, configYaml } = worldbank();
    await using _fake = fake;
    await using server = await startHttpInProcess({
      args: [...PROVIDERS, ...(stateless ? ["--stateless"] : [])],
      configYaml,
    });
    const mode = stateless ? "stateless" : "stateful";
    for (const [method, params] of [["tools/list", {}], ["tools/call", SEARCH]] as const) {
      const plain = await postModern(server.origin, method, params, {});
      const withUi = await postModern(server.origin, method, params, UI);
      const [p, u] = [JSON.parse(plain), JSON.parse(withUi)];
      assert.equal(JSON.stringify(p), plain, "the server writes JSON.stringify bytes");
      if (method === "tools/list") u.result.tools = withoutChart(u.result.tools);
      if (method === "tools/list") {
        // Byte for byte what the generated listings hold (made from the definitions, without views);
        // 2026-07-28 has no tasks, so the SDK leaves `execution` out there.
        const served = p.result.tools.filter((t: Json) => LISTED.has(String(t["name"])));
        const listed = [...LISTED.values()].map(({ execution: _, ...t }) => t);
        assert.equal(JSON.stringify(served), JSON.stringify(listed), `${mode}: tools as listed`);
      }
      assertGate(p, u, `${mode} ${method}`);
    }
    // The spec lets a server leave UI-only resources out of resources/list: plain clients never see them.
    const resources = async (
      caps: Json,
    ) => (JSON.parse(await postModern(server.origin, "resources/list", {}, caps)).result.resources as {
      uri: string;
    }[]);
    const [plainList, uiList] = [await resources({}), await resources(UI)];
    assert.deepEqual(plainList, uiList.filter((r) => !r.uri.startsWith("ui://")), mode);
    assert.deepEqual(uiList.filter((r) => r.uri.startsWith("ui://")).map((r) => r.uri), [
      "ui://opendata-mcp/series.html",
      "ui://opendata-mcp/documents.html",
      "ui://opendata-mcp/view.html",
    ]);
    const read = JSON.parse(
      await postModern(server.origin, "resources/read", { uri: "ui://opendata-mcp/documents.html" }, UI),
    );
    const content = read.result.contents[0];
    assert.equal(content.mimeType, "text/html;profile=mcp-app");
    assert.match(content.text, /^<!DOCTYPE html>/);
    assert.ok(
      McpUiResourceMetaSchema.safeParse(content._meta.ui).success,
      "ext-apps accepts the resource _meta.ui",
    );
  }
});

Deno.test("views over 2025-11-25 (SDK v1 client): stdio and HTTP sessions declare them to UI clients only; a stateless request without capabilities gets none", async () => {
  const { fake, configYaml } = worldbank();
  await using _fake = fake;
  const answers = async (
    client: { listTools(): Promise<unknown>; callTool(p: typeof SEARCH): Promise<unknown> },
  ) => {
    const tools = await client.listTools() as { tools: { name: string }[] };
    const ui = tools.tools.some((t) => t.name === "opendata_chart");
    return {
      tools: ui ? { ...tools, tools: withoutChart(tools.tools) } : tools,
      call: await client.callTool(SEARCH),
    };
  };

  await using plainStdio = await startInProcess({ args: PROVIDERS, configYaml });
  await using uiStdio = await startInProcess({
    args: PROVIDERS,
    configYaml,
    clientCapabilities: UI,
  });
  const [p, u] = [await answers(plainStdio.client), await answers(uiStdio.client)];
  // A plain client's tools/list entry is the generated listing, made from the tool definitions as
  // they were before views (the listing keeps a view id beside the entry, never in it).
  const listed = (p.tools as { tools: Json[] }).tools.find((t) => t["name"] === SEARCH.name);
  const variants =
    (LISTINGS.providers.worldbank as { variants: { listing: { tools: { tool: Json; view?: string }[] } }[] })
      .variants;
  const generated = variants[0]!.listing.tools.find((t) => t.tool["name"] === SEARCH.name)!;
  assert.equal(generated.view, "documents");
  assert.deepEqual(listed, generated.tool);
  assertGate(p.tools, u.tools, "stdio tools/list");
  assertGate(p.call, u.call, "stdio tools/call");
  const tool = (u.tools as { tools: { name: string; _meta?: Json }[] }).tools.find((t) =>
    t.name === SEARCH.name
  )!;
  assert.ok(McpUiToolMetaSchema.safeParse(tool._meta!["ui"]).success, "ext-apps accepts the tool _meta.ui");
  assert.deepEqual(tool._meta, {
    ui: { resourceUri: "ui://opendata-mcp/documents.html", visibility: ["model", "app"] },
    "ui/resourceUri": "ui://opendata-mcp/documents.html",
  });
  const view = ((u.call as Json)["_meta"] as Json)["opendata-mcp/view"] as Json;
  assert.equal(view["tool"], SEARCH.name);
  assert.equal((view["documents"] as unknown[]).length, 2);
  // A plain client is not offered opendata_chart, and calling it gets the unknown-tool error it always got.
  await assert.rejects(
    plainStdio.client.callTool({ name: "opendata_chart", arguments: { calls: [] } }),
    /Unknown tool "opendata_chart"/,
  );
  // opendata_chart takes only tools that draw series, and says which.
  const wrong = await uiStdio.client.callTool({
    name: "opendata_chart",
    arguments: { calls: [{ tool: SEARCH.name, arguments: "{}" }] },
  });
  assert.equal(wrong.isError, true);
  assert.match(JSON.stringify(wrong.content), /calls\.0\.tool.*draws no series.*boj_get_data_code/);
  const chart = await uiStdio.client.callTool({
    name: "opendata_chart",
    arguments: {
      calls: [{ tool: "boj_get_data_code", arguments: '{"db": "CO", "codes": ["TK99F1000601GCQ01000"]}' }],
    },
  });
  assert.notEqual(chart.isError, true, JSON.stringify(chart.content));
  assert.deepEqual(chart.structuredContent, {
    calls: [{ tool: "boj_get_data_code", is_error: false, series: ["TK99F1000601GCQ01000"] }],
  });
  assert.match(
    (chart.content as { text: string }[])[0]!.text,
    /^## boj_get_data_code\n\n# BOJ getDataCode CO/,
  );
  const text = ((p.call as Json)["content"] as { text: string }[])[0]!.text;
  assert.equal(
    sameMoment(((u.call as Json)["content"] as { text: string }[])[0]!.text),
    sameMoment(text),
    "the text stays complete",
  );

  for (const stateless of [false, true]) {
    await using server = await startHttpInProcess({
      args: [...PROVIDERS, ...(stateless ? ["--stateless"] : [])],
      configYaml,
    });
    const url = new URL(`${server.origin}/mcp`);
    const plain = new V1Client({ name: "plain", version: "0" }, { capabilities: {} });
    const ui = new V1Client({ name: "ui", version: "0" }, { capabilities: UI });
    await plain.connect(new V1Http(url));
    await ui.connect(new V1Http(url));
    const [hp, hu] = [await answers(plain), await answers(ui)];
    if (stateless) {
      // Each stateless 2025-era request meets a fresh server that never saw initialize: no
      // capabilities, so no views (a client gets them by sending its capabilities in _meta).
      assert.equal(
        sameMoment(JSON.stringify(hu)),
        sameMoment(JSON.stringify(hp)),
        "stateless 2025: no views without per-request capabilities",
      );
    } else {
      assertGate(hp.tools, hu.tools, "HTTP session tools/list");
      assertGate(hp.call, hu.call, "HTTP session tools/call");
    }
    await plain.close();
    await ui.close();
  }
});

Deno.test("views with the SDK v2 client pinned to 2026-07-28: its capabilities travel with each request", async () => {
  const { fake, configYaml } = worldbank();
  await using _fake = fake;
  await using server = await startHttpInProcess({
    args: [...PROVIDERS, "--stateless"],
    configYaml,
  });
  const url = new URL(`${server.origin}/mcp`);
  const connect = async (capabilities: Json) => {
    const c = new Client({ name: "v2", version: "0" }, {
      capabilities,
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await c.connect(new StreamableHTTPClientTransport(url));
    return c;
  };
  const plain = await connect({});
  const ui = await connect(UI);
  const uiTools = await ui.listTools();
  assertGate(await plain.listTools(), { ...uiTools, tools: withoutChart(uiTools.tools) }, "v2 tools/list");
  assertGate(await plain.callTool(SEARCH), await ui.callTool(SEARCH), "v2 tools/call");
  await plain.close();
  await ui.close();
});

Deno.test("views over stdio with the SDK v2 client pinned to 2026-07-28", async () => {
  const { fake, configYaml } = worldbank();
  await using _fake = fake;
  const connect = async (capabilities: Json) => {
    const server = serveInProcess({ args: PROVIDERS, configYaml });
    const client = new Client({ name: "v2-stdio", version: "0" }, {
      capabilities,
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await client.connect(server.transport);
    assert.equal(client.getProtocolEra(), "modern");
    return {
      client,
      async close() {
        await client.close();
        await server[Symbol.asyncDispose]();
      },
    };
  };
  const plain = await connect({});
  const ui = await connect(UI);
  try {
    const uiTools = await ui.client.listTools();
    assertGate(
      await plain.client.listTools(),
      { ...uiTools, tools: withoutChart(uiTools.tools) },
      "stdio 2026 tools/list",
    );
    assertGate(
      await plain.client.callTool(SEARCH),
      await ui.client.callTool(SEARCH),
      "stdio 2026 tools/call",
    );
  } finally {
    await plain.close();
    await ui.close();
  }
});

/** The default surface (core tools only) served to a plain client and to a UI client. */
async function defaultSurface(): Promise<
  { plain: InProcessSession; ui: InProcessSession } & AsyncDisposable
> {
  const { fake, configYaml } = worldbank();
  const args = ["--providers", "worldbank,boj", "--toolsets", "core"];
  const plain = await startInProcess({ args, configYaml });
  const ui = await startInProcess({ args, configYaml, clientCapabilities: UI });
  return {
    plain,
    ui,
    async [Symbol.asyncDispose]() {
      await plain[Symbol.asyncDispose]();
      await ui[Symbol.asyncDispose]();
      await fake[Symbol.asyncDispose]();
    },
  };
}

Deno.test("opendata_call names the router view to UI clients, and its results carry the target's view model to them only", async () => {
  await using both = await defaultSurface();
  const { plain, ui } = both;
  const call = {
    name: "opendata_call",
    arguments: { tool: SEARCH.name, arguments: JSON.stringify(SEARCH.arguments) },
  };
  const [p, u] = [await plain.client.callTool(call), await ui.client.callTool(call)];
  assertGate(p, u, "opendata_call");
  const m = (u._meta as Json)["opendata-mcp/view"] as Json;
  assert.equal(m["view"], "documents");
  assert.equal(m["tool"], SEARCH.name);
  assert.equal(m["via"], "opendata_call", "the view calls back through opendata_call");
  const listed = (await ui.client.listTools()).tools.find((t) => t.name === "opendata_call");
  assert.equal((listed?._meta?.["ui"] as Json | undefined)?.["resourceUri"], "ui://opendata-mcp/view.html");
  const bare = (await plain.client.listTools()).tools.find((t) => t.name === "opendata_call");
  assert.equal(bare?._meta?.["ui"], undefined);
  const router = await ui.client.readResource({ uri: "ui://opendata-mcp/view.html" });
  assert.equal(router.contents[0]?.mimeType, "text/html;profile=mcp-app");
});

Deno.test("opendata_search shows its hits in the documents view to UI clients only", async () => {
  await using both = await defaultSurface();
  const { plain, ui } = both;
  const search = { name: "opendata_search", arguments: { query: "roads", sources: ["worldbank"] } };
  const [p, u] = [await plain.client.callTool(search), await ui.client.callTool(search)];
  assertGate(p, u, "opendata_search");
  const hits = (p.structuredContent as { sources: { hits: { title: string; url?: string }[] }[] }).sources
    .flatMap((x) => x.hits);
  assert.ok(hits.length > 0);
  const m = (u._meta as Json)["opendata-mcp/view"] as { view: string; documents: Json[]; query: string };
  assert.equal(m.view, "documents");
  assert.equal(m.query, "roads");
  assert.deepEqual(m.documents.map((d) => [d["title"], d["url"]]), hits.map((h) => [h.title, h.url ?? null]));
  const listed = (await ui.client.listTools()).tools.find((t) => t.name === "opendata_search");
  assert.equal(
    (listed?._meta?.["ui"] as Json | undefined)?.["resourceUri"],
    "ui://opendata-mcp/documents.html",
  );
});
