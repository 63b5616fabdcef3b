// Context economy for FRED (docs/TOOLS.md, docs/apis/fred.md): what the tools cost an agent (budget,
// strict-client schemas, toolsets), the keyless default, the opendata_search source, lossless cut results,
// whole files from every data tool, and answers without the list an operation expects (DECODE_ERROR, never
// cached).
import assert from "node:assert/strict";
import { createApp } from "../../../lib/app.ts";
import { parseConfig } from "../../../lib/config/parse.ts";
import { loadYaml } from "../../../lib/config/yaml.ts";
import { Logger } from "../../../lib/log.ts";
import type { Provider, ToolCallContext } from "../../../lib/mcp/provider.ts";
import { OPERATIONS } from "../../../lib/providers/fred/operations.ts";
import { PROVIDERS } from "../../../lib/providers/registry.ts";
import { errorOf, ok, providerTools, texts } from "../../harness/results.ts";
import { schemaProblems } from "../../../tools/schema_rules.ts";

// parseConfig() reads config text with the YAML parser, which loads on demand.
await loadYaml();
import { measureTools } from "../../../tools/tool_budget.ts";
import { startInProcess } from "../../harness/in_process.ts";
import { openProvider, providerConfig } from "../../harness/provider.ts";
import { GNPCA_OBS, startFakeFred, syntheticObservations, TEST_KEY } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";

const TOOLSETS: Record<string, string[]> = {
  "fred-data": ["fred_category", "fred_release", "fred_series", "fred_source", "fred_tag", "fred_maps"],
  "fred-jobs": ["fred_job_status", "fred_job_list", "fred_job_cancel"],
  "fred-projects": ["fred_project_list", "fred_project_create", "fred_project_files"],
};

async function fredProvider(
  env: Record<string, string>,
  fileText?: string,
): Promise<{ provider: Provider; close(): Promise<void> }> {
  const config = parseConfig(
    { flags: { providers: "fred" }, env, ...(fileText ? { fileText } : {}) },
    PROVIDERS,
  );
  const app = await createApp(config, PROVIDERS, {
    logger: new Logger({ write: () => {} }),
    dataDir: Deno.makeTempDirSync({ prefix: "fred-context-" }),
  });
  return { provider: app.providers.find((p) => p.id === "fred")!, close: () => app.close() };
}

Deno.test("fred tools stay within their token budget, keep the strict-client schema rules and name their toolsets", async () => {
  const { app, costs } = await measureTools({ providers: ["fred"] });
  try {
    const tokens = costs.reduce((n, c) => n + c.tokens, 0);
    const chars = costs.reduce((n, c) => n + c.chars, 0);
    assert.ok(tokens <= 4200, `FRED's tools take ${tokens} tokens (budget 4,200)`);
    // 26,000 plus the six data tools' `"execution":{"taskSupport":"optional"}` (docs/MCP.md, "Tasks").
    assert.ok(chars <= 26_250, `FRED's tools take ${chars} characters (budget 26,250)`);
    for (const c of costs) {
      assert.deepEqual(schemaProblems(c.tool.inputSchema as Record<string, unknown>), [], c.name);
      const out = JSON.stringify(c.tool.outputSchema ?? {});
      assert.ok(!out.includes('"description"'), `${c.name}: no descriptions in the output schema`);
      assert.ok(!out.includes("9007199254740991"), `${c.name}: no ±2^53 bounds in the output schema`);
    }
    const fred = app.providers.find((p) => p.id === "fred")!;
    assert.deepEqual(fred.toolsets?.map((t) => t.id), Object.keys(TOOLSETS));
    for (const t of fred.toolsets ?? []) assert.ok(t.description.length > 10, t.id);
    for (const [toolset, names] of Object.entries(TOOLSETS)) {
      assert.deepEqual(fred.tools.filter((t) => t.toolset === toolset).map((t) => t.name), names, toolset);
    }
    // Each operation's line names every parameter it takes, except those a note says once.
    for (const [tool, ops] of Object.entries(OPERATIONS)) {
      const description = fred.tools.find((t) => t.name === tool)!.description;
      const lines = description.split("\n");
      for (const op of ops) {
        const line = lines.find((l) => new RegExp(`(^|, )${op.operation}[ ,:(]|^${op.operation}$`).test(l));
        assert.ok(line, `${tool} describes ${op.operation}`);
        for (const p of [...op.required, ...op.optional]) {
          const named = (text: string) =>
            text.includes(p) || (p.endsWith("_end") && text.includes(`${p.replace(/_end$/, "_start")}/end`));
          assert.ok(
            named(line!) || lines.some((l) => /\btakes? /.test(l) && named(l)),
            `${tool} ${op.operation} names ${p}`,
          );
        }
      }
    }
  } finally {
    await app.close();
  }
});

Deno.test("fred without a key lists its data and job tools as unavailable, with the fix, and offers no search", async () => {
  const keyless = await fredProvider({});
  try {
    const p = keyless.provider;
    assert.deepEqual(p.tools.map((t) => t.name), TOOLSETS["fred-projects"]);
    assert.equal(p.search, undefined);
    assert.deepEqual(
      p.unavailable?.map((u) => [u.toolset, u.tools]),
      [["fred-data", TOOLSETS["fred-data"]], ["fred-jobs", TOOLSETS["fred-jobs"]]],
    );
    for (const u of p.unavailable ?? []) {
      assert.match(u.reason, /FRED_API_KEY/);
      assert.match(u.reason, /https:\/\/fredaccount\.stlouisfed\.org\/apikeys/);
    }
  } finally {
    await keyless.close();
  }
  const keyed = await fredProvider({ FRED_API_KEY: TEST_KEY });
  try {
    assert.equal(keyed.provider.tools.length, 12);
    assert.equal(keyed.provider.unavailable, undefined);
    assert.ok(keyed.provider.search);
  } finally {
    await keyed.close();
  }
});

Deno.test("fred without a key, end to end: the start-up log, opendata_search, opendata_describe and opendata_call say how to enable it", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example,fred"],
    env: { OPENDATA_MCP_TOOLSETS: "all" },
  });
  const { tools } = await s.client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes("fred_project_list"), "the keyless project tools are served");
  assert.ok(!names.includes("fred_series") && !names.includes("fred_job_status"), names.join(", "));

  // The log line is written before the first answer; poll briefly for the stream to deliver it.
  for (let i = 0; i < 50 && !/Not served: fred_category/.test(s.stderr()); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(
    s.stderr(),
    /Not served: fred_category, .*\(toolset fred-data\): FRED needs an API key: set FRED_API_KEY/,
  );
  assert.match(s.stderr(), /Not served: fred_job_status, .*\(toolset fred-jobs\)/);

  // Searching everything prints no banner for the keyless source; its description says what enables it.
  const search = tools.find((t) => t.name === "opendata_search")!;
  assert.match(search.description ?? "", /Not enabled: fred \(FRED needs an API key\)/);
  const found = await s.client.callTool({ name: "opendata_search", arguments: { query: "gdp" } });
  ok(found);
  assert.ok(!(ok(found)["sources"] as { id: string }[]).some((x) => x.id === "fred"));
  assert.doesNotMatch(texts(found)[0]!, /fred/i);
  // Asked for by name, it says what enables it instead of "Unknown source".
  const asked = errorOf(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "gdp", sources: ["fred"] } }),
  );
  assert.equal(asked["error_type"], "CONFIGURATION_ERROR");
  assert.match(String(asked["hint"]), /set FRED_API_KEY .*https:\/\/fredaccount\.stlouisfed\.org\/apikeys/);
  const mixed = ok(
    await s.client.callTool({
      name: "opendata_search",
      arguments: { query: "gdp", sources: ["example", "fred-data"] },
    }),
  );
  const fred = (mixed["sources"] as { id: string; status: string; error?: string }[]).find((x) =>
    x.id === "fred"
  );
  assert.equal(fred?.status, "unavailable");
  assert.match(fred!.error!, /set FRED_API_KEY/);

  const overview = ok(await s.client.callTool({ name: "opendata_describe", arguments: {} }));
  assert.deepEqual((overview["unavailable"] as { toolset: string }[]).map((u) => u.toolset), [
    "fred-data",
    "fred-jobs",
  ]);

  for (
    const [name, args] of [
      ["opendata_call", { tool: "fred_series", arguments: '{"operation": "search", "search_text": "gdp"}' }],
      ["opendata_describe", { tool: "fred_job_status" }],
    ] as const
  ) {
    const e = errorOf(await s.client.callTool({ name, arguments: args }));
    assert.equal(e["error_type"], "CONFIGURATION_ERROR", name);
    assert.equal(e["field"], "tool");
    assert.match(String(e["message"]), /is not served: .*API key: set FRED_API_KEY/);
  }
  await assert.rejects(
    s.client.callTool({ name: "fred_series", arguments: {} }),
    /Tool "fred_series" is not served: FRED needs an API key/,
  );
  // A name that exists nowhere is still NOT_FOUND.
  const nope = errorOf(await s.client.callTool({ name: "opendata_call", arguments: { tool: "fred_nope" } }));
  assert.equal(nope["error_type"], "NOT_FOUND");
});

Deno.test("fred answers end to end: search hits that work as given, lossless cuts, whole files, decode errors never cached", async (t) => {
  await using fake = startFakeFred();
  const setup = fred({
    fake,
    // The cache is on here (the preset turns it off), so "not cached" can be seen.
    settings: { cache_ttl: 300, page_size: 1000 },
    env: { MCP_CHARACTER_LIMIT: "2000" },
  });
  const configYaml = providerConfig(setup, fake.origin);
  await using s = await openProvider(setup);
  const { tools } = await s.client.listTools();
  const call = (name: string, args: Record<string, unknown>) => s.client.callTool({ name, arguments: args });

  await t.step("tools/list serves input schemas strict clients take as they are", () => {
    assert.equal(providerTools(tools).length, 12);
    for (const tool of tools) {
      assert.deepEqual(schemaProblems(tool.inputSchema as Record<string, unknown>), [], tool.name);
    }
    const series = tools.find((x) => x.name === "fred_series")!;
    const props = series.inputSchema.properties as Record<string, { type?: string }>;
    assert.equal(props["vintage_dates"]!.type, "array");
    assert.equal(props["tag_names"]!.type, "array");
    assert.equal(props["fresh"]!.type, "boolean", "fresh is served once, by the tool itself");
  });

  await t.step("the search source finds series whose next call fetches the observations", async () => {
    const inProcess = await fredProvider({}, configYaml);
    let hits;
    try {
      const context = {
        signal: new AbortController().signal,
        logger: new Logger({ write: () => {} }),
      } as unknown as ToolCallContext;
      hits = await inProcess.provider.search!.search("gross national product", { limit: 3 }, context);
    } finally {
      await inProcess.close();
    }
    assert.equal(hits.length, 1, "the fake's search answers one series");
    const hit = hits[0]!;
    assert.equal(hit.title, "Real Gross National Product (GNPCA)");
    assert.equal(hit.url, "https://fred.stlouisfed.org/series/GNPCA");
    assert.match(hit.snippet ?? "", /Annual/);
    assert.match(hit.date ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    assert.deepEqual(hit.next, {
      tool: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", sort_order: "desc", limit: 5 },
      for: "latest values",
    });
    const sent = fake.requestsTo("/fred/series/search").at(-1)!.url.searchParams;
    assert.equal(sent.get("search_text"), "gross national product");
    assert.equal(sent.get("limit"), "3");
    assert.equal(sent.get("api_key"), TEST_KEY);
    const latest = ok(await call(hit.next.tool, hit.next.arguments));
    assert.equal(latest["status"], "success");
    const rows = latest["items"] as { date: string }[];
    assert.equal(rows.length, 5, "the latest five values, inline");
    assert.equal(rows[0]!.date, "2012-01-01", "newest first");
    const history = hit.also![0]!;
    const data = ok(await call(history.tool, history.arguments));
    assert.equal(data["status"], "success");
    // The whole history goes to a file.
    assert.equal(data["rows_written"], 84);
  });

  await t.step("a cut result is continued with next_offset to the last row, nothing lost", async () => {
    const all = (GNPCA_OBS["observations"] as { date: string }[]).map((o) => o.date);
    const seen: string[] = [];
    let offset = 0;
    for (let calls = 0; calls < 40; calls++) {
      const res = await call("fred_series", {
        operation: "get_observations",
        series_id: "GNPCA",
        output: "screen",
        offset,
      });
      const r = ok(res);
      assert.ok(texts(res)[0]!.length <= 2000);
      seen.push(...(r["items"] as { date: string }[]).map((i) => i.date));
      if (r["has_more"] !== true) break;
      assert.equal(r["next_offset"], offset + (r["items"] as unknown[]).length);
      offset = r["next_offset"] as number;
    }
    assert.ok(offset > 0, "the first answer was cut");
    assert.deepEqual(seen, all);
  });

  await t.step("output file writes the whole result of every data tool, readable as a resource", async () => {
    const cases: [string, Record<string, unknown>, number][] = [
      ["fred_category", { operation: "get_series", category_id: 125 }, 1],
      ["fred_release", { operation: "get_series", release_id: 53 }, 1],
      ["fred_series", { operation: "get_observations", series_id: "GNPCA" }, 84],
      ["fred_source", { operation: "list" }, 1],
      ["fred_tag", { operation: "get_series", tag_names: ["gnp"] }, 1],
      ["fred_maps", { operation: "get_series_data", series_id: "WIPCPI" }, 51],
    ];
    for (const [tool, args, rows] of cases) {
      const r = await call(tool, { ...args, output: "file" });
      const body = ok(r);
      assert.equal(body["output_mode"], "file", tool);
      assert.equal(body["rows_written"], rows, tool);
      const file = Deno.readTextFileSync(String(body["file_path"]));
      assert.equal(file.trimEnd().split("\r\n").length, rows + 1, `${tool}: a header and every row`);
      const uri = String(body["resource_uri"]);
      assert.ok(
        (r.content as { type: string; uri?: string }[]).some((c) =>
          c.type === "resource_link" && c.uri === uri
        ),
      );
      const read = await s.client.readResource({ uri });
      assert.equal((read.contents[0] as { text?: string }).text, file, `${tool}: the resource is the file`);
    }
  });

  await t.step(
    "an answer without the operation's list is a DECODE_ERROR for every data tool, and not cached",
    async () => {
      const cases: [string, string, Record<string, unknown>, string, unknown][] = [
        ["fred_category", "/fred/category", { operation: "get", category_id: 901 }, "category_id", {
          seriess: [],
        }],
        ["fred_release", "/fred/release", { operation: "get", release_id: 901 }, "release_id", {
          releases: null,
        }],
        ["fred_release", "/fred/release/tables", { operation: "get_tables", release_id: 901 }, "release_id", {
          name: "Gross Domestic Product",
          element_id: 12886,
        }],
        [
          "fred_series",
          "/fred/series/observations",
          { operation: "get_observations", series_id: "NOLIST1" },
          "series_id",
          { seriess: "nope" },
        ],
        [
          "fred_series",
          "/fred/series/search",
          { operation: "search", search_text: "nolist" },
          "search_text",
          {
            observations: null,
          },
        ],
        [
          "fred_series",
          "/fred/series/search",
          { operation: "search", search_text: "nullitems" },
          "search_text",
          { count: 2, seriess: [null, 5] },
        ],
        ["fred_source", "/fred/sources", { operation: "list", order_by: "name" }, "order_by", { count: 0 }],
        ["fred_tag", "/fred/tags", { operation: "list", search_text: "nolist" }, "search_text", { tags: {} }],
        [
          "fred_maps",
          "/geofred/series/group",
          { operation: "get_series_group", series_id: "NOLIST2" },
          "series_id",
          { series_group: "nope" },
        ],
        [
          "fred_maps",
          "/geofred/regional/data",
          {
            operation: "get_regional_data",
            series_group: "901",
            region_type: "state",
            date: "2013-01-01",
            season: "NSA",
            units: "Dollars",
          },
          "series_group",
          { meta: { title: "Per Capita Personal Income" } },
        ],
        [
          "fred_maps",
          "/geofred/series/data",
          { operation: "get_series_data", series_id: "NOLIST3" },
          "series_id",
          {
            meta: { title: "x", data: { "2013-01-01": "nope" } },
          },
        ],
      ];
      for (const [tool, path, args, key, bad] of cases) {
        const value = String(args[key]);
        const mine = () => fake.requestsTo(path).filter((r) => r.url.searchParams.get(key) === value).length;
        // Bad once, then FRED's real answer for this path (the routes given at start).
        fake.route({
          path,
          match: (r) => r.url.searchParams.get(key) === value && mine() === 1,
          reply: { json: bad },
        });
        const label = `${tool} ${args["operation"]}`;
        const e = errorOf(await call(tool, { ...args, output: "screen" }));
        assert.equal(e["error_type"], "DECODE_ERROR", label);
        assert.match(String(e["message"]), /expected shape/, label);
        ok(await call(tool, { ...args, output: "screen" }));
        assert.equal(mine(), 2, `${label}: the bad answer was not cached`);
        ok(await call(tool, { ...args, output: "screen" }));
        assert.equal(mine(), 2, `${label}: the good answer was cached`);
      }
    },
  );

  await t.step(
    "a later page without the list fails the pull with DECODE_ERROR, leaving no file",
    async () => {
      fake.route({
        path: "/fred/series/observations",
        match: (r) => r.url.searchParams.get("series_id") === "HOLE",
        reply: (r) => {
          const offset = Number(r.url.searchParams.get("offset") ?? 0);
          const limit = Number(r.url.searchParams.get("limit") ?? 1000);
          return { json: offset === 0 ? syntheticObservations(3000, 0, limit) : { count: 3000, offset } };
        },
      });
      const e = errorOf(
        await call("fred_series", { operation: "get_observations", series_id: "HOLE", output: "file" }),
      );
      assert.equal(e["error_type"], "DECODE_ERROR");
      assert.match(String(e["message"]), /"observations"/);
      const files = ok(await call("fred_project_files", { project_name: "default" }))["files"] as {
        name: string;
      }[];
      assert.ok(!files.some((f) => f.name.startsWith("HOLE")), "the partial file was removed");
    },
  );

  await t.step("fresh bypasses the cache for one call", async () => {
    const count = () => fake.requests.filter((r) => r.url.searchParams.get("series_id") === "FRESH1").length;
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === "FRESH1",
      reply: { fixture: "fred/recorded_series_GNPCA.json" },
    });
    ok(await call("fred_series", { operation: "get", series_id: "FRESH1" }));
    ok(await call("fred_series", { operation: "get", series_id: "FRESH1" }));
    assert.equal(count(), 1, "the second call was answered from the cache");
    ok(await call("fred_series", { operation: "get", series_id: "FRESH1", fresh: true }));
    assert.equal(count(), 2, "fresh went to FRED");
  });
});

Deno.test("fred_project_list, fred_project_files and fred_job_list cut to the limit name the offset that lists the rest", async () => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({ fake, env: { MCP_CHARACTER_LIMIT: "2500" } }));
  const call = (name: string, args: Record<string, unknown>) => s.client.callTool({ name, arguments: args });
  /** Follows next_offset from 0 and collects `key` of every item, checking the text names each offset. */
  const walkAll = async (name: string, args: Record<string, unknown>, list: string, key: string) => {
    const seen: string[] = [];
    let offset: number | null = 0;
    let calls = 0;
    while (offset !== null && calls++ < 50) {
      const r = await call(name, { ...args, offset });
      const page = ok(r);
      const items = page[list] as Record<string, unknown>[];
      assert.ok(items.length > 0, `${name} at offset ${offset} shows something`);
      seen.push(...items.map((i) => String(i[key])));
      const next = page["next_offset"] as number | null;
      if (next !== null) {
        assert.match(texts(r)[0]!, new RegExp(`offset=${next}\\b`), `${name} names offset ${next}`);
      }
      offset = next;
    }
    return { seen, calls };
  };

  const names = Array.from({ length: 24 }, (_, i) => `study-${String(i).padStart(2, "0")}`);
  for (const project_name of names) ok(await call("fred_project_create", { project_name }));
  const projects = await walkAll("fred_project_list", {}, "projects", "name");
  assert.ok(projects.calls > 1, "2,500 characters do not hold 24 projects");
  assert.deepEqual([...projects.seen].sort(), names, "every project once");

  const dir = String(ok(await call("fred_project_create", { project_name: "files" }))["project_path"]);
  const files = Array.from({ length: 30 }, (_, i) => `series/s${String(i).padStart(2, "0")}.csv`);
  for (const f of files) Deno.writeTextFileSync(`${dir}/${f}`, "date,value\n2020-01-01,1\n");
  const cut = await walkAll(
    "fred_project_files",
    { project_name: "files", sort_by: "name" },
    "files",
    "path",
  );
  assert.ok(cut.calls > 1);
  assert.deepEqual(cut.seen, files, "in order, every file once");
  const small = await call("fred_project_files", {
    project_name: "files",
    sort_by: "name",
    limit: 2,
    offset: 28,
  });
  assert.deepEqual((ok(small)["files"] as { path: string }[]).map((f) => f.path), files.slice(28));
  assert.equal(ok(small)["next_offset"], null);

  const jobIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const accepted = ok(await call("fred_maps", { operation: "get_shapes", shape: "state", format: "json" }));
    jobIds.push(String(accepted["job_id"]));
  }
  for (const job_id of jobIds) ok(await call("fred_job_status", { job_id, wait_seconds: 30 }));
  const jobs = await walkAll("fred_job_list", {}, "jobs", "job_id");
  assert.ok(jobs.calls > 1, "2,500 characters do not hold three finished jobs");
  assert.deepEqual([...jobs.seen].sort(), [...jobIds].sort());
  const byLimit = await walkAll("fred_job_list", { limit: 1 }, "jobs", "job_id");
  assert.equal(byLimit.calls, 3, "one job per page with limit 1, each naming the next offset");
  assert.deepEqual(byLimit.seen, jobs.seen, "the same jobs in the same order");

  const bad = errorOf(await call("fred_job_list", { offset: -1 }));
  assert.equal(bad["error_type"], "VALIDATION_ERROR");
  assert.equal(bad["field"], "offset");
});
