import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { ToolError } from "../../lib/errors.ts";
import type { McpExtra } from "../../lib/mcp/provider.ts";
import { ResultExports } from "../../lib/output/exports.ts";
import { QuotaLedger, UNLIMITED } from "../../lib/output/quota.ts";

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

Deno.test("ResultExports holds the byte quota per client, its sessions together; another client still writes", async () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-exports-" });
  try {
    // 0.1 MiB: the project folders and a few files of 20 KB, then the share is full.
    const quota = new QuotaLedger({
      writes: "on",
      limits: { ...UNLIMITED, bytes: Math.round(0.1 * 1_048_576) },
    });
    const exports = new ResultExports({ dataDir, clock: new FakeClock(), quota });
    const text = "x".repeat(20_000);
    const hog = [
      exports.forCaller("worldbank", "session:h1", "ip:203.0.113.9"),
      exports.forCaller("worldbank", "session:h2", "ip:203.0.113.9"),
    ];
    let refused: unknown;
    for (let i = 0; i < 20 && refused === undefined; i++) {
      try {
        await hog[i % 2]!.save({ name: `f${i}`, format: "md", text, description: "filler" });
      } catch (e) {
        refused = e;
      }
    }
    assert.ok(refused instanceof ToolError, "the client's share ends");
    const payload = refused.toPayload() as unknown as Record<string, unknown>;
    assert.equal(payload["error_type"], "QUOTA_EXCEEDED");
    assert.match(String(payload["message"]), /^Your quota on this server is full: your client's files take/);
    assert.match(String(payload["hint"]), /MCP_QUOTA_MB/);
    const other = exports.forCaller("worldbank", "session:v", "ip:198.51.100.1");
    const kept = await other.save({ name: "mine", format: "md", text, description: "the victim's" });
    assert.equal(Deno.readTextFileSync(kept.path).length, 20_000, "another client still writes");
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});
