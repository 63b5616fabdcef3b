// Runs docs/DEVELOPMENT.md's "Adding a provider" worked example as it stands: its code blocks are written
// into a copy of the repository, type-checked and linted there, the registry entry is added, the tasks
// the page names are run, and the new tool is called through the MCP SDK's client over stdio
// against a loopback fake of its upstream. That page is the only copy of the example, so it
// cannot drift from what runs here.
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeUpstream } from "../fakes/upstream.ts";
import { errorOf, ok, providerTools, texts } from "../harness/results.ts";
import { removeHome, startStdio } from "../harness/spawn.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** One file of the worked example: its path in the repository and its text. */
interface ExampleFile {
  path: string;
  text: string;
}

/**
 * The code blocks of docs/DEVELOPMENT.md's "Adding a provider" section that a line naming their file
 * (`` `lib/providers/...`: ``) introduces, in order.
 */
export function exampleFiles(readme: string): ExampleFile[] {
  const start = readme.indexOf("\n## Adding a provider\n");
  assert.ok(start >= 0, 'docs/DEVELOPMENT.md has a "## Adding a provider" section');
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^`(lib\/providers\/[^`]+)`[^\n]*\n\n```ts\n([\s\S]*?)^```$/gm)]
    .map((m) => ({ path: m[1]!, text: m[2]! }));
}

/** registry.ts with docs/DEVELOPMENT.md's two lines added: the import after the last spec import, the entry last. */
export function withRegistryEntry(registry: string, lines: string): string {
  const [importLine, entry, ...rest] = lines.trimEnd().split("\n");
  assert.ok(importLine?.startsWith("import ") && entry?.trim().endsWith(",") && rest.length === 0, lines);
  const imports = [...registry.matchAll(/^import \{ \w+Spec \} from "\.\/\w+\/config\.ts";$/gm)];
  const afterImports = imports.at(-1)!.index! + imports.at(-1)![0].length;
  let text = `${registry.slice(0, afterImports)}\n${importLine}${registry.slice(afterImports)}`;
  const list = text.indexOf("export const PROVIDER_SPECS");
  const close = text.indexOf("\n];", list);
  text = `${text.slice(0, close)}\n${entry}${text.slice(close)}`;
  return text;
}

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    if (entry.isDirectory) copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) Deno.copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}

/** Runs a `deno task` of the copy by its command line (no task runner: node_modules is shared). */
function runTask(copy: string, name: string): Promise<void> {
  const task = String(JSON.parse(Deno.readTextFileSync(join(copy, "deno.json"))).tasks[name]);
  assert.match(task, /^deno run /, name);
  return runDeno(copy, ["run", "--node-modules-dir=manual", ...task.replace(/^deno run /, "").split(" ")]);
}

/** Runs deno in the copy; fails the test with its output unless it succeeds. */
async function runDeno(copy: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: copy,
    clearEnv: true,
    env: { HOME: copy, PATH: Deno.env.get("PATH") ?? "", DENO_DIR: denoDir(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.equal(
    out.code,
    0,
    `deno ${args.join(" ")} failed:\n${dec.decode(out.stdout)}\n${dec.decode(out.stderr)}`,
  );
}

function denoDir(): string {
  return Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
}

/** What Nager.Date answers for Norway in 2026 (the fields its PublicHolidayV3 documents), cut to three. */
const NORWAY_2026 = [
  {
    date: "2026-01-01",
    localName: "Første nyttårsdag",
    name: "New Year's Day",
    countryCode: "NO",
    global: true,
  },
  {
    date: "2026-05-17",
    localName: "Grunnlovsdagen",
    name: "Constitution Day",
    countryCode: "NO",
    global: true,
  },
  { date: "2026-12-25", localName: "Første juledag", name: "Christmas Day", countryCode: "NO", global: true },
];

Deno.test("exampleFiles() reads docs/DEVELOPMENT.md's blocks by the path line before each, and nothing else", () => {
  const readme = "# X\n\n## Adding a provider\n\n`lib/providers/a/b.ts`:\n\n```ts\nconst a = 1;\n```\n\n" +
    "```sh\ndeno task schemas\n```\n\n## Next\n\n`lib/providers/c/d.ts`:\n\n```ts\nno\n```\n";
  assert.deepEqual(exampleFiles(readme), [{ path: "lib/providers/a/b.ts", text: "const a = 1;\n" }]);
});

Deno.test("withRegistryEntry() adds the import after the spec imports and the spec at the end of the list", () => {
  const registry = 'import { aSpec } from "./a/config.ts";\nimport x from "./x.json";\n\n' +
    "export const PROVIDER_SPECS = [\n  aSpec,\n];\n";
  assert.equal(
    withRegistryEntry(registry, 'import { bSpec } from "./b/config.ts";\n  bSpec,\n'),
    'import { aSpec } from "./a/config.ts";\nimport { bSpec } from "./b/config.ts";\nimport x from "./x.json";\n\n' +
      "export const PROVIDER_SPECS = [\n  aSpec,\n  bSpec,\n];\n",
  );
});

Deno.test("docs/DEVELOPMENT.md's Adding a provider: one folder and one registry entry serve a new tool through MCP", async () => {
  const blocks = exampleFiles(await Deno.readTextFile(join(ROOT, "docs/DEVELOPMENT.md")));
  const registryBlock = blocks.find((b) => b.path === "lib/providers/registry.ts");
  const files = blocks.filter((b) => b !== registryBlock);
  assert.ok(registryBlock, "the page shows the registry entry");
  assert.deepEqual(
    files.map((f) => f.path.split("/").slice(0, 3).join("/")),
    files.map(() => "lib/providers/holidays"),
    "every other file is in the new provider's folder",
  );
  assert.ok(files.length >= 3, "config.ts, mod.ts and a tool");

  const copy = Deno.makeTempDirSync({ prefix: "opendata-mcp-add-provider-" });
  try {
    for (const file of ["main.ts", "deno.json", "deno.lock"]) {
      Deno.copyFileSync(join(ROOT, file), join(copy, file));
    }
    copyTree(join(ROOT, "lib"), join(copy, "lib"));
    copyTree(join(ROOT, "tools"), join(copy, "tools"));
    Deno.symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    for (const file of files) {
      Deno.mkdirSync(join(copy, file.path, ".."), { recursive: true });
      Deno.writeTextFileSync(join(copy, file.path), file.text);
    }
    const registryPath = join(copy, "lib/providers/registry.ts");
    Deno.writeTextFileSync(
      registryPath,
      withRegistryEntry(Deno.readTextFileSync(registryPath), registryBlock.text),
    );

    // The example type-checks and lints clean as the page prints it.
    await runDeno(copy, ["check", "--node-modules-dir=manual", ...files.map((f) => f.path)]);
    await runDeno(copy, ["lint", ...files.map((f) => f.path)]);
    await runTask(copy, "schemas");
    const before = JSON.parse(await Deno.readTextFile(join(ROOT, "lib/providers/listings.json")));
    const after = JSON.parse(await Deno.readTextFile(join(copy, "lib/providers/listings.json")));
    const { holidays, ...others } = after.providers;
    assert.deepEqual(others, before.providers, "the other providers' listings are unchanged");
    assert.deepEqual(
      holidays.variants[0].listing.tools.map((t: { tool: { name: string } }) => t.tool.name),
      ["holidays-list"],
    );
    await runTask(copy, "permissions");
    const net = JSON.parse(Deno.readTextFileSync(join(copy, "deno.json"))).permissions.default.net;
    assert.ok(net.includes("date.nager.at"), "deno task permissions allows the spec's host");

    await using upstream = FakeUpstream.start([
      { path: "/api/v3/PublicHolidays/2026/NO", reply: { json: NORWAY_2026 } },
    ]);
    await using server = await startStdio({
      main: join(copy, "main.ts"),
      args: ["--providers", "holidays"],
      configYaml: `providers:\n  holidays:\n    base_url: ${upstream.origin}\n`,
    });
    const listed = providerTools((await server.client.listTools()).tools);
    assert.deepEqual(listed.map((t) => t.name), ["holidays-list"]);

    const result = await server.client.callTool({
      name: "holidays-list",
      arguments: { country: "NO", year: 2026 },
    });
    assert.deepEqual(ok(result)["holidays"], [
      { date: "2026-01-01", name: "New Year's Day", local_name: "Første nyttårsdag" },
      { date: "2026-05-17", name: "Constitution Day", local_name: "Grunnlovsdagen" },
      { date: "2026-12-25", name: "Christmas Day", local_name: "Første juledag" },
    ]);
    assert.match(texts(result)[0]!, /^3 public holidays in NO, 2026\n/);
    assert.match(texts(result)[0]!, /\| 2026-05-17 \| Constitution Day \| Grunnlovsdagen \|/);
    assert.deepEqual(upstream.requests.map((r) => r.url.pathname), ["/api/v3/PublicHolidays/2026/NO"]);

    const invalid = errorOf(
      await server.client.callTool({ name: "holidays-list", arguments: { country: "no", year: 2026 } }),
    );
    assert.equal(invalid["error_type"], "VALIDATION_ERROR");
    assert.match(String(invalid["message"]), /country/);
    assert.equal(upstream.requests.length, 1, "a refused argument reaches no upstream");

    const missing = errorOf(
      await server.client.callTool({ name: "holidays-list", arguments: { country: "XX", year: 2026 } }),
    );
    assert.equal(missing["status"], 404, "the upstream's status is passed on");
    assert.match(String(missing["message"]), /Nager\.Date/, "the error names the upstream");
  } finally {
    removeHome(copy);
  }
});
