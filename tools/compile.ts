// The release compile: builds the start bundle from the sources into bundle/ (tools/bundle.ts, as
// `deno task build` does; never committed), then `deno compile`s it (bundle/main.js) with the
// permission set and V8 flags of the run tasks, embedding every module the server can load and, of
// the npm packages, only what runs.
//
//   deno run --allow-read --allow-write=bundle,bundle.partial --allow-run --allow-env tools/compile.ts TARGET [OUTPUT]
//
// What goes in, and why:
// - Every chunk of the bundle, the providers' dynamic imports included: deno.json sets no
//   `lazy-dynamic-imports` (with it, `deno compile` skips every literal `import()`); the run tasks
//   pass `--unstable-lazy-dynamic-imports` on their command line instead. The MCP server SDK and
//   zod are inside the bundle; the packages it leaves outside are embedded as packages.
// - npm packages from Deno's global cache (`--node-modules-dir=none`), only those the module graph
//   reaches (`--exclude-unused-npm`): the test-only ones (the client SDKs, the v1 SDK, @ai-sdk)
//   and the docs generator's `yaml` stay out.
// - Of those packages, no type declarations, source maps, TypeScript sources or Markdown (nothing
//   at run time reads them), and of gpt-tokenizer only the modules the subpaths the server imports
//   reach (tokens.ts loads two encodings of seven; the others and its CommonJS copy are ~23 MB).
// - bundle/NOTICE.md: the licences of the packages the bundle holds (MIT, Apache-2.0 and BSD ask
//   for them to travel with the code; the embedded packages keep their own licence files).
//
// tests/e2e/binary_test.ts compiles with exactly these arguments and runs the embedded files.
import { join } from "node:path";
import { SERVE_FLAG, V8_FLAGS } from "./permissions.ts";
import { RELEASE_TARGETS } from "./distribution.ts";
import { buildBundle, BUNDLE_DIR, BUNDLE_ENTRY, NOTICE } from "./bundle.ts";
import { esmClosure, exportTarget, npmImports, TRIMMED_PACKAGES } from "./npm_exports.ts";
import { denoInfo } from "./deno_info.ts";

export { esmClosure, exportTarget, TRIMMED_PACKAGES };

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * Builds a package ships for bundlers only: its `exports` name them under the "module" and "esnext"
 * conditions, which Deno does not resolve (it loads the "default" build, build/src). Left out of
 * the binary (about 2 MB of @opentelemetry/api, which the server loads only with OTEL_DENO=true).
 */
export const BUNDLER_ONLY_BUILDS: Readonly<Record<string, readonly string[]>> = {
  "@opentelemetry/api": ["build/esm/", "build/esnext/"],
};

/** Files of an embedded npm package that nothing reads at run time. */
export function unusedAtRunTime(path: string): boolean {
  return /\.(map|d\.ts|d\.mts|d\.cts|md|markdown)$/i.test(path) ||
    /\.(ts|mts|cts|tsx)$/.test(path);
}

/** Deno's npm cache folder (`deno info`'s "npm modules cache"). */
export async function npmCacheDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info"],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const dir = /npm modules cache:\s*(.+)/.exec(text)?.[1]?.trim();
  if (!dir) throw new Error(`deno info did not name the npm cache: ${text}`);
  return dir;
}

/** The npm packages (name@version) deno.lock resolves from `roots` (bare names), with their dependencies. */
export function npmClosure(
  lock: { npm: Record<string, { dependencies?: string[] }> },
  roots: string[],
): string[] {
  const byName = new Map<string, string>();
  for (const id of Object.keys(lock.npm)) byName.set(baseName(id), id);
  const seen = new Set<string>();
  const queue = roots.map((r) => byName.get(r) ?? r).filter((id) => lock.npm[id]);
  while (queue.length) {
    const id = queue.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const dep of lock.npm[id]?.dependencies ?? []) {
      const depId = lock.npm[dep] ? dep : byName.get(dep);
      if (depId) queue.push(depId);
    }
  }
  return [...seen].sort();
}

/** "@scope/name@1.2.3_peer@4" -> "@scope/name". */
function baseName(id: string): string {
  return id.slice(0, id.indexOf("@", 1));
}

/** "@scope/name@1.2.3_peer@4" -> "1.2.3". */
function versionOf(id: string): string {
  return id.slice(id.indexOf("@", 1) + 1).split("_")[0]!;
}

/** The npm packages the entry's graph imports (bare names) and the subpaths it imports of each. */
export async function graphNpmImports(entry = join(ROOT, BUNDLE_ENTRY)): Promise<Map<string, Set<string>>> {
  return npmImports(await denoInfo<{ modules: { kind: string; specifier: string }[] }>(entry));
}

/** Every file under `dir`, relative to it, with "/" separators. */
function filesUnder(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(join(dir, prefix))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...filesUnder(dir, rel));
    else out.push(rel);
  }
  return out;
}

/**
 * The `--exclude` paths: for each embedded package, its files nothing runs. `imported` names the
 * subpaths the server imports of each package (for the trimmed ones).
 */
export function excludes(cacheDir: string, packages: string[], imported: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const id of packages) {
    const dir = join(cacheDir, "registry.npmjs.org", baseName(id), versionOf(id));
    let files: string[];
    try {
      files = filesUnder(dir);
    } catch {
      continue; // Not in the cache: deno compile reports it.
    }
    const subpaths = TRIMMED_PACKAGES.includes(baseName(id)) ? imported.get(baseName(id)) : undefined;
    const packageJson = subpaths ? JSON.parse(Deno.readTextFileSync(join(dir, "package.json"))) : undefined;
    const keep = subpaths
      ? esmClosure(dir, [...subpaths].map((p) => exportTarget(packageJson, p)))
      : undefined;
    for (const f of files) {
      const always = f === "package.json" || /^licen[cs]e/i.test(f);
      if (always) continue;
      const bundlerOnly = BUNDLER_ONLY_BUILDS[baseName(id)]?.some((b) => f.startsWith(b)) ?? false;
      if (bundlerOnly || (keep ? !keep.has(f) : unusedAtRunTime(f))) out.push(join(dir, f));
    }
  }
  return out;
}

/** The arguments of `deno compile` for `target`, writing `output`. */
export async function compileArgs(target: string, output: string, entry = BUNDLE_ENTRY): Promise<string[]> {
  const lock = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.lock")));
  const imported = await graphNpmImports(join(ROOT, entry));
  const packages = npmClosure(lock, [...imported.keys()]);
  const excluded = excludes(await npmCacheDir(), packages, imported);
  return [
    "compile",
    "-P",
    "--no-prompt",
    V8_FLAGS,
    SERVE_FLAG,
    "--node-modules-dir=none",
    "--exclude-unused-npm",
    ...excluded.flatMap((p) => ["--exclude", p]),
    // The licences of the packages inside the bundle (theirs no longer come in as package files).
    "--include",
    `${BUNDLE_DIR}/${NOTICE}`,
    "--target",
    target,
    "--output",
    output,
    entry,
  ];
}

/**
 * Builds the start bundle from the sources (unless `entry` names another module) and compiles it;
 * resolves to the output's path, or throws with deno's error output.
 */
export async function compile(
  target: string,
  output: string,
  options: { entry?: string; env?: Record<string, string> } = {},
): Promise<string> {
  if (options.entry === undefined) await buildBundle(join(ROOT, BUNDLE_DIR));
  const args = await compileArgs(target, output, options.entry);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["--quiet", ...args.slice(0, 1), "--config", join(ROOT, "deno.json"), ...args.slice(1)],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`deno compile failed: ${new TextDecoder().decode(out.stderr)}`);
  return output;
}

if (import.meta.main) {
  const [target, output] = Deno.args;
  const release = RELEASE_TARGETS.find((t) => t.target === target);
  if (!release) {
    console.error(
      `usage: compile.ts TARGET [OUTPUT]; TARGET one of ${RELEASE_TARGETS.map((t) => t.target).join(", ")}`,
    );
    Deno.exit(2);
  }
  const path = await compile(release.target, output ?? `dist/${release.binary}`);
  console.log(`compiled ${path}`);
}
