// The release binary, proven on this machine: the release compile (tools/compile.ts) with
// DENORT_BIN pointing at this deno writes the payload a release embeds (it cannot run itself),
// whose embedded files are read and run with `deno run` as a stand-in for the binary. One compile
// for the whole file.
import assert from "node:assert/strict";
import { join } from "node:path";
import { BUNDLE_DIR, BUNDLE_ENTRY, NOTICE } from "../../tools/bundle.ts";
import { compile, exportTarget } from "../../tools/compile.ts";
import { denoInfo } from "../../tools/deno_info.ts";
import { RELEASE_TARGETS } from "../../tools/distribution.ts";
import { type Embedded, prepareStandIn, readEmbedded, type StandIn } from "../../tools/embedded.ts";
import { permissionSet, SERVE_FLAG, V8_FLAGS } from "../../tools/permissions.ts";
import { smoke, smokeServer } from "../../tools/smoke.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/**
 * The payload's budget, in bytes. Measured: 7.48 MB since the binary embeds the start bundle (13.55 MB
 * when it embedded the sources and the SDK's and zod's packages; docs/BENCHMARKS.md: a minimal SDK v2
 * server compiled with `--node-modules-dir=none --exclude-unused-npm` is 14.6 MB). About 10 %
 * headroom: a new dependency or a second tokenizer encoding fails here and has to be weighed.
 */
export const PAYLOAD_BUDGET = 8_200_000;

/** npm packages only the tests, the docs generator or the bench import. */
const NOT_AT_RUN_TIME = [
  "@modelcontextprotocol/client",
  "@modelcontextprotocol/sdk",
  "@ai-sdk/",
  "yaml",
  "@types/",
  "express",
  "hono",
  "ajv",
  "oidc-provider",
  "playwright-core",
  "@modelcontextprotocol/ext-apps",
  "@opentelemetry/otlp-transformer",
  "protobufjs",
];

const HOST = RELEASE_TARGETS.some((t) => t.target === Deno.build.target);

let built: Promise<{ dir: string; embedded: Embedded }> | undefined;
let tempDir: string | undefined;
function binary(): Promise<{ dir: string; embedded: Embedded }> {
  built ??= (async () => {
    const dir = tempDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-binary-" });
    const output = await compile(Deno.build.target, join(dir, "opendata-mcp"), {
      // Deno's own hook: the runtime to embed into, instead of downloading denort.
      env: { DENORT_BIN: Deno.execPath() },
    });
    const exe = Deno.statSync(output).isFile ? output : `${output}.exe`;
    return { dir, embedded: readEmbedded(Deno.readFileSync(exe)) };
  })();
  return built;
}

let standIn: StandIn | undefined;
function standInFor(dir: string, embedded: Embedded): StandIn {
  standIn ??= prepareStandIn(embedded, join(dir, "stand-in"), ROOT);
  return standIn;
}

/** The stand-in's environment: nothing of this machine's Deno cache, no coverage collection. */
function standInEnv(s: StandIn): Record<string, string> {
  return { PATH: Deno.env.get("PATH") ?? "", DENO_DIR: s.denoDir, NO_COLOR: "1" };
}

/** Embedded npm packages, as name@version. */
function packagesOf(embedded: Embedded): string[] {
  const out = new Set<string>();
  for (const e of embedded.entries) {
    const m = /^\.deno_compile_node_modules\/localhost\/((?:@[^/]+\/)?[^/]+)\/([^/]+)\//.exec(e.path);
    if (m) out.add(`${m[1]}@${m[2]}`);
  }
  return [...out].sort();
}

Deno.test({
  name:
    "compile: the release binary embeds the start bundle's whole code closure, dynamic imports included, and no sources",
  ignore: !HOST,
  async fn() {
    const { embedded } = await binary();
    const info = await denoInfo<{
      roots: string[];
      modules: { specifier: string; dependencies?: { code?: { specifier: string } }[] }[];
    }>(BUNDLE_ENTRY);
    // The code closure: modules reached by imports that run (static or dynamic).
    const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
    const closure = new Set<string>();
    const queue = [...info.roots];
    while (queue.length) {
      const specifier = queue.pop()!;
      if (closure.has(specifier)) continue;
      closure.add(specifier);
      for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
        if (dep.code?.specifier) queue.push(dep.code.specifier);
      }
    }
    const local = [...closure].filter((s) => s.startsWith("file://"))
      .map((s) => decodeURIComponent(new URL(s).pathname).slice(ROOT.length + 1));
    const chunks = [...Deno.readDirSync(join(ROOT, BUNDLE_DIR))].filter((e) => e.name.endsWith(".js"))
      .map((e) => `${BUNDLE_DIR}/${e.name}`).sort();
    assert.deepEqual(local.sort(), chunks, "every chunk of bundle/ is reached from its entry");
    const embeddedPaths = new Set(embedded.entries.map((e) => e.path));
    const missing = local.filter((p) => !embeddedPaths.has(p));
    assert.deepEqual(missing, [], "every module the bundle can load is in the binary");
    const sources = [...embeddedPaths].filter((p) => p === "main.ts" || p.startsWith("lib/"));
    assert.deepEqual(sources, [], "the sources stay out: the bundle holds their code");
  },
});

Deno.test({
  name:
    "compile: the release binary holds only run-time npm packages and two tokenizer encodings, within budget",
  ignore: !HOST,
  async fn() {
    const { embedded } = await binary();
    const packages = packagesOf(embedded);
    // The MCP server SDK and zod are inside the bundle (tools/bundle.ts).
    assert.deepEqual(packages.map((p) => p.slice(0, p.lastIndexOf("@"))), [
      // Loaded only when tracing is on (OTEL_DENO=true).
      "@opentelemetry/api",
      "@redis/client",
      "argparse",
      "gpt-tokenizer",
      // Loaded only with MCP_OAUTH_ISSUER.
      "jose",
      "js-yaml",
    ]);
    for (const p of packages) {
      assert.ok(!NOT_AT_RUN_TIME.some((t) => p.startsWith(t)), `${p} is not needed at run time`);
    }
    const ranks = embedded.entries.map((e) => e.path).filter((p) =>
      /gpt-tokenizer\/[^/]+\/esm\/bpeRanks\//.test(p)
    )
      .map((p) => p.slice(p.lastIndexOf("/") + 1)).sort();
    assert.deepEqual(ranks, ["cl100k_base.js", "o200k_base.js"], "the encodings lib/output/tokens.ts loads");
    // @opentelemetry/api: the build Deno resolves (its exports' "default") is in, the bundlers' are not.
    const otel = embedded.entries.map((e) => e.path).filter((p) => p.includes("/@opentelemetry/api/"));
    assert.ok(otel.some((p) => p.endsWith("/build/src/index.js")), "the build Deno loads is embedded");
    assert.deepEqual(otel.filter((p) => /\/build\/(esm|esnext)\//.test(p)), [], "no bundler-only builds");
    // Licence texts stay (MIT and the like ask for the notice to travel with the code): the
    // packages' own, and bundle/NOTICE.md for those inside the bundle.
    const noise = embedded.entries.filter((e) =>
      /\.(map|d\.ts|d\.mts|md)$/.test(e.path) && !/\/LICEN[CS]E[^/]*$/i.test(e.path) &&
      e.path !== `${BUNDLE_DIR}/${NOTICE}`
    );
    assert.deepEqual(noise.map((e) => e.path), [], "no source maps, declarations or docs of packages");
    assert.ok(
      embedded.entries.some((e) => e.path === `${BUNDLE_DIR}/${NOTICE}`),
      "the licences of the bundled packages",
    );
    assert.ok(
      embedded.payloadBytes <= PAYLOAD_BUDGET,
      `payload ${embedded.payloadBytes} bytes, budget ${PAYLOAD_BUDGET}`,
    );
  },
});

Deno.test({
  name:
    "compile: the release binary carries the permission set: the net and env allowlists, any file, no prompts",
  ignore: !HOST,
  async fn() {
    const { embedded } = await binary();
    const permissions = embedded.metadata["permissions"] as Record<string, unknown>;
    const set = permissionSet();
    assert.deepEqual(permissions["allow_net"], set.net);
    assert.deepEqual(permissions["allow_env"], set.env);
    assert.deepEqual(permissions["allow_read"], [], "[] is every path");
    assert.deepEqual(permissions["allow_write"], [], "[] is every path");
    assert.equal(permissions["allow_run"], null);
    assert.equal(permissions["allow_sys"], null);
    assert.equal(permissions["prompt"], false);
    const v8 = embedded.metadata["v8_flags"] as string[];
    for (const flag of V8_FLAGS.replace("--v8-flags=", "").split(",")) assert.ok(v8.includes(flag), flag);
    // Deno.serve's request signals as the run tasks have them (SERVE_FLAG): no legacy abort.
    const features = (embedded.metadata["unstable_config"] as { features?: string[] } | undefined)?.features;
    assert.ok(features?.includes(SERVE_FLAG.replace("--unstable-", "")), JSON.stringify(features));
  },
});

Deno.test("deno.json leaves lazy-dynamic-imports to the run tasks' command lines, where deno compile never sees it", () => {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  assert.ok(
    !JSON.stringify(config.unstable ?? []).includes("lazy-dynamic-imports"),
    "under it, deno compile leaves every literal import() out of the binary",
  );
  for (const task of ["start", "dev"]) {
    assert.match(
      String(config.tasks[task]),
      /^(?:[A-Z_]+=\S* )*deno run .*--unstable-lazy-dynamic-imports /,
      task,
    );
  }
});

Deno.test({
  name:
    "smokeServer: the binary's embedded files serve stdio calls (no upstream, loopback fake), HTTP and refuse an unreachable Redis",
  ignore: !HOST,
  sanitizeResources: false,
  async fn() {
    const { dir, embedded } = await binary();
    const s = standInFor(dir, embedded);
    const result = await smokeServer([Deno.execPath(), ...s.runArgs, s.main], { env: standInEnv(s) });
    assert.equal(result.serverInfo.name, "opendata-mcp");
    assert.deepEqual(result.tools, ["opendata_search", "opendata_describe", "opendata_call"]);
  },
});

Deno.test({
  name: "smoke: a stand-in missing a provider module fails the call with a non-retryable error saying so",
  ignore: !HOST,
  async fn() {
    const { dir, embedded } = await binary();
    const s = standInFor(dir, embedded);
    // Last in this file: it breaks the stand-in on purpose. BOJ's own chunk: the one, besides the
    // entry (whose listings name the BOJ's API), that holds its client.
    const boj = [...Deno.readDirSync(join(s.root, BUNDLE_DIR))].map((e) => e.name)
      .filter((n) =>
        n !== "main.js" && Deno.readTextFileSync(join(s.root, BUNDLE_DIR, n)).includes("getDataCode")
      );
    assert.equal(boj.length, 1, `one chunk holds BOJ's client: ${boj.join(", ")}`);
    Deno.removeSync(join(s.root, BUNDLE_DIR, boj[0]!));
    await assert.rejects(
      smoke([Deno.execPath(), ...s.runArgs, s.main], { env: standInEnv(s), cwd: s.root, calls: {} }),
      /could not be loaded: a module of its code is missing from this installation/,
    );
  },
});

// The compile's folder goes when the file's tests are done (unload runs after the last test).
globalThis.addEventListener("unload", () => {
  if (tempDir) Deno.removeSync(tempDir, { recursive: true });
});

Deno.test("exportTarget() resolves a package subpath through its exports' import condition and * patterns", () => {
  const pkg = {
    exports: {
      ".": { import: "./esm/main.js", require: "./cjs/main.js" },
      "./*": { import: "./esm/*.js", require: "./cjs/*.js" },
      "./package.json": "./package.json",
    },
  };
  assert.equal(exportTarget(pkg, ""), "esm/main.js");
  assert.equal(exportTarget(pkg, "encoding/o200k_base"), "esm/encoding/o200k_base.js");
  assert.equal(exportTarget({ main: "./index.js" }, ""), "index.js");
  assert.throws(
    () => exportTarget({ exports: { ".": { require: "./x.cjs" } } }, ""),
    /not exported for import/,
  );
});
