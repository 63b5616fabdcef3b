// The start bundle (tools/bundle.ts): what the container and the release binary run, built where
// they are built, never committed. The other end-to-end tests run the sources' main.ts, as
// `deno task start` does; these build the bundle once, afresh into a scratch folder laid out as the
// image's /app (tools/bundle.ts --runtime, what the Dockerfile runs), and prove it is those sources
// and serves as they do: the same listings, every provider's answers through the task suite, bad
// input and a broken config answered alike, and stdio, HTTP and a refused Redis as the release
// smoke test checks them. This is the suite's one parity check: nothing else runs the bundle.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  assembleRuntime,
  BUNDLE_ENTRY,
  bundledPackages,
  checkNodeModules,
  inlinedPackages,
  isExternal,
  runtimePackages,
} from "../../tools/bundle.ts";
import { runCli, startStdio } from "../harness/spawn.ts";
import type { SpawnOptions } from "../harness/spawn.ts";
import { runSuite } from "../../tools/bench/tasks.ts";
import { smokeServer } from "../../tools/smoke.ts";
import { splitStartTask } from "../../tools/permissions.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** The packages the runtime layout must not hold: only tests, the docs generator or the bench load them. */
const TEST_ONLY = [
  "@modelcontextprotocol/client",
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/ext-apps",
  "@ai-sdk/mcp",
  "playwright-core",
  "oidc-provider",
  "yaml",
  "@types/node",
  "@opentelemetry/otlp-transformer",
];

let runtime: Promise<string> | undefined;
let runtimeDir: string | undefined;
/** The runtime layout (bundle/, deno.json, node_modules/, ...), built once for the whole file. */
function built(): Promise<string> {
  runtime ??= (async () => {
    const dir = runtimeDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-runtime-" });
    await assembleRuntime(join(dir, "app"));
    return join(dir, "app");
  })();
  return runtime;
}

/** The built bundle's entry. */
async function bundleEntry(): Promise<string> {
  return join(await built(), BUNDLE_ENTRY);
}

// The scratch folder goes when the file's tests are done (unload runs after the last test).
globalThis.addEventListener("unload", () => {
  if (runtimeDir) Deno.removeSync(runtimeDir, { recursive: true });
});

Deno.test("assembleRuntime() lays out the image's /app: the bundle, no sources, and only the npm packages the bundle loads", async () => {
  const app = await built();
  const top = [...Deno.readDirSync(app)].map((e) => e.name).sort();
  assert.deepEqual(top, ["bundle", "config", "deno.json", "deno.lock", "node_modules"]);
  const bundle = [...Deno.readDirSync(join(app, "bundle"))].map((e) => e.name);
  assert.ok(bundle.includes("main.js") && bundle.includes("NOTICE.md"), bundle.join(", "));
  assert.ok(bundle.every((n) => /\.(js|md)$/.test(n)), `only built files: ${bundle.join(", ")}`);
  const store = [...Deno.readDirSync(join(app, "node_modules/.deno"))].map((e) => e.name).sort();
  const names = store.map((f) => f.slice(0, f.lastIndexOf("@")).replace("+", "/"));
  for (const name of ["@opentelemetry/api", "@redis/client", "jose", "js-yaml", "gpt-tokenizer"]) {
    assert.ok(names.includes(name), `${name} is loaded by the bundle: ${names.join(", ")}`);
  }
  for (const name of [...TEST_ONLY, "zod", "@modelcontextprotocol/server"]) {
    assert.ok(
      !names.includes(name),
      `${name} is not in the runtime layout (test-only, or inside the bundle)`,
    );
  }
  // gpt-tokenizer trimmed to what its two imported encodings reach, as in the release binary.
  const tokenizer = join(app, "node_modules/gpt-tokenizer");
  assert.deepEqual([...Deno.readDirSync(join(tokenizer, "esm/bpeRanks"))].map((e) => e.name).sort(), [
    "cl100k_base.js",
    "o200k_base.js",
  ]);
  assert.throws(() => Deno.statSync(join(tokenizer, "cjs")), Deno.errors.NotFound, "no CommonJS copy");
  // Every link leads to a package of the layout.
  for (const name of ["jose", "js-yaml", "gpt-tokenizer", "@redis/client", "@opentelemetry/api"]) {
    assert.ok(Deno.statSync(join(app, "node_modules", name, "package.json")).isFile, name);
  }
});

Deno.test("bundledPackages() and runtimePackages() follow the graph's npm imports and dependencies: the bundle's, the external ones", () => {
  const info = {
    modules: [
      { kind: "npm", npmPackage: "sdk@1" },
      { kind: "npm", npmPackage: "jose@6" },
      { kind: "esm" },
    ],
    npmPackages: {
      "sdk@1": { name: "sdk", version: "1", dependencies: ["core@1", "@types/node@2"] },
      "core@1": { name: "core", version: "1", dependencies: ["zod@4"] },
      "zod@4": { name: "zod", version: "4" },
      "@types/node@2": { name: "@types/node", version: "2" },
      "jose@6": { name: "jose", version: "6", dependencies: ["zod@4"] },
    },
  };
  assert.deepEqual(bundledPackages(info).map((p) => p.name), ["core", "sdk", "zod"]);
  // What a built bundle's graph loads from node_modules/: all of its npm imports, no declarations.
  assert.deepEqual(runtimePackages(info).map((p) => p.name), ["core", "jose", "sdk", "zod"]);
  assert.ok(isExternal("@opentelemetry/api") && isExternal("gpt-tokenizer") && isExternal("jose"));
  assert.ok(!isExternal("zod") && !isExternal("@modelcontextprotocol/server") && !isExternal("jose-x"));
});

Deno.test("inlinedPackages() finds the packages a bundled package's build carries, in the files its imports reach", () => {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-inlined-" });
  try {
    const write = (path: string, text: string) => {
      Deno.mkdirSync(join(dir, path, ".."), { recursive: true });
      Deno.writeTextFileSync(join(dir, path), text);
    };
    const region = (folder: string, name: string) =>
      `//#region ../../node_modules/.pnpm/${folder}/node_modules/${name}/dist/index.js\nconst x = 1;\n//#endregion\n`;
    write(
      "sdk/package.json",
      JSON.stringify({
        exports: {
          ".": { import: "./dist/index.mjs" },
          "./_shims": { browser: { import: "./dist/browser.mjs" }, node: { import: "./dist/node.mjs" } },
        },
      }),
    );
    write(
      "sdk/dist/index.mjs",
      'import { a } from "./a.mjs";\nimport "sdk/_shims";\nimport { c } from "core/x";\n',
    );
    write("sdk/dist/a.mjs", region("ajv-formats@3.0.1_ajv@8.18.0", "ajv-formats"));
    write("sdk/dist/node.mjs", region("@scope+x@1.0.0", "@scope/x") + 'import("./late.mjs");\n');
    write("sdk/dist/late.mjs", region("fast-uri@3.1.8", "fast-uri"));
    // Only a browser imports it: not in the bundle.
    write("sdk/dist/browser.mjs", region("@cfworker+json-schema@4.1.1", "@cfworker/json-schema"));
    write("core/package.json", JSON.stringify({ exports: { "./*": "./dist/*.mjs" } }));
    write("core/dist/x.mjs", region("content-type@1.0.5", "content-type"));
    write("jose/package.json", JSON.stringify({ exports: { ".": "./index.mjs" } }));
    write("jose/index.mjs", region("left-out@1.0.0", "left-out"));
    const info = {
      modules: [
        { kind: "npm", specifier: "npm:/sdk@1.0.0", npmPackage: "sdk@1.0.0" },
        { kind: "npm", specifier: "npm:/jose@6.0.0", npmPackage: "jose@6.0.0" },
      ],
      npmPackages: {
        "sdk@1.0.0": {
          name: "sdk",
          version: "1.0.0",
          dependencies: ["core@1.0.0"],
          localPath: join(dir, "sdk"),
        },
        "core@1.0.0": { name: "core", version: "1.0.0", localPath: join(dir, "core") },
        "jose@6.0.0": { name: "jose", version: "6.0.0", localPath: join(dir, "jose") },
      },
    };
    assert.deepEqual(inlinedPackages(info).map((p) => `${p.name}@${p.version} in ${p.within}`), [
      "@scope/x@1.0.0 in sdk",
      "ajv-formats@3.0.1 in sdk",
      "content-type@1.0.5 in core",
      "fast-uri@3.1.8 in sdk",
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bundle/NOTICE.md names every bundled package, and every package their builds carry, with its licence text", async () => {
  const notice = Deno.readTextFileSync(join(await built(), "bundle/NOTICE.md"));
  for (const name of ["@modelcontextprotocol/server", "@modelcontextprotocol/core", "zod"]) {
    assert.match(notice, new RegExp(`^### ${name.replace("/", "\\/")} \\d`, "m"), name);
  }
  // The MCP server SDK's build carries these (its `//#region` markers); the bundle holds their code.
  for (
    const name of [
      "ajv",
      "ajv-formats",
      "content-type",
      "fast-deep-equal",
      "fast-uri",
      "json-schema-traverse",
    ]
  ) {
    assert.match(
      notice,
      new RegExp(`^### ${name} \\d\\S* \\([^)]+\\), inside @modelcontextprotocol\\/server$`, "m"),
      name,
    );
  }
  assert.match(notice, /Apache License/);
  assert.match(notice, /MIT License/i);
  assert.match(notice, /^### fast-uri \S+ \(BSD-3-Clause\)/m);
  assert.match(notice, /Redistribution and use in source and binary forms/, "fast-uri's licence text");
});

Deno.test("checkNodeModules() refuses a missing node_modules/ and one that leads to another checkout's", () => {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-modules-" });
  try {
    Deno.mkdirSync(join(dir, "a/node_modules"), { recursive: true });
    Deno.mkdirSync(join(dir, "b"));
    assert.throws(
      () => checkNodeModules(join(dir, "b")),
      /node_modules is missing: run `deno install --frozen`/,
    );
    Deno.symlinkSync(join(dir, "a/node_modules"), join(dir, "b/node_modules"));
    assert.throws(
      () => checkNodeModules(join(dir, "b")),
      /leads to .*a\/node_modules: the bundle's chunk names/,
    );
    checkNodeModules(join(dir, "a"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/** What a listing call returns, from the bundle and from the sources. */
async function both<T>(
  options: SpawnOptions,
  read: (s: Awaited<ReturnType<typeof startStdio>>) => Promise<T>,
) {
  const out: T[] = [];
  for (const bundle of [await bundleEntry(), undefined]) {
    await using s = await startStdio({ ...options, ...(bundle ? { bundle } : {}) });
    out.push(await read(s));
  }
  return { bundle: out[0]!, sources: out[1]! };
}

Deno.test({
  name: "the bundle lists the same tools, resource templates and prompts as the sources, every toolset",
  sanitizeResources: false,
  async fn() {
    const { bundle, sources } = await both(
      { env: { OPENDATA_MCP_TOOLSETS: "all", FRED_API_KEY: "0123456789abcdef0123456789abcdef" } },
      async (s) => ({
        server: s.client.getServerVersion(),
        tools: (await s.client.listTools()).tools,
        templates: (await s.client.listResourceTemplates()).resourceTemplates,
        prompts: (await s.client.listPrompts()).prompts,
      }),
    );
    assert.ok(bundle.tools.length >= 39, `every toolset: ${bundle.tools.length} tools`);
    assert.deepEqual(bundle, sources);
  },
});

/**
 * An answer's text with what differs between two runs of the same server blanked: times, ids, the
 * fakes' ports, scratch folders and file stamps, and the request a provenance line names.
 */
function steady(text: string): string {
  return text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/127\.0\.0\.1:\d+/g, "<fake>")
    .replace(/(opendata:\/\/citation\/[\w-]+\/)[0-9a-f]+/g, "$1<id>")
    // The scratch HOME under the system's temporary folder (/tmp here, elsewhere under TMPDIR).
    .replace(/\/[^\s"'()]*\/opendata-mcp-test-\w+/g, "<home>")
    .replace(/_\d{8}_\d{6}(_\d+)?\./g, "_<stamp>.")
    // Which of parallel requests finished last, the one a provenance line names (its URL and
    // digest), varies by run.
    .replace(
      /^Provenance: .*\(last of \d+ upstream requests.*$/gm,
      (line) =>
        line.replace(/^(Provenance: [^·\n]*?) http\S+ ·/, "$1 ·").replace(
          /sha256 [0-9a-f]{64}/,
          "sha256 <last>",
        ),
    )
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>");
}

/**
 * A structured answer with the parts of a provenance over parallel requests that follow which
 * finished last (its permalink and digest, the order of its requests) made steady, at any depth.
 */
function steadyProvenance(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(steadyProvenance);
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = steadyProvenance(v);
  const requests = out["requests"];
  if (Array.isArray(requests) && requests.length > 1 && "permalink" in out) {
    out["requests"] = requests.map((q) => JSON.stringify(q)).sort();
    out["permalink"] = "<last>";
    out["sha256"] = "<last>";
  }
  return out;
}

Deno.test({
  name:
    "the bundle answers the task suite (every provider, recorded upstreams) as the sources do, word for word",
  sanitizeResources: false,
  async fn() {
    const bundle = await runSuite(undefined, { bundle: await bundleEntry() });
    const sources = await runSuite();
    assert.equal(bundle.length, sources.length);
    assert.ok(bundle.length >= 30, `${bundle.length} tasks`);
    for (const [i, r] of bundle.entries()) {
      assert.ok(r.answered, `${r.task.id}: ${r.deadEnd}`);
      assert.deepEqual(r.trail, sources[i]!.trail, r.task.id);
      assert.deepEqual(r.texts.map(steady), sources[i]!.texts.map(steady), r.task.id);
      // And the structured answers, which clients read besides the text (and the trail follows).
      const structured = (x: typeof r) =>
        x.structured.map((c) => steady(JSON.stringify(steadyProvenance(c ?? null))));
      assert.deepEqual(structured(r), structured(sources[i]!), `${r.task.id}: structuredContent`);
      // A question answered by a failure (an upstream down) has only an error, which carries none.
      if (!r.task.failure) {
        assert.ok(r.structured.some((c) => c !== undefined), `${r.task.id}: structured answers compared`);
      }
    }
  },
});

Deno.test({
  name: "the bundle refuses bad arguments, an unknown tool and a broken config as the sources do",
  sanitizeResources: false,
  async fn() {
    const { bundle, sources } = await both({ args: ["--providers", "example,boj"] }, async (s) => {
      const bad = await s.client.callTool({
        name: "opendata_call",
        arguments: { tool: "example-echo", arguments: "{" },
      });
      const unknown = await s.client.callTool({
        name: "opendata_call",
        arguments: { tool: "nope", arguments: "{}" },
      });
      const wrongType = await s.client.callTool({ name: "opendata_describe", arguments: { tool: 42 } });
      return { bad, unknown, wrongType };
    });
    assert.equal(bundle.bad.isError, true);
    assert.equal(bundle.unknown.isError, true);
    assert.deepEqual(bundle, sources);

    const config = "providers:\n  boj:\n    timeout: -3\n";
    const entry = await bundleEntry();
    const cli = await Promise.all([
      runCli(["tools"], { bundle: entry, configYaml: config }),
      runCli(["tools"], { configYaml: config }),
    ]);
    assert.equal(cli[0]!.code, 2);
    assert.match(cli[0]!.stderr, /providers\.boj\.timeout/);
    assert.equal(cli[0]!.code, cli[1]!.code);
    assert.equal(
      steady(cli[0]!.stderr).replaceAll(cli[0]!.home, "~"),
      steady(cli[1]!.stderr).replaceAll(cli[1]!.home, "~"),
    );
  },
});

Deno.test({
  name:
    "the release smoke test passes on the bundle: stdio calls, a recorded upstream, HTTP and a refused Redis",
  sanitizeResources: false,
  async fn() {
    const start = splitStartTask(JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks.start)!;
    const result = await smokeServer(
      [
        Deno.execPath(),
        "run",
        "--config",
        join(await built(), "deno.json"),
        ...start.args.slice(0, -1),
        await bundleEntry(),
      ],
      { env: { ...Deno.env.toObject(), ...start.env } },
    );
    assert.equal(result.serverInfo.name, "opendata-mcp");
    assert.deepEqual(result.tools, ["opendata_search", "opendata_describe", "opendata_call"]);
  },
});
