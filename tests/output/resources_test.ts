import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import type { McpExtra } from "../../lib/mcp/provider.ts";
import { fileResourceTemplate, resourceLink } from "../../lib/output/resources.ts";
import { ProjectStorage } from "../../lib/output/storage.ts";

const extra = {} as McpExtra;

async function setup(maxBytes = 1_000_000) {
  const root = Deno.makeTempDirSync();
  const storage = new ProjectStorage({
    root,
    subdirs: ["series"],
    clock: new FakeClock(),
    uriPrefix: "test://files/",
    settingName: "TEST_STORAGE_DIR",
  });
  const file = await storage.reserve("p", "series", "gdp", "csv");
  Deno.writeTextFileSync(file.path, "date,value\r\n2020-01-01,1\r\n");
  await storage.recordFile("p", file.relativePath, {
    rows: 1,
    format: "csv",
    created: "2025-10-08T00:00:00Z",
  });
  storage.release(file);
  const template = fileResourceTemplate(storage, { name: "t", title: "T", description: "d", maxBytes });
  return { root, storage, template };
}

Deno.test("fileResourceTemplate() lists stored files and reads them back", async () => {
  const { template } = await setup();
  assert.equal(template.uriTemplate, "test://files/{project}/{+path}");
  const listed = await template.list!(extra);
  assert.deepEqual(listed.map((r) => [r.uri, r.mimeType]), [["test://files/p/series/gdp.csv", "text/csv"]]);
  assert.match(listed[0]!.description ?? "", /1 rows/);
  const read = await template.read(new URL("test://files/p/series/gdp.csv"), {
    project: "p",
    path: "series/gdp.csv",
  }, extra);
  assert.deepEqual(read.contents, [{
    uri: "test://files/p/series/gdp.csv",
    mimeType: "text/csv",
    text: "date,value\r\n2020-01-01,1\r\n",
  }]);
  assert.deepEqual(await template.complete!["project"]!("p"), ["p"]);
});

Deno.test("fileResourceTemplate() refuses traversal, hidden files and oversized files", async () => {
  const { template, root } = await setup();
  Deno.writeTextFileSync(`${root}/secret.txt`, "secret");
  const read = (project: string, path: string) =>
    template.read(new URL(`test://files/${project}/${path}`), { project, path }, extra);
  for (
    const [project, path] of [
      ["p", "..%2Fsecret.txt"],
      ["p", "series%2F..%2F..%2Fsecret.txt"],
      ["..", "secret.txt"],
      ["%2e%2e", "secret.txt"],
      ["p", ".project.json"],
      ["p", "%ZZ"],
    ]
  ) {
    await assert.rejects(
      () => read(project!, path!),
      (e: Error & { code?: number }) => e.code === -32602,
      `${project}/${path}`,
    );
  }
  await assert.rejects(() => read("p", "series/none.csv"), /no file "series\/none.csv"/);
  const small = (await setup(10)).template;
  await assert.rejects(
    () =>
      small.read(new URL("test://files/p/series/gdp.csv"), { project: "p", path: "series/gdp.csv" }, extra),
    /more than the 0 MB served over MCP/,
  );
});

Deno.test("resourceLink() is a resource_link block with size and MIME type", () => {
  assert.deepEqual(
    resourceLink({
      uri: "test://files/p/a.json",
      name: "a.json",
      format: "json",
      bytes: 12,
      description: "d",
    }),
    {
      type: "resource_link",
      uri: "test://files/p/a.json",
      name: "a.json",
      mimeType: "application/json",
      description: "d",
      size: 12,
    },
  );
});
