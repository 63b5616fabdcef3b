import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import type { McpExtra } from "../../lib/mcp/provider.ts";
import { ResultExports } from "../../lib/output/exports.ts";

Deno.test("ResultExports writes rows and documents uncut, per caller, and serves them as resources", async () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-exports-" });
  try {
    const exports = new ResultExports({ dataDir, clock: new FakeClock() });
    const alice = exports.forCaller("worldbank", "session:a");
    const pages = async function* () {
      yield [{ id: "1", title: "Roads" }];
      yield [{ id: "2", title: "Ports", extra: "x" }];
    };
    const csv = await alice.save({ name: "docs", format: "csv", rows: pages(), description: "2 documents" });
    assert.equal(csv.rows, 2);
    assert.equal(csv.uri, "opendata://files/worldbank/files/docs.csv");
    assert.equal(Deno.readTextFileSync(csv.path), "id,title,extra\r\n1,Roads,\r\n2,Ports,x\r\n");
    assert.equal(csv.link.type, "resource_link");

    const json = await alice.save({
      name: "docs",
      format: "json",
      rows: [[{ id: "1" }]],
      head: { source: "https://example.org" },
      description: "1 document",
    });
    const written = JSON.parse(Deno.readTextFileSync(json.path));
    assert.equal(written.source, "https://example.org");
    assert.deepEqual(written.items, [{ id: "1" }]);
    assert.equal(written.rows_written, 1);

    const md = await alice.save({
      name: "article",
      format: "md",
      text: "# Oslo\n\nWhole.",
      description: "text",
    });
    assert.equal(md.rows, null);
    assert.equal(Deno.readTextFileSync(md.path), "# Oslo\n\nWhole.");

    const again = await alice.save({
      name: "docs",
      format: "csv",
      rows: [[{ id: "3" }]],
      description: "more",
    });
    assert.equal(again.name, "docs_1.csv", "a taken name is never overwritten");

    const template = exports.resourceTemplate();
    const asAlice = { owner: "session:a" } as McpExtra;
    const asBob = { owner: "session:b" } as McpExtra;
    const listed = await template.list!(asAlice);
    assert.deepEqual(listed.map((r) => r.uri).sort(), [csv.uri, again.uri, json.uri, md.uri].sort());
    assert.deepEqual(await template.list!(asBob), [], "another caller sees none of them");
    const read = await template.read(
      new URL(md.uri),
      { project: "worldbank", path: "files/article.md" },
      asAlice,
    );
    assert.equal((read as { contents: { text: string }[] }).contents[0]!.text, "# Oslo\n\nWhole.");
    await assert.rejects(
      () => template.read(new URL(md.uri), { project: "worldbank", path: "files/article.md" }, asBob),
      (e: Error & { code?: number }) => e.code === -32602,
    );
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});

Deno.test("ResultExports refuses a name that leaves its folder and keeps nothing half-written", async () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-exports-" });
  try {
    const files = new ResultExports({ dataDir, clock: new FakeClock() }).forCaller("snl", undefined);
    await assert.rejects(
      () => files.save({ name: "../escape", format: "md", text: "x", description: "x" }),
      (e: Error & { errorType?: string }) =>
        e.errorType === "PATH_SECURITY_ERROR" || e.errorType === "VALIDATION_ERROR",
    );
    const failing = async function* () {
      yield [{ a: 1 }];
      throw new Error("the upstream broke off");
    };
    await assert.rejects(() =>
      files.save({ name: "partial", format: "csv", rows: failing(), description: "x" })
    );
    const left = [...Deno.readDirSync(`${dataDir}/exports/snl/files`)].map((e) => e.name);
    assert.deepEqual(left, [], "no file or temporary file is left behind");
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});

Deno.test("ResultExports refuses a file past OPENDATA_MCP_EXPORT_MAX_MB with STORAGE_LIMIT and keeps none of it", async () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-exports-" });
  try {
    const files = new ResultExports({ dataDir, clock: new FakeClock(), maxMb: 0.05 }).forCaller(
      "wikipedia",
      undefined,
    );
    await assert.rejects(
      () => files.save({ name: "big", format: "md", text: "x".repeat(100_000), description: "too big" }),
      (e: Error & { errorType?: string; hint?: string }) =>
        e.errorType === "STORAGE_LIMIT" && /OPENDATA_MCP_EXPORT_MAX_MB/.test(`${e.message} ${e.hint}`),
    );
    assert.deepEqual([...Deno.readDirSync(`${dataDir}/exports/wikipedia/files`)], []);
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});
