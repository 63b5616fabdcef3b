// The layer rules of docs/ARCHITECTURE.md, checked over the module graph of what ships: main.ts is
// the only entry point (`deno task build` bundles main.ts's graph, the providers' literal dynamic
// imports included, into what `deno task start`, the image and the release compile run). One
// `deno info --json` call for the whole file.
import assert from "node:assert/strict";
import {
  describeViolations,
  graphFromDenoInfo,
  importCycles,
  LAYERS,
  layerViolations,
  PROVIDER_LAYER,
} from "./layers.ts";
import type { Layer } from "./layers.ts";
import { denoInfo } from "../../tools/deno_info.ts";

const ROOT = new URL("../../", import.meta.url);

async function shippedGraph(entry = "main.ts"): Promise<Map<string, string[]>> {
  return graphFromDenoInfo(await denoInfo(entry), ROOT.href);
}

/** The repository-relative paths of the TypeScript modules under `dir`. */
async function modulesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
    if (entry.isDirectory) out.push(...await modulesUnder(`${dir}${entry.name}/`));
    else if (entry.name.endsWith(".ts")) out.push(`${dir}${entry.name}`);
  }
  return out;
}

const SHIPPED = await shippedGraph();
const LIB_MODULES = await modulesUnder("lib/");
/**
 * Main.ts's graph, plus the graphs of lib/'s modules it does not reach (lib/http/stores.ts, a
 * types index only tests import): every check below sees all of lib/.
 */
const GRAPH = new Map(SHIPPED);
for (const path of LIB_MODULES) {
  if (!GRAPH.has(path)) { for (const [from, to] of await shippedGraph(path)) GRAPH.set(from, to); }
}

/** Whether every module of `cycle` is inside one provider folder (lib/providers/<id>/). */
function insideOneProvider(cycle: readonly string[]): boolean {
  const ids = new Set(cycle.map((p) => /^lib\/providers\/([^/]+)\//.exec(p)?.[1] ?? ""));
  return ids.size === 1 && !ids.has("");
}

function cycleLines(cycles: readonly string[][]): string {
  return cycles.map((c) => `  ${c.join(" <-> ")}`).join("\n");
}

Deno.test("graphFromDenoInfo reads main.ts's graph: the core, a provider loaded by dynamic import, the registry", () => {
  for (
    const path of [
      "main.ts",
      "lib/app.ts",
      "lib/mcp/server.ts",
      "lib/providers/registry.ts",
      "lib/providers/fred/mod.ts",
    ]
  ) {
    assert.ok(GRAPH.has(path), `${path} missing from the graph`);
  }
  assert.ok(GRAPH.get("main.ts")!.includes("lib/cli.ts"));
});

Deno.test("importCycles: no import circle among the core's modules (lib/ outside provider folders, main.ts)", () => {
  const cycles = importCycles(GRAPH).filter((c) => !insideOneProvider(c));
  assert.equal(
    cycles.length,
    0,
    `import circles (move the types both sides share to a module both import):\n${cycleLines(cycles)}`,
  );
});

Deno.test("importCycles: no import circle inside a provider folder", () => {
  const cycles = importCycles(GRAPH).filter(insideOneProvider);
  assert.equal(cycles.length, 0, `import circles inside providers:\n${cycleLines(cycles)}`);
});

Deno.test("layerViolations: every import of lib/ and main.ts obeys the layer table of docs/ARCHITECTURE.md", () => {
  const violations = layerViolations(GRAPH);
  assert.equal(violations.length, 0, `imports against the layers:\n${describeViolations(violations)}`);
});

Deno.test("layerViolations: no provider imports another provider, no core module imports a provider", () => {
  const providerEdges = layerViolations(GRAPH).filter((v) => v.reason.includes("provider"));
  assert.equal(providerEdges.length, 0, describeViolations(providerEdges));
  // The registry is the one module outside the provider folders that imports them.
  const inProvider = (path: string) => /^lib\/providers\/[^/]+\//.test(path);
  const importers = [...GRAPH]
    .filter(([from, to]) => !inProvider(from) && to.some(inProvider))
    .map(([from]) => from);
  assert.deepEqual(importers, ["lib/providers/registry.ts"]);
});

Deno.test("LAYERS: docs/ARCHITECTURE.md's layer table names every layer, its modules and what it may import", async () => {
  const doc = await Deno.readTextFile(new URL("docs/ARCHITECTURE.md", ROOT));
  const start = doc.indexOf("\n## Layers\n");
  assert.ok(start >= 0, "docs/ARCHITECTURE.md has a section ## Layers");
  const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
  const rows = section.split("\n").filter((line) => /^\| [a-z]+ +\|/.test(line)).map(tableRow);
  assert.deepEqual(rows.map((r) => r.name), LAYERS.map((l) => l.name), "the table's rows, bottom to top");
  for (const [i, layer] of LAYERS.entries()) {
    // Both ways: the table claims no module or import the data leaves out, and the reverse.
    assert.deepEqual(rows[i]!.paths, [...layer.paths].sort(), `row ${layer.name}: its modules`);
    assert.deepEqual(
      rows[i]!.mayImport,
      [...layer.mayImport].sort(),
      `row ${layer.name}: what it may import`,
    );
  }
});

/** One row of the layer table: its layer, the paths its modules cell names, the layers it may import. */
function tableRow(line: string): { name: string; paths: string[]; mayImport: string[] } {
  const [, name, modules, allowed] = line.split("|").map((cell) => cell.trim());
  const paths = [...modules!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    .filter((p) => p.includes("/") || p.endsWith(".ts")).map((p) => p.replace("<id>/", ""));
  const names = new Set(LAYERS.map((l) => l.name));
  const mayImport = new Set((allowed!.match(/[a-z]+/g) ?? []).filter((w) => names.has(w) && w !== name));
  return { name: name!, paths: paths.sort(), mayImport: [...mayImport].sort() };
}

Deno.test("tableRow reads a layer row's modules and allowed layers, so an extra claim fails the check", () => {
  assert.deepEqual(tableRow("| mcp | `lib/mcp/` (the `ServedApp` contract) | base, http, output |"), {
    name: "mcp",
    paths: ["lib/mcp/"],
    mayImport: ["base", "http", "output"],
  });
  assert.deepEqual(tableRow("| provider | `lib/providers/<id>/`, one each | base, redis |").mayImport, [
    "base",
    "redis",
  ]);
});

/** The lines of `text` and, when it opens with `//` comments, that first comment. */
function firstComment(text: string): string {
  const lines = text.split("\n");
  const end = lines.findIndex((line) => !line.startsWith("//"));
  return lines.slice(0, end < 0 ? lines.length : end).join("\n");
}

/** A core module longer than this says why in its first comment ("Longer than the 500 lines ..."). */
const MAX_LINES = 500;

Deno.test("every module of lib/ is at most 500 lines, or its first comment says why it is longer", async () => {
  const long: string[] = [];
  // Every provider folder is in main.ts's graph (the registry's lazy imports are literal).
  const folders = new Set([...SHIPPED.keys()].map((p) => /^lib\/providers\/([^/]+)\//.exec(p)?.[1]));
  for await (const entry of Deno.readDir(new URL("lib/providers/", ROOT))) {
    if (entry.isDirectory) {
      assert.ok(folders.has(entry.name), `lib/providers/${entry.name} is not in main.ts's graph`);
    }
  }
  assert.deepEqual(LIB_MODULES.filter((p) => !GRAPH.has(p)), [], "lib/ modules the checks did not see");
  for (const path of GRAPH.keys()) {
    if (!path.endsWith(".ts")) continue;
    const text = await Deno.readTextFile(new URL(path, ROOT));
    const lines = text.split("\n").length - 1;
    if (lines > MAX_LINES && !/Longer than the 500 lines .*on purpose/s.test(firstComment(text))) {
      long.push(`${path}: ${lines} lines`);
    }
  }
  assert.deepEqual(long, [], "split these by responsibility, or say in the first comment why not");
});

Deno.test("firstComment reads only the comment a module opens with", () => {
  assert.equal(firstComment("// a\n// b\nimport x;\n// c\n"), "// a\n// b");
  assert.equal(firstComment("import x;\n// Longer than the 500 lines, on purpose\n"), "");
});

// The checker itself, on small hand-made graphs: it must be able to fail.

const TOY_LAYERS: readonly Layer[] = [
  { name: "base", paths: ["lib/log.ts"], mayImport: [] },
  { name: "http", paths: ["lib/http/"], mayImport: ["base"] },
  { name: "mcp", paths: ["lib/mcp/"], mayImport: ["base", "http"] },
  { name: PROVIDER_LAYER, paths: ["lib/providers/"], mayImport: ["base", "http", "mcp"] },
  {
    name: "root",
    paths: ["main.ts", "lib/providers/registry.ts"],
    mayImport: ["base", "http", "mcp", PROVIDER_LAYER],
  },
];

Deno.test("importCycles names each circle of a hand-made graph, and finds none in a chain", () => {
  const graph = new Map([
    ["lib/geo/bbox.ts", ["lib/geo/distance.ts"]],
    ["lib/geo/distance.ts", ["lib/geo/geojson.ts"]],
    ["lib/geo/geojson.ts", ["lib/geo/bbox.ts", "lib/log.ts"]],
    ["lib/log.ts", []],
    ["lib/self.ts", ["lib/self.ts"]],
    ["lib/a.ts", ["lib/b.ts"]],
    ["lib/b.ts", ["lib/a.ts"]],
  ]);
  assert.deepEqual(importCycles(graph), [
    ["lib/a.ts", "lib/b.ts"],
    ["lib/geo/bbox.ts", "lib/geo/distance.ts", "lib/geo/geojson.ts"],
    ["lib/self.ts"],
  ]);
  assert.deepEqual(importCycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", []]])), []);
});

Deno.test("importCycles walks a long chain without overflowing the stack", () => {
  const graph = new Map<string, string[]>();
  for (let i = 0; i < 50_000; i++) graph.set(`m${i}`, [`m${i + 1}`]);
  graph.set("m50000", ["m0"]);
  const cycles = importCycles(graph);
  assert.equal(cycles.length, 1);
  assert.equal(cycles[0]!.length, 50_001);
});

Deno.test("layerViolations names an upward import, a provider importing another, the core importing a provider, an unlisted module", () => {
  const graph = new Map([
    ["main.ts", ["lib/providers/registry.ts", "lib/mcp/server.ts"]],
    ["lib/providers/registry.ts", ["lib/providers/fred/config.ts"]],
    ["lib/http/client.ts", ["lib/mcp/server.ts", "lib/log.ts"]],
    ["lib/mcp/server.ts", ["lib/http/client.ts", "lib/providers/fred/mod.ts"]],
    ["lib/providers/fred/config.ts", ["lib/providers/fred/mod.ts", "lib/mcp/server.ts"]],
    ["lib/providers/fred/mod.ts", ["lib/providers/wikipedia/parse.ts"]],
    ["lib/providers/wikipedia/parse.ts", ["lib/odd.ts"]],
    ["lib/odd.ts", []],
  ]);
  const lines = describeViolations(layerViolations(graph, TOY_LAYERS)).split("\n");
  assert.deepEqual(lines, [
    "lib/http/client.ts -> lib/mcp/server.ts: http may not import mcp",
    "lib/mcp/server.ts -> lib/providers/fred/mod.ts: core layer mcp imports a provider (only the registry may)",
    "lib/odd.ts -> (module): lib/odd.ts is in no layer: add it to LAYERS and docs/ARCHITECTURE.md",
    "lib/providers/fred/mod.ts -> lib/providers/wikipedia/parse.ts: provider imports another provider (provider:fred -> provider:wikipedia)",
    "lib/providers/wikipedia/parse.ts -> lib/odd.ts: lib/odd.ts is in no layer: add it to LAYERS and docs/ARCHITECTURE.md",
  ]);
});

Deno.test("layerViolations accepts a graph that keeps the rules, and leaves modules outside lib/ unchecked", () => {
  const graph = new Map([
    ["main.ts", ["lib/providers/registry.ts", "lib/mcp/server.ts"]],
    ["lib/providers/registry.ts", ["lib/providers/fred/config.ts"]],
    ["lib/providers/fred/config.ts", ["lib/providers/fred/mod.ts", "lib/mcp/server.ts", "lib/log.ts"]],
    ["lib/mcp/server.ts", ["lib/http/client.ts"]],
    ["tests/helper.ts", ["lib/providers/fred/mod.ts", "lib/providers/wikipedia/mod.ts"]],
  ]);
  assert.deepEqual(layerViolations(graph, TOY_LAYERS), []);
});
