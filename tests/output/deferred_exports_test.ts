import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import type { McpExtra } from "../../lib/mcp/provider.ts";
import { DeferredExports, EXPORTS_TEMPLATE } from "../../lib/output/deferred_exports.ts";
import type { ExportStore } from "../../lib/output/deferred_exports.ts";
import { ResultExports } from "../../lib/output/exports.ts";
import type { ResultExportsOptions } from "../../lib/output/exports.ts";

/** The template's fixed fields, and which of its members are functions (and where). */
function shape(template: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(template)) {
    out[k] = typeof v === "function"
      ? "function"
      : v && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).map(([kk, vv]) => [kk, typeof vv]))
      : v;
  }
  return out;
}

Deno.test("DeferredExports serves the same resource template as ResultExports before loading it", () => {
  const options = { dataDir: "/nonexistent", clock: new FakeClock() };
  let loads = 0;
  const deferred = new DeferredExports(options, (o) => {
    loads++;
    return Promise.resolve(new ResultExports(o));
  });
  const real = new ResultExports(options).resourceTemplate();
  assert.deepEqual(shape(deferred.resourceTemplate()), shape(real));
  for (const [k, v] of Object.entries(EXPORTS_TEMPLATE)) {
    assert.equal((real as unknown as Record<string, unknown>)[k], v, `${k} as ResultExports gives it`);
  }
  deferred.forCaller("worldbank", undefined);
  assert.equal(loads, 0, "listing the template and handing out ResultFiles loads nothing");
});

Deno.test("DeferredExports loads its store once, on the first write, and then lists, reads and completes through it", async () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-deferred-exports-" });
  try {
    let loads = 0;
    // The default loader (a dynamic import of exports.ts), counted.
    const load = async (o: ResultExportsOptions): Promise<ExportStore> => {
      loads++;
      return new (await import("../../lib/output/exports.ts")).ResultExports(o);
    };
    const exports = new DeferredExports({ dataDir, clock: new FakeClock() }, load);
    const template = exports.resourceTemplate();
    const files = exports.forCaller("worldbank", undefined);
    assert.equal(loads, 0);
    const [csv, md] = await Promise.all([
      files.save({ name: "docs", format: "csv", rows: [[{ id: "1" }]], description: "1 document" }),
      files.save({ name: "note", format: "md", text: "# Oslo", description: "text" }),
    ]);
    assert.equal(loads, 1, "two concurrent first writes load it once");
    assert.equal(csv.uri, "opendata://files/worldbank/files/docs.csv");
    assert.equal(Deno.readTextFileSync(csv.path), "id\r\n1\r\n");

    const overStdio = {} as McpExtra;
    const listed = await template.list!(overStdio);
    assert.deepEqual(listed.map((r) => r.uri).sort(), [csv.uri, md.uri].sort());
    assert.deepEqual(
      await template.list!({ owner: "session:b" } as McpExtra),
      [],
      "another caller sees none",
    );
    const read = await template.read(
      new URL(md.uri),
      { project: "worldbank", path: "files/note.md" },
      overStdio,
    );
    assert.equal((read as { contents: { text: string }[] }).contents[0]!.text, "# Oslo");
    assert.deepEqual(await template.complete!["project"]!("world"), ["worldbank"]);
    assert.deepEqual(
      await template.fileSource!({ project: "worldbank", path: "files/docs.csv" }, overStdio),
      { provider: "worldbank", request: "1 document" },
    );
    assert.equal(loads, 1);
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});

Deno.test("DeferredExports rejects the call whose load failed and tries again on the next", async () => {
  let loads = 0;
  const exports = new DeferredExports({ dataDir: "/nonexistent", clock: new FakeClock() }, (o) => {
    loads++;
    return loads === 1
      ? Promise.reject(new Error("Module not found"))
      : Promise.resolve(new ResultExports(o));
  });
  const template = exports.resourceTemplate();
  await assert.rejects(template.list!({} as McpExtra), /Module not found/);
  assert.deepEqual(await template.list!({} as McpExtra), []);
  assert.equal(loads, 2);
});
