// Output modes, project files, resources and path checks, end to end over stdio.
import assert from "node:assert/strict";
import { removeHome, scratchHome } from "../../harness/spawn.ts";
import type { StdioSession } from "../../harness/spawn.ts";
import { startInProcess } from "../../harness/in_process.ts";
import { openProvider } from "../../harness/provider.ts";
import { fredConfig, startFakeFred, TEST_KEY } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";
import { errorOf, ok } from "../../harness/results.ts";

type Result = Awaited<ReturnType<StdioSession["client"]["callTool"]>>;
type Block = { type: string; text?: string; uri?: string; mimeType?: string; size?: number; name?: string };

const DATA = ".local/share/opendata-mcp";

function blocks(r: Result): Block[] {
  return r.content as Block[];
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...walk(path));
    else if (entry.isFile) out.push(path);
  }
  return out;
}

Deno.test("fred output modes write project files that are served as resources, inside the storage folder only", async (t) => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({ fake }));
  await s.client.listTools();
  const store = `${s.home}/${DATA}/fred`;
  const outputs: string[] = [];
  const call = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const r = await s.client.callTool({ name, arguments: args });
    outputs.push(JSON.stringify(r));
    return r;
  };

  await t.step("auto answers a small result inline and says why", async () => {
    const r = ok(await call("fred_series", { operation: "get_observations", series_id: "GNPCA" }));
    assert.equal(r["output_mode"], "screen");
    assert.equal((r["items"] as unknown[]).length, 84);
    const decision = r["decision"] as Record<string, unknown>;
    assert.equal(decision["mode"], "screen");
    assert.equal(decision["reason"], "the result fits on screen");
    assert.equal(decision["token_budget"], 35_000);
    assert.ok((decision["estimated_tokens"] as number) > 84, "every row costs tokens");
  });

  await t.step("auto writes a large result to a CSV file with an excerpt and a resource link", async () => {
    const result = await call("fred_series", { operation: "get_observations", series_id: "MID" });
    const r = ok(result);
    assert.equal(r["output_mode"], "file");
    assert.equal(r["rows_written"], 3000);
    assert.equal(r["format"], "csv");
    assert.equal(r["project"], "default");
    assert.match(String((r["decision"] as Record<string, unknown>)["reason"]), /exceed/);
    assert.equal((r["excerpt"] as unknown[]).length, 10);
    const path = String(r["file_path"]);
    assert.ok(path.startsWith(`${store}/default/series/MID_observations_`), path);
    const csv = Deno.readTextFileSync(path);
    const lines = csv.split("\r\n");
    assert.equal(lines[0], "date,value,realtime_start,realtime_end");
    assert.equal(lines.length - 1, 3001);
    assert.equal(lines[1], "1900-01-01,,2024-01-02,2024-01-02", "FRED's '.' is an empty cell, not zero");
    assert.equal(lines[2], "1900-01-02,100.143,2024-01-02,2024-01-02");
    const link = blocks(result).find((b) => b.type === "resource_link")!;
    assert.equal(link.uri, r["resource_uri"]);
    assert.equal(link.mimeType, "text/csv");
    assert.equal(link.size, new TextEncoder().encode(csv).length);
    const read = await s.client.readResource({ uri: link.uri! });
    assert.equal((read.contents[0] as { text: string }).text, csv);
    assert.match(blocks(result)[0]!.text!, /Wrote 3,000 rows/);
    assert.match(blocks(result)[0]!.text!, /\| 1900-01-01 \| missing \|/);
  });

  await t.step(
    "output file writes JSON keeping FRED's structure, the source without the key, and the request",
    async () => {
      const r = ok(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          format: "json",
        }),
      );
      const file = JSON.parse(Deno.readTextFileSync(String(r["file_path"])));
      assert.equal(file.observations.length, 84);
      assert.equal(file.rows_written, 84);
      assert.equal(file.units, "lin");
      assert.equal(file.request.series_id, "GNPCA");
      assert.match(file.source.url, /series\/observations\?series_id=GNPCA&file_type=json$/);
      assert.deepEqual(file.observations[0], {
        realtime_start: "2013-08-14",
        realtime_end: "2013-08-14",
        date: "1929-01-01",
        value: 1065.9,
      });
      const read = await s.client.readResource({ uri: String(r["resource_uri"]) });
      assert.equal((read.contents[0] as { mimeType: string }).mimeType, "application/json");
    },
  );

  await t.step(
    "observations by vintage date are written with one column per vintage, '.' and absent cells empty",
    async () => {
      const r = ok(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output_type: 3,
          output: "file",
        }),
      );
      assert.equal(r["rows_written"], 84);
      const lines = Deno.readTextFileSync(String(r["file_path"])).split("\r\n");
      assert.equal(lines[0], "date,GNPCA_20200704,GNPCA_20210325,GNPCA_20240101");
      assert.equal(lines[1], "1929-01-01,,,", "'.' in one vintage, no revision in the others");
      assert.equal(lines[2], "1930-01-01,975.5,975.5,");
      assert.equal(lines[3], "1931-01-01,912.1,,");
      assert.equal(lines[84], "2012-01-01,15693.1,15693.1,15693.1");
    },
  );

  await t.step("lists, tables and maps go to files in their project folders", async () => {
    const search = ok(
      await call("fred_series", { operation: "search", search_text: "gnp", output: "file", format: "json" }),
    );
    assert.equal(JSON.parse(Deno.readTextFileSync(String(search["file_path"]))).seriess[0].id, "GNPCA");
    assert.match(String(search["relative_path"]), /^series\/gnp_search_/, "the search text names the file");
    assert.equal(
      fake.requestsTo("/fred/series/search").at(-1)!.url.searchParams.get("limit"),
      "1000",
      "file output asks for FRED's maximum",
    );
    const tables = ok(
      await call("fred_release", { operation: "get_tables", release_id: 53, output: "file" }),
    );
    assert.match(String(tables["relative_path"]), /^releases\/release_53_tables_/);
    assert.match(
      Deno.readTextFileSync(String(tables["file_path"])),
      /^element_id,release_id,series_id,parent_id,line,type,name,level,children\r\n12887,53,DGDSRL1A225NBEA,12886,3,series,Goods,1,"\[12888,12889\]"/,
    );
    const maps = ok(
      await call("fred_maps", {
        operation: "get_regional_data",
        series_group: "882",
        region_type: "state",
        date: "2013-01-01",
        season: "NSA",
        units: "Dollars",
        output: "file",
      }),
    );
    assert.match(String(maps["relative_path"]), /^maps\/group_882_state_regional_data_/);
    const csv = Deno.readTextFileSync(String(maps["file_path"])).split("\r\n");
    assert.equal(csv[0], "date,region,code,value,series_id");
    assert.equal(csv[1], "2013-01-01,Arizona,04,36877,AZPCPI");
    assert.equal(csv.length - 2, 51);
  });

  await t.step("a file holding part of what FRED has says so and where to go on", async () => {
    const dates = await call("fred_series", {
      operation: "get_vintage_dates",
      series_id: "GNPCA",
      limit: 2,
      output: "file",
    });
    const d = ok(dates);
    assert.equal(d["rows_written"], 2);
    assert.equal(d["total"], 4);
    assert.equal(d["has_more"], true);
    assert.equal(d["next_offset"], 2);
    assert.match(blocks(dates)[0]!.text!, /FRED holds 4 in all; this file has items 1-2\. .*offset=2/);
    const obs = ok(
      await call("fred_series", {
        operation: "get_observations",
        series_id: "GNPCA",
        offset: 80,
        output: "file",
      }),
    );
    assert.equal(obs["rows_written"], 4);
    assert.equal(obs["has_more"], undefined, "the file reaches the end");
  });

  await t.step("a caller's file name is used, and never overwrites an existing file", async () => {
    const a = ok(
      await call("fred_series", { operation: "get", series_id: "GNPCA", output: "file", filename: "gnp" }),
    );
    const b = ok(
      await call("fred_series", {
        operation: "get",
        series_id: "GNPCA",
        output: "file",
        filename: "gnp.csv",
      }),
    );
    assert.equal(a["relative_path"], "series/gnp.csv");
    assert.equal(b["relative_path"], "series/gnp_1.csv");
    assert.ok(Deno.statSync(String(a["file_path"])).isFile);
  });

  await t.step("path traversal in project or filename is refused before FRED is asked", async () => {
    const before = fake.requests.length;
    for (
      const [args, field] of [
        [{ project: "../evil" }, "project"],
        [{ project: "/tmp/evil" }, "project"],
        [{ project: "CON" }, "project"],
        [{ filename: "../../../../evil" }, "filename"],
        [{ filename: "sub/evil" }, "filename"],
        [{ filename: "..\\evil" }, "filename"],
        [{ filename: ".hidden" }, "filename"],
        [{ filename: "nul.csv" }, "filename"],
        [{ filename: "evil.sh" }, "filename"],
        [{ filename: "evil\u0000.csv" }, "filename"],
      ] as const
    ) {
      const e = errorOf(
        await call("fred_series", { operation: "get", series_id: "GNPCA", output: "file", ...args }),
      );
      assert.equal(e["error_type"], "PATH_SECURITY_ERROR", JSON.stringify(args));
      assert.equal(e["field"], field);
    }
    assert.equal(fake.requests.length, before);
    const files = walk(s.home);
    assert.ok(!files.some((f) => f.includes("evil")), "nothing named evil was created anywhere");
  });

  await t.step(
    "resources/list shows the files and resources/read refuses paths outside the project",
    async () => {
      const { resources } = await s.client.listResources();
      assert.ok(
        resources.some((r) => r.uri === "fred://files/default/series/gnp.csv" && r.mimeType === "text/csv"),
      );
      const { resourceTemplates } = await s.client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), [
        "fred://files/{project}/{+path}",
        "opendata://citation/{provider}/{id}",
        "opendata://files/{project}/{+path}",
      ]);
      for (
        const uri of [
          "fred://files/default/..%2F..%2F..%2F..%2F.config%2Fopendata-mcp%2Fconfig.yaml",
          "fred://files/default/series%2F..%2F..%2F..%2F..%2F.config%2Fopendata-mcp%2Fconfig.yaml",
          "fred://files/%2E%2E/fred/default/series/gnp.csv",
          "fred://files/default/.project.json",
          "fred://files/default/../../../../.config/opendata-mcp/config.yaml",
          "fred://files/default/series/nothing.csv",
        ]
      ) {
        await assert.rejects(() => s.client.readResource({ uri }), (e: Error) => {
          outputs.push(e.message);
          return true;
        }, uri);
      }
    },
  );

  await t.step("projects are created, listed and their files listed, sorted and filtered", async () => {
    const created = ok(
      await call("fred_project_create", { project_name: "inflation-study", description: "CPI work" }),
    );
    assert.equal(created["created"], true);
    assert.deepEqual(created["subdirectories_created"], [
      "series",
      "maps",
      "releases",
      "categories",
      "sources",
      "tags",
    ]);
    assert.equal(created["message"], "Project 'inflation-study' created successfully");
    const meta = JSON.parse(Deno.readTextFileSync(`${store}/inflation-study/.project.json`));
    assert.equal(meta.description, "CPI work");
    const again = ok(await call("fred_project_create", { project_name: "inflation-study" }));
    assert.equal(again["created"], false);
    const bad = errorOf(await call("fred_project_create", { project_name: "../escape" }));
    assert.equal(bad["error_type"], "PATH_SECURITY_ERROR");
    assert.equal(bad["field"], "project_name");

    const list = ok(await call("fred_project_list", {}));
    assert.equal(list["storage_dir"], store);
    const projects = list["projects"] as Record<string, unknown>[];
    assert.deepEqual(projects.map((p) => p["name"]), ["default", "inflation-study"]);
    assert.ok((projects[0]!["file_count"] as number) >= 7);
    assert.equal(projects[1]!["description"], "CPI work");

    const files = ok(await call("fred_project_files", { project_name: "default", sort_by: "name" }));
    const names = (files["files"] as Record<string, unknown>[]).map((f) => f["path"] as string);
    assert.deepEqual(names, [...names].sort());
    const gnp = (files["files"] as Record<string, unknown>[]).find((f) => f["path"] === "series/gnp.csv")!;
    assert.equal(gnp["rows"], 1);
    assert.equal(gnp["resource_uri"], "fred://files/default/series/gnp.csv");
    const maps = ok(
      await call("fred_project_files", { project_name: "default", subdirectory: "maps", limit: 1 }),
    );
    assert.equal((maps["files"] as unknown[]).length, 1);
    assert.equal(maps["total_files"], 1);
    const none = errorOf(await call("fred_project_files", { project_name: "nothing-here" }));
    assert.equal(none["error_type"], "NOT_FOUND");
    const md = await call("fred_project_list", { response_format: "markdown" });
    assert.match(blocks(md)[0]!.text!, /\| inflation-study \| 0 \|/);
    const filesMd = await call("fred_project_files", { project_name: "default", limit: 2 });
    assert.match(blocks(filesMd)[0]!.text!, /\| path \| rows \| MB \|/);
    for (
      const [tool, args] of [
        ["fred_project_list", {}],
        ["fred_project_create", { project_name: "inflation-study" }],
        ["fred_project_files", { project_name: "default" }],
      ] as const
    ) {
      const js = await call(tool, { ...args, response_format: "json" });
      assert.deepEqual(JSON.parse(blocks(js)[0]!.text!), js.structuredContent, tool);
    }
  });

  await t.step("no result, file or log line holds the key", async () => {
    await s.close();
    for (const out of [...outputs, s.stderr()]) assert.ok(!out.includes(TEST_KEY));
    const written = walk(store);
    assert.ok(written.length >= 8);
    for (const file of written) assert.ok(!Deno.readTextFileSync(file).includes(TEST_KEY), file);
    assert.ok(fake.requests.every((r) => r.url.searchParams.get("api_key") === TEST_KEY));
  });
});

Deno.test("fred screen output is cut to the character limit with a notice suggesting output file, and auto then writes a file", async () => {
  await using fake = startFakeFred();
  await using s = await openProvider(fred({ fake, env: { MCP_CHARACTER_LIMIT: "2000" } }));
  await s.client.listTools();
  const screen = await s.client.callTool({
    name: "fred_series",
    arguments: { operation: "get_observations", series_id: "GNPCA", output: "screen" },
  });
  const r = ok(screen);
  const text = blocks(screen)[0]!.text!;
  assert.ok(text.length <= 2000, `text is ${text.length} characters`);
  assert.ok(JSON.stringify(r).length <= 2000);
  assert.equal(r["truncated"], true);
  assert.equal(r["has_more"], true);
  assert.equal(r["next_offset"], r["count"]);
  assert.match(text, /Showing \d+ of 84 items to stay within the 1,600-character response limit/);
  assert.match(text, /offset=\d+/);
  assert.match(text, /output: "file"/);

  const auto = ok(
    await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA" },
    }),
  );
  assert.equal(auto["output_mode"], "file");
  assert.match(
    String((auto["decision"] as Record<string, unknown>)["reason"]),
    /1,600-character response limit/,
  );
  assert.equal(auto["rows_written"], 84);
});

Deno.test("fred reads FRED_* variables: token limit, project and format drive auto output", async () => {
  await using fake = startFakeFred();
  await using s = await openProvider(
    fred({
      fake,
      env: { FRED_SAFE_TOKEN_LIMIT: "100", FRED_OUTPUT_FORMAT: "json", FRED_PROJECT_NAME: "env-project" },
    }),
  );
  await s.client.listTools();
  const r = ok(
    await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA" },
    }),
  );
  assert.equal(r["output_mode"], "file");
  assert.match(String((r["decision"] as Record<string, unknown>)["reason"]), /exceed the safe limit of 70$/);
  assert.equal(r["format"], "json");
  assert.equal(r["project"], "env-project");
  assert.ok(String(r["file_path"]).startsWith(`${s.home}/${DATA}/fred/env-project/series/`));
});

Deno.test("fred writes to FRED_STORAGE_DIR, streaming pages with progress notifications", async () => {
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin, { page_size: 20 }));
  await using _cleanup = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const storage = `${home}/${DATA}/custom-store`;
  await using s = await startInProcess({
    args: ["--providers", "fred"],
    home,
    env: { FRED_STORAGE_DIR: storage },
  });
  await s.client.listTools();
  const progress: { progress: number; total?: number | undefined }[] = [];
  const result = await s.client.callTool(
    { name: "fred_series", arguments: { operation: "get_observations", series_id: "GNPCA", output: "file" } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  const r = ok(result);
  assert.equal(r["rows_written"], 84);
  assert.ok(String(r["file_path"]).startsWith(`${storage}/default/series/`));
  const pages = fake.requestsTo("/fred/series/observations").map((
    q,
  ) => [q.url.searchParams.get("offset"), q.url.searchParams.get("limit")]);
  assert.deepEqual(pages, [["0", "20"], ["20", "20"], ["40", "20"], ["60", "20"], ["80", "4"]]);
  assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[20, 84], [40, 84], [60, 84], [80, 84], [
    84,
    84,
  ]]);
  assert.equal(Deno.readTextFileSync(String(r["file_path"])).split("\r\n").length - 1, 85);

  // By vintage date, a vintage that only added the newest observations appears on the last page.
  const vintages = ok(
    await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", output_type: 3, output: "file" },
    }),
  );
  const lines = Deno.readTextFileSync(String(vintages["file_path"])).split("\r\n");
  assert.equal(lines[0], "date,GNPCA_20200704,GNPCA_20210325,GNPCA_20240101", "no column is dropped");
  assert.equal(lines[2], "1930-01-01,975.5,975.5,", "rows of earlier pages are padded");
  assert.equal(lines[84], "2012-01-01,15693.1,15693.1,15693.1");
  assert.equal(lines.length - 1, 85);
});

Deno.test("fred reports a storage folder the process may not write as PERMISSION_ERROR", async () => {
  await using fake = startFakeFred();
  const outside = Deno.makeTempDirSync({ prefix: "fred-outside-" });
  await using s = await openProvider(fred({
    fake,
    env: { FRED_STORAGE_DIR: `${outside}/store` },
    // A refused write is the process's permission: the set lets the server write anywhere, so
    // it is narrowed to the data folder and the storage folder outside it is refused.
    spawn: { allowWrite: ["$HOME/.local/share/opendata-mcp"] },
  }));
  await s.client.listTools();
  const e = errorOf(
    await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get", series_id: "GNPCA", output: "file" },
    }),
  );
  assert.equal(e["error_type"], "PERMISSION_ERROR");
  assert.match(String(e["hint"]), /FRED_STORAGE_DIR/);
  assert.deepEqual([...Deno.readDirSync(outside)], []);
  removeHome(outside);
});
