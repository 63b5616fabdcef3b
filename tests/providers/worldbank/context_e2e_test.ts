// Context economy (docs/TOOLS.md) for the World Bank tools: their toolset, lean strict-client-safe schemas
// within the provider's budget, output: "file" (whole results as CSV resources, paged up to the cap, partial
// files continued to the end, files private to their HTTP session), and the opendata_search source whose hits
// name the call that returns the whole record.
import assert from "node:assert/strict";
import { createApp } from "../../../lib/app.ts";
import { parseConfig } from "../../../lib/config/parse.ts";
import { Logger } from "../../../lib/log.ts";
import { PROVIDERS } from "../../../lib/providers/registry.ts";
import { startHttpServer } from "../../harness/spawn_http.ts";
import { searchContext } from "../_norway.ts";
import { errorOf, ok, parseCsv, providerTools, texts } from "../../harness/results.ts";
import { connectHttp, openProvider, preset, providerConfig } from "../../harness/provider.ts";
import { Client } from "../../harness/sdk_client.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { schemaProblems } from "../../../tools/schema_rules.ts";
import { measureTools } from "../../../tools/tool_budget.ts";
import { loadYaml } from "../../../lib/config/yaml.ts";

// parseConfig() reads config text with the YAML parser, which loads on demand.
await loadYaml();

const PATH = "/api/v3/wds";
const REAL_SEARCH = "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json";

/** A long abstract, so a file that cut it would show. */
function abstractOf(n: number): string {
  return `Whole abstract of synthetic document ${n}. ${'It goes on, with commas, and "quotes". '.repeat(40)}`
    .trim();
}

/** `rows` synthetic documents from `offset` of `total`. */
function docsPage(total: number, offset: number, rows: number): unknown {
  const documents: Record<string, unknown> = { facets: {} };
  for (let n = offset; n < Math.min(total, offset + rows); n++) {
    const id = String(88_000_000 + n);
    documents[`D${id}`] = {
      id,
      display_title: `Synthetic document ${n}`,
      docdt: "2020-06-30T00:00:00Z",
      docty: "Report",
      count: ["Kenya", "Korea, Republic of"],
      lang: "English",
      abstracts: { "cdata!": abstractOf(n) },
      url: `http://documents.worldbank.org/curated/en/${id}`,
    };
  }
  return { rows, os: offset, total, documents };
}

function route(req: Received, state: { failing: boolean }): Reply {
  const p = req.url.searchParams;
  const os = Number(p.get("os") ?? 0);
  const rows = Number(p.get("rows") ?? 10);
  if (p.get("id") === "18419181") return { fixture: REAL_SEARCH };
  if (p.get("projectid") === "P123365") return { fixture: "worldbank/synthetic_project_P123365.json" };
  if (p.get("fct") === "sectr_exact,lang_exact") {
    const values = (name: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `${name}, value ${i}`, count: 1000 - i }));
    return {
      json: {
        total: 5000,
        documents: { facets: { sectr_exact: values("Sector", 120), lang_exact: values("Lang", 3) } },
      },
    };
  }
  switch (p.get("qterm")) {
    case "post office":
      return { fixture: REAL_SEARCH };
    case "many":
      return { json: docsPage(230, os, rows) };
    case "broken":
      // The second page fails while `failing` is set: the file stops there and says so.
      if (os >= 100 && state.failing) return { status: 503, body: "Service Unavailable" };
      return { json: docsPage(230, os, rows) };
    case "slow":
      return { json: docsPage(50_000, os, rows), delayMs: 400 };
    default:
      return { fixture: "worldbank/synthetic_empty.json" };
  }
}

function startFake(): { fake: FakeUpstream; state: { failing: boolean } } {
  const state = { failing: true };
  const fake = FakeUpstream.start([{ path: PATH, reply: (req) => route(req, state) }]);
  return { fake, state };
}

/** The worldbank provider against a fake WDS: no retries, no pacing, no cache, files of 200. */
const worldbank = preset({
  provider: "worldbank",
  basePath: PATH,
  settings: { max_retries: 0, rate_limit_per_second: 0, cache_ttl: 0, file_max_documents: 200 },
});

/** The config file of `worldbank()` at `origin`. */
function config(origin: string): string {
  return providerConfig(worldbank(), origin);
}

async function readFile(s: { client: Client }, uri: string): Promise<string[][]> {
  const read = await s.client.readResource({ uri });
  return parseCsv((read.contents[0] as { text: string }).text);
}

function link(result: Awaited<ReturnType<Client["callTool"]>>): { uri: string; mimeType?: string } {
  const block = (result.content as { type: string; uri?: string; mimeType?: string }[]).find((c) =>
    c.type === "resource_link"
  );
  assert.ok(block?.uri, "the result links the file");
  return block as { uri: string; mimeType?: string };
}

Deno.test("worldbank tools: one toolset, strict-client-safe schemas within the provider's budget", async () => {
  const { app, costs } = await measureTools({ providers: ["worldbank"] });
  try {
    const provider = app.providers.find((p) => p.id === "worldbank")!;
    assert.deepEqual(provider.toolsets?.map((t) => t.id), ["worldbank"]);
    assert.ok(provider.toolsets![0]!.description.length > 20);
    for (const tool of provider.tools) assert.equal(tool.toolset, "worldbank", tool.name);
    const tokens = costs.reduce((n, c) => n + c.tokens, 0);
    const chars = costs.reduce((n, c) => n + c.chars, 0);
    assert.ok(tokens <= 1000, `${tokens} tokens`);
    assert.ok(chars <= 7000, `${chars} characters`);
    for (const c of costs) {
      const out = JSON.stringify(c.tool.outputSchema);
      assert.doesNotMatch(out, /"description"|9007199254740991/, `${c.name}: compact output schema`);
    }
  } finally {
    await app.close();
  }

  // As a client receives them: every input schema keeps the strict clients' rules.
  const { fake } = startFake();
  await using _fake = fake;
  await using s = await openProvider(worldbank({ fake }));
  const { tools } = await s.client.listTools();
  assert.equal(providerTools(tools).length, 4);
  for (const tool of tools) {
    assert.deepEqual(schemaProblems(tool.inputSchema as Record<string, unknown>), [], tool.name);
  }
});

Deno.test("worldbank_search_documents output file: every match from offset up to the cap, abstracts whole", async (t) => {
  const { fake, state } = startFake();
  await using _fake = fake;
  await using s = await openProvider(worldbank({ fake }));

  await t.step("230 matches from offset 10, cap 200: two requests, 200 rows, the rest named", async () => {
    const result = await s.client.callTool({
      name: "worldbank_search_documents",
      arguments: { query: "many", offset: 10, limit: 5, output: "file" },
    });
    const out = ok(result);
    const pages = fake.requests.filter((r) => r.url.searchParams.get("qterm") === "many");
    assert.deepEqual(
      pages.map((r) => [r.url.searchParams.get("os"), r.url.searchParams.get("rows")]),
      [["10", "100"], ["110", "100"]],
      "pages of 100 up to the cap (limit does not apply to a file)",
    );
    assert.deepEqual(
      [out["total"], out["count"], out["offset"], out["has_more"], out["next_offset"], out["truncated"]],
      [230, 200, 10, true, 210, true],
    );
    assert.equal(out["documents"], undefined, "no documents inline");
    const file = out["file"] as Record<string, unknown>;
    assert.equal(file["rows"], 200);
    assert.equal(file["partial"], true);
    assert.match(String(out["notice"]), /documents 11–210 of 230: the file holds at most 200 documents/);
    assert.match(String(out["notice"]), /offset=210/);
    const { uri, mimeType } = link(result);
    assert.equal(uri, file["uri"]);
    assert.equal(mimeType, "text/csv");
    assert.match(uri, /^opendata:\/\/files\/worldbank\/files\/documents_many\.csv$/);
    assert.match(texts(result)[0]!, /Wrote 200 documents \(11–210 of 230 found\)/);
    assert.ok(texts(result)[0]!.includes(uri), "the text says where the file is");

    const rows = await readFile(s, uri);
    assert.deepEqual(rows[0], [
      "id",
      "title",
      "document_date",
      "document_type",
      "major_document_type",
      "countries",
      "languages",
      "report_number",
      "project_id",
      "abstract",
      "url",
      "pdf_url",
    ]);
    assert.equal(rows.length, 201);
    assert.deepEqual(
      rows.slice(1).map((r) => r[0]),
      Array.from({ length: 200 }, (_, i) => String(88_000_010 + i)),
    );
    assert.equal(rows[1]![5], "Kenya; Korea, Republic of");
    assert.equal(rows[200]![9], abstractOf(209), "the abstract is whole, not shortened");
  });

  await t.step(
    "the answer says once how to read the file; opendata_read names its source and licence",
    async () => {
      const result = await s.client.callTool({
        name: "worldbank_search_documents",
        arguments: { query: "many", limit: 5, output: "file" },
      });
      const text = texts(result)[0]!;
      assert.equal(text.match(/resources\/read/g)?.length, 1, "resources/read named once");
      assert.match(text, /Read it with resources\/read, or with the opendata_read next call\./);
      assert.equal(text.match(/opendata_read \{/g)?.length, 1, "one opendata_read call");
      const read =
        (ok(result)["next_calls"] as { tool: string; arguments: Record<string, unknown>; for?: string }[])
          .find((c) => c.for === "read the file")!;
      const page = await s.client.callTool({ name: read.tool, arguments: read.arguments });
      const source = ok(page)["source"] as Record<string, string | null>;
      assert.equal(source["provider"], "worldbank");
      assert.equal(source["name"], "World Bank Documents & Reports");
      assert.match(source["licence"]!, /World Bank/);
      assert.match(source["request"]!, /many/, "the file's recorded description names what was asked");
      assert.ok(texts(page)[0]!.split("\n")[1]!.startsWith(`Source: World Bank Documents & Reports (`));
      assert.ok(texts(page)[0]!.includes(`Licence: ${source["licence"]}`));
    },
  );

  await t.step("a page that fails ends the file early; offset=next_offset continues to the end", async () => {
    const first = ok(
      await s.client.callTool({
        name: "worldbank_search_documents",
        arguments: { query: "broken", output: "file", response_format: "json" },
      }),
    );
    assert.deepEqual([first["count"], first["next_offset"], first["has_more"]], [100, 100, true]);
    assert.match(String(first["notice"]), /request for documents from offset 100 failed \(API_ERROR/);
    assert.match(String(first["notice"]), /offset=100/);
    state.failing = false;
    const seen = (await readFile(s, String((first["file"] as Record<string, unknown>)["uri"]))).slice(1);
    let offset = first["next_offset"] as number;
    for (let round = 0; round < 5 && offset !== null; round++) {
      const next = await s.client.callTool({
        name: "worldbank_search_documents",
        arguments: { query: "broken", output: "file", offset },
      });
      const out = ok(next);
      seen.push(...(await readFile(s, link(next).uri)).slice(1));
      offset = out["next_offset"] as number;
      if (offset === null) {
        assert.equal(out["notice"], null);
        assert.equal((out["file"] as Record<string, unknown>)["partial"], false);
      }
    }
    assert.equal(offset, null, "the rest came in one more file");
    assert.deepEqual(seen.map((r) => r[0]), Array.from({ length: 230 }, (_, i) => String(88_000_000 + i)));
  });

  await t.step("a refused first request writes no file and is the usual error", async () => {
    state.failing = true;
    const before = (await s.client.listResources()).resources.map((r) => r.uri).sort();
    const e = errorOf(
      await s.client.callTool({
        name: "worldbank_search_documents",
        arguments: { query: "broken", offset: 150, output: "file" },
      }),
    );
    assert.equal(e["error_type"], "API_ERROR");
    assert.equal(e["status"], 503);
    const after = (await s.client.listResources()).resources.map((r) => r.uri).sort();
    assert.deepEqual(after, before, "no file was written");
  });
});

Deno.test("worldbank output file: project documents and every facet value", async () => {
  const { fake } = startFake();
  await using _fake = fake;
  await using s = await openProvider(worldbank({ fake }));

  const project = await s.client.callTool({
    name: "worldbank_search_by_project",
    arguments: { project_id: "p123365", output: "file" },
  });
  const out = ok(project);
  assert.deepEqual([out["total"], out["count"], out["has_more"], out["notice"]], [2, 2, false, null]);
  assert.equal(fake.requests.at(-1)!.url.searchParams.get("projectid"), "P123365");
  const rows = await readFile(s, link(project).uri);
  assert.match(link(project).uri, /project_p123365\.csv$/);
  assert.deepEqual(rows.slice(1).map((r) => r[0]), ["99990011", "99990012"]);

  const facets = await s.client.callTool({
    name: "worldbank_explore_facets",
    arguments: { facets: ["sectr", "lang_exact"], limit: 5, output: "file", response_format: "json" },
  });
  const fout = ok(facets);
  assert.equal(fake.requests.at(-1)!.url.searchParams.get("fct"), "sectr_exact,lang_exact");
  const listed = fout["facets"] as { field: string; available: number; values: unknown[] }[];
  assert.deepEqual(listed.map((f) => [f.field, f.available, f.values.length]), [["sectr", 120, 0], [
    "lang",
    3,
    0,
  ]]);
  assert.equal((fout["file"] as Record<string, unknown>)["rows"], 123);
  const values = await readFile(s, link(facets).uri);
  assert.deepEqual(values[0], ["field", "name", "value", "count"]);
  assert.equal(values.length, 124, "every value, not the 5 a page would show");
  assert.deepEqual(values[1], ["sectr", "Sector", "Sector, value 0", "1000"]);
  assert.deepEqual(values[123], ["lang", "Language", "Lang, value 2", "998"]);
  const md = texts(
    await s.client.callTool({
      name: "worldbank_explore_facets",
      arguments: { facets: ["sectr", "lang"], output: "file" },
    }),
  )[0]!;
  assert.match(md, /Wrote all 123 values \(Sector \(`sectr`\): 120; Language \(`lang`\): 3\)/);
});

Deno.test("worldbank output file stops before the call's deadline and says where to go on", async () => {
  const { fake } = startFake();
  await using _fake = fake;
  // A 3 s call deadline against pages that take 400 ms each: 500 pages cannot all come.
  await using s = await openProvider(worldbank({
    fake,
    settings: { file_max_documents: 50_000 },
    server: { call_timeout: 3 },
  }));
  const result = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { query: "slow", output: "file", response_format: "json" },
  });
  const out = ok(result);
  const count = out["count"] as number;
  assert.ok(count >= 100 && count < 50_000 && count % 100 === 0, `${count} documents written`);
  assert.equal(out["next_offset"], count);
  assert.equal((out["file"] as Record<string, unknown>)["partial"], true);
  assert.match(String(out["notice"]), /the call's deadline drew near\. Call again with offset=\d+/);
  assert.equal((await readFile(s, link(result).uri)).length, count + 1);
});

Deno.test("worldbank result files over HTTP belong to the session that wrote them", async () => {
  const { fake } = startFake();
  await using _fake = fake;
  await using server = await startHttpServer({
    args: ["--providers", "worldbank"],
    configYaml: config(fake.origin),
  });
  const { client: a } = await connectHttp(server.origin);
  const { client: b } = await connectHttp(server.origin);
  try {
    const written = await a.callTool({
      name: "worldbank_search_by_project",
      arguments: { project_id: "P123365", output: "file" },
    });
    const { uri } = link(written);
    assert.equal((await readFile({ client: a }, uri)).length, 3);
    assert.ok((await a.listResources()).resources.some((r) => r.uri === uri));
    assert.ok(!(await b.listResources()).resources.some((r) => r.uri.startsWith("opendata://files/")));
    await assert.rejects(b.readResource({ uri }), /There is no file/);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("worldbank search source: one request, a few documents, each with a next call that works", async () => {
  const { fake } = startFake();
  await using _fake = fake;
  const config_ = parseConfig(
    { flags: { providers: "worldbank" }, env: {}, fileText: config(fake.origin) },
    PROVIDERS,
  );
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-wb-search-" });
  const app = await createApp(config_, PROVIDERS, { logger: new Logger({ write: () => {} }), dataDir });
  let hits;
  try {
    const source = app.providers.find((p) => p.id === "worldbank")!.search!;
    assert.equal(source.name, "World Bank Documents & Reports");
    assert.match(source.licence, /terms-and-conditions/);
    const context = searchContext();
    hits = await source.search("post office", { limit: 3 }, context);
    const sent = fake.requests.map((r) => r.url.searchParams);
    assert.equal(sent.length, 1, "one upstream request");
    assert.equal(sent[0]!.get("qterm"), "post office");
    assert.equal(sent[0]!.get("rows"), "3");
    assert.equal(hits.length, 1);
    const hit = hits[0]!;
    assert.equal(hit.title, "Financial inclusion and the role of the post office");
    assert.equal(hit.date, "2013-10-01");
    assert.equal(hit.url, "https://documents.worldbank.org/curated/en/680321468163464611");
    assert.match(hit.snippet!, /^Policy Research Working Paper · World: Given their widespread presence/);
    assert.deepEqual(hit.next, {
      tool: "worldbank_get_document_details",
      arguments: { document_id: "18419181" },
      for: "details",
    });
    assert.deepEqual(hit.also, [{
      tool: "worldbank_search_documents",
      arguments: {
        query: "post office",
        document_types: ["Policy Research Working Paper"],
        countries: ["World"],
        sort_by: "docdt",
        limit: 5,
      },
      for: "newest Policy Research Working Paper, World documents",
    }], "a hit names the filtered search for more like it");
    assert.equal((await source.search("nothing at all", { limit: 3 }, context)).length, 0);
  } finally {
    await app.close();
    Deno.removeSync(dataDir, { recursive: true });
  }

  await using s = await openProvider(worldbank({ fake }));
  const next = hits[0]!.next;
  const record = ok(await s.client.callTool({ name: next.tool, arguments: next.arguments }));
  assert.equal((record["document"] as Record<string, unknown>)["id"], "18419181");
});
