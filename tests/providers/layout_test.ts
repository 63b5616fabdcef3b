// The shape of lib/providers/, read from the module graph Deno itself builds (`deno info --json
// main.ts`, which follows the registry's literal dynamic imports into every provider): no import
// circle inside a provider folder and no provider importing another; each tool in a file of its
// own under tools/; and no provider file over 500 lines unless it opens with a comment saying why
// ("// Long file: ...").
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const PROVIDERS_DIR = new URL("lib/providers/", ROOT).href;

/** The file:// modules of main.ts's graph and the file:// modules each imports (code and types). */
async function moduleGraph(): Promise<Map<string, string[]>> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
    }[];
  };
  const graph = new Map<string, string[]>();
  for (const m of info.modules) {
    if (!m.specifier.startsWith("file://")) continue;
    const deps = (m.dependencies ?? []).flatMap((d) => [d.code?.specifier, d.type?.specifier])
      .filter((s): s is string => s?.startsWith("file://") ?? false);
    graph.set(m.specifier, [...new Set(deps)]);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan), each as a list of modules. */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The provider folder a module lives in, or undefined outside lib/providers/<id>/. */
function providerOf(specifier: string): string | undefined {
  if (!specifier.startsWith(PROVIDERS_DIR)) return undefined;
  const rest = specifier.slice(PROVIDERS_DIR.length);
  return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : undefined;
}

const relative = (specifier: string) => specifier.slice(ROOT.href.length);

Deno.test("circles() finds a two-module circle and a three-module one, and nothing in a chain", () => {
  const graph = new Map([["a", ["b"]], ["b", ["a", "c"]], ["c", ["d"]], ["d", ["e"]], ["e", ["c"]], ["f", [
    "a",
  ]]]);
  assert.deepEqual(circles(graph).map((c) => c.join(",")).sort(), ["a,b", "c,d,e"]);
  assert.deepEqual(circles(new Map([["a", ["b"]], ["b", ["c"]], ["c", []]])), []);
});

Deno.test("lib/providers: no import circle inside a provider, no provider imports another", async () => {
  const graph = await moduleGraph();
  const providerModules = [...graph.keys()].filter((s) => providerOf(s) !== undefined);
  // Every provider's code is in the graph (the registry's lazy imports are literal), so the
  // checks below see all of it.
  const folders = new Set(providerModules.map(providerOf));
  for await (const entry of Deno.readDir(new URL("lib/providers/", ROOT))) {
    if (entry.isDirectory) {
      assert.ok(folders.has(entry.name), `lib/providers/${entry.name} is not in main.ts's graph`);
    }
  }
  const inProviders = circles(graph).filter((c) => c.some((s) => providerOf(s) !== undefined));
  assert.deepEqual(inProviders.map((c) => c.map(relative)), [], "import circles in lib/providers");
  const across = providerModules.flatMap((from) =>
    graph.get(from)!.filter((to) => providerOf(to) !== undefined && providerOf(to) !== providerOf(from))
      .map((to) => `${relative(from)} -> ${relative(to)}`)
  );
  assert.deepEqual(across, [], "a provider imports another provider");
});
Deno.test("lib/providers: no file over 500 lines unless its first comment says why it is long", async () => {
  const long: string[] = [];
  const walk = async (dir: URL) => {
    for await (const entry of Deno.readDir(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) await walk(url);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(url);
        const lines = text.split("\n").length;
        // The reason goes in the opening comment, starting "Long file:".
        if (lines > 500 && !/^(\/\/|\/\*\*?) ?Long file: \S/.test(text)) {
          long.push(`${relative(url.href)} (${lines})`);
        }
      }
    }
  };
  await walk(new URL("lib/providers/", ROOT));
  assert.deepEqual(long, [], "provider files over 500 lines without a first comment saying why");
});

Deno.test("lib/providers: each tool of a provider is defined in a file of its own under tools/", async () => {
  const file = JSON.parse(await Deno.readTextFile(new URL("lib/providers/listings.json", ROOT))) as {
    providers: Record<
      string,
      {
        variants: { listing: { tools: { tool: { name: string } }[]; unavailable?: { tools: string[] }[] } }[];
      }
    >;
  };
  const problems: string[] = [];
  for (const [id, entry] of Object.entries(file.providers)) {
    const names = new Set(entry.variants.flatMap((v) => [
      ...v.listing.tools.map((t) => t.tool.name),
      ...(v.listing.unavailable ?? []).flatMap((u) => u.tools),
    ]));
    const dir = new URL(`lib/providers/${id}/tools/`, ROOT);
    const files: [string, string][] = [];
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".ts")) {
        files.push([e.name, await Deno.readTextFile(new URL(e.name, dir))]);
      }
    }
    // Where a tool's name is given: its definition's `name`, or the first argument of the
    // conformance fixtures' builders.
    const defines = (text: string, name: string) =>
      new RegExp(`(name: |fixture\\(\\s*|confirmWithState\\(\\s*)"${name}"`).test(text);
    for (const name of names) {
      const homes = files.filter(([, text]) => defines(text, name)).map(([f]) => f);
      if (homes.length !== 1) problems.push(`${id}: ${name} is defined in ${homes.length} files of tools/`);
    }
    for (const [f, text] of files) {
      const defined = [...names].filter((name) => defines(text, name));
      if (defined.length !== 1) problems.push(`${id}: tools/${f} defines ${defined.length} tools`);
    }
  }
  assert.deepEqual(problems, []);
});
