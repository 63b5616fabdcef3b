// The start bundle: main.ts, lib/ and the packages every start loads (the MCP server SDK and zod)
// in about 50 minified ES modules, which the container and the release binary run. The sources
// stay split for people (one tool a file); loading the ~400 modules they and those packages are
// made of costs a start from the sources about 0.2× of an empty SDK server's start, which the
// bundle saves (docs/BENCHMARKS.md). Built where it ships, never committed (bundle/ is ignored):
// the image's build stage (`--runtime`), the release compile (tools/compile.ts), and once in the
// test suite, into a scratch folder, to check it serves as the sources do (tests/e2e/bundle_test.ts).
// `deno task start` and `deno task dev` run the sources.
//
//   deno task build                   writes bundle/
//   tools/bundle.ts --runtime DIR     writes the image's /app: bundle/, deno.json, deno.lock,
//                                     config/ and node_modules/ with only the packages it loads
//
// What stays outside, loaded from node_modules/ by the bundle's literal imports, as from source:
// packages only some starts load (OpenTelemetry, Redis, jose for OAuth, js-yaml for YAML beyond
// plain, gpt-tokenizer's encodings of several MB).
import { cpSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { esmClosure, exportTarget, npmImports, RUNTIME_CONDITIONS, TRIMMED_PACKAGES } from "./npm_exports.ts";
import { denoInfo } from "./deno_info.ts";

const ROOT = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

/** Where the bundle is written, relative to the repository. */
export const BUNDLE_DIR = "bundle";

/** The bundle's entry module, relative to the repository (what the start task runs). */
export const BUNDLE_ENTRY = `${BUNDLE_DIR}/main.js`;

/** Packages left outside the bundle (import specifiers; a trailing `/*` takes subpaths too). */
export const EXTERNAL_PACKAGES = [
  "gpt-tokenizer",
  "gpt-tokenizer/*",
  "@opentelemetry/*",
  "@redis/*",
  "jose",
  "js-yaml",
];

/** The file naming the bundled packages and their licences, in the bundle's folder. */
export const NOTICE = "NOTICE.md";

async function run(cmd: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`${cmd.slice(0, 3).join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}${text}`);
  }
  return text;
}

interface NpmPackage {
  name: string;
  version: string;
  dependencies?: string[];
  localPath?: string;
}

/** What `deno info --json main.ts` says that the notice needs. */
interface GraphInfo {
  modules: { kind?: string; specifier?: string; npmPackage?: string }[];
  npmPackages: Record<string, NpmPackage>;
}

/** True when the import specifier `name` (a package name) is left outside the bundle. */
export function isExternal(name: string): boolean {
  return EXTERNAL_PACKAGES.some((p) =>
    p.endsWith("/*") ? name.startsWith(p.slice(0, -1)) || name === p.slice(0, -2) : name === p
  );
}

/**
 * The npm packages whose code the bundle holds: those main.ts's graph imports that are not
 * external, with their dependencies (from `deno info --json`).
 */
export function bundledPackages(info: GraphInfo): NpmPackage[] {
  return packageClosure(info, (pkg) => !isExternal(pkg.name));
}

/**
 * The npm packages the graph imports (those `root` accepts), with their dependencies; type
 * declarations never load.
 */
function packageClosure(info: GraphInfo, root: (pkg: NpmPackage) => boolean): NpmPackage[] {
  const roots = new Set(
    info.modules.filter((m) => m.kind === "npm" && m.npmPackage).map((m) => m.npmPackage!),
  );
  const seen = new Map<string, NpmPackage>();
  const stack = [...roots].filter((id) => info.npmPackages[id] && root(info.npmPackages[id]));
  while (stack.length) {
    const id = stack.pop()!;
    const pkg = info.npmPackages[id];
    if (!pkg || seen.has(id) || pkg.name.startsWith("@types/")) continue;
    seen.set(id, pkg);
    stack.push(...(pkg.dependencies ?? []));
  }
  return [...seen.values()].sort((a, b) => byCodePoint(a.name, b.name));
}

/** Orders strings by their code points: the same on every machine (localeCompare follows the locale). */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A package whose code a bundled package's own build carries in its files. */
export interface InlinedPackage {
  name: string;
  version: string;
  /** The bundled package whose files carry it. */
  within: string;
}

/**
 * The module markers of a rolldown build (the MCP server SDK's): `//#region` and the path of the
 * module taken, which for a package is `.../node_modules/.pnpm/<name>@<version>[_peers]/node_modules/<name>/...`.
 */
const REGION = /^\/\/#region \S*?node_modules\/\.pnpm\/([^/\s]+)\/node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\//gm;

/** Import specifiers in a module's text (static, re-exports and literal dynamic imports). */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g;

/** The folder an npm package of the graph is installed in. */
function folderOf(pkg: NpmPackage): string {
  return pkg.localPath ?? join(ROOT, "node_modules", pkg.name);
}

/**
 * The packages whose code the bundled packages' own builds carry inside their files (the MCP
 * server SDK's has ajv, fast-uri, content-type, ...): found by the module markers in the files the
 * server's imports reach, following each bundled package's imports as Deno resolves them. A file
 * no import reaches (the SDK's Cloudflare Workers validator) is not in the bundle, and what it
 * carries is not named.
 */
export function inlinedPackages(info: GraphInfo): InlinedPackage[] {
  const queue: [id: string, file: string][] = [];
  // `found`: a specifier read from a module's text, which may be a comment's, not an import; the
  // graph's own imports must resolve.
  const enqueue = (id: string, subpath: string, found = false) => {
    const pkg = info.npmPackages[id];
    if (!pkg || isExternal(pkg.name) || pkg.name.startsWith("@types/")) return;
    const manifest = JSON.parse(Deno.readTextFileSync(join(folderOf(pkg), "package.json")));
    try {
      queue.push([id, exportTarget(manifest, subpath, RUNTIME_CONDITIONS)]);
    } catch (e) {
      if (!found) throw new Error(`${pkg.name}@${pkg.version}: ${e instanceof Error ? e.message : e}`);
    }
  };
  for (const m of info.modules) {
    if (m.kind !== "npm" || !m.npmPackage) continue;
    // "npm:/@scope/name@1.2.3/sub/path" or "npm:name@1.2.3"
    const subpath = /^npm:\/?(?:@[^/@]+\/)?[^/@]+@[^/]+(?:\/(.*))?$/.exec(m.specifier ?? "")?.[1] ?? "";
    enqueue(m.npmPackage, subpath);
  }
  const seen = new Set<string>();
  const found = new Map<string, InlinedPackage>();
  while (queue.length) {
    const [id, file] = queue.pop()!;
    if (seen.has(`${id} ${file}`)) continue;
    seen.add(`${id} ${file}`);
    const pkg = info.npmPackages[id]!;
    let text: string;
    try {
      text = Deno.readTextFileSync(join(folderOf(pkg), file));
    } catch (e) {
      // A relative path in a comment or a string, not an import: no such file.
      if (e instanceof Deno.errors.NotFound) continue;
      throw e;
    }
    for (const [, folder, name] of text.matchAll(REGION)) {
      const prefix = `${name!.replace("/", "+")}@`;
      if (!folder!.startsWith(prefix)) {
        throw new Error(
          `${pkg.name}@${pkg.version} ${file}: no version for ${name} in the marker's folder ${folder}`,
        );
      }
      const version = folder!.slice(prefix.length).split("_")[0]!;
      found.set(`${name}@${version}`, { name: name!, version, within: pkg.name });
    }
    for (const [, specifier] of text.matchAll(IMPORT)) {
      if (specifier!.startsWith("./") || specifier!.startsWith("../")) {
        queue.push([id, new URL(specifier!, `file:///${file}`).pathname.slice(1)]);
        continue;
      }
      const [, name, subpath] = /^((?:@[^/]+\/)?[^/:]+)(?:\/(.*))?$/.exec(specifier!) ?? [];
      // A package itself (a self-reference) or one of its dependencies; anything else (a Node
      // built-in, a package named in a comment) is not code of the bundle.
      const target = name === pkg.name
        ? id
        : pkg.dependencies?.find((d) => info.npmPackages[d]?.name === name);
      if (target) enqueue(target, subpath ?? "", true);
    }
  }
  return [...found.values()].sort((a, b) => byCodePoint(a.name, b.name) || byCodePoint(a.version, b.version));
}

/**
 * The licence of a package carried inside another's build: from its installed copy of that
 * version, else of another version (the text names the version it was read from).
 */
function inlinedLicence(pkg: InlinedPackage): { id: string; text: string; from: string } {
  const store = join(ROOT, "node_modules", ".deno");
  const prefix = `${pkg.name.replace("/", "+")}@`;
  // Folders "<name>@<version>", with "_<peer>@<version>" after it when a peer dependency is resolved.
  const installed = [...Deno.readDirSync(store)].filter((e) => e.isDirectory && e.name.startsWith(prefix))
    .map((e) => ({ folder: e.name, version: e.name.slice(prefix.length).split("_")[0]! }))
    .sort((a, b) => byCodePoint(a.folder, b.folder));
  const copy = installed.find((i) => i.version === pkg.version) ?? installed.at(-1);
  if (!copy) {
    throw new Error(
      `${pkg.name}@${pkg.version} (inside ${pkg.within}) is not installed under ${store}: its licence text ` +
        "cannot be read for bundle/NOTICE.md",
    );
  }
  const { id, text } = licenceOf({
    name: pkg.name,
    version: copy.version,
    localPath: join(store, copy.folder, "node_modules", pkg.name),
  });
  return { id, text, from: copy.version };
}

function licenceOf(pkg: NpmPackage): { id: string; text: string } {
  const dir = folderOf(pkg);
  const manifest = JSON.parse(Deno.readTextFileSync(join(dir, "package.json")));
  // Sorted: the order a folder lists its files in differs between file systems.
  const file = [...Deno.readDirSync(dir)].map((e) => e.name).sort().find((n) =>
    /^(licen[cs]e|copying)(\.|$)/i.test(n)
  );
  if (!file) throw new Error(`${pkg.name}@${pkg.version} has no licence file in ${dir}`);
  return { id: String(manifest.license ?? "see below"), text: Deno.readTextFileSync(join(dir, file)).trim() };
}

function notice(packages: NpmPackage[], inlined: InlinedPackage[]): string {
  const lines = [
    "# bundle/",
    "",
    "Built by tools/bundle.ts from main.ts and lib/ where it ships (the image's build stage, the release",
    "compile): do not edit. The container and the release binary run it; `deno task start` runs the sources.",
    "",
    "## Packages bundled, with their licences",
    "",
  ];
  for (const pkg of packages) {
    const { id, text } = licenceOf(pkg);
    lines.push(`### ${pkg.name} ${pkg.version} (${id})`, "", "```text", text, "```", "");
  }
  lines.push(
    "## Packages inside the bundled packages' own builds, with their licences",
    "",
    "Their code came into the bundle with the package that carries it.",
    "",
  );
  for (const pkg of inlined) {
    const { id, text, from } = inlinedLicence(pkg);
    lines.push(
      `### ${pkg.name} ${pkg.version} (${id}), inside ${pkg.within}`,
      "",
      ...(from === pkg.version ? [] : [`The licence text of ${pkg.name} ${from}:`, ""]),
      "```text",
      text,
      "```",
      "",
    );
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/**
 * Refuses a node_modules/ that is not the checkout's own folder (a link to another checkout's):
 * esbuild reads the packages at their real path, and the chunks' names hash the inputs' paths
 * relative to the checkout, so the same sources would give other file names than CI's.
 */
export function checkNodeModules(root = ROOT): void {
  const own = join(Deno.realPathSync(root), "node_modules");
  let real: string;
  try {
    real = Deno.realPathSync(join(root, "node_modules"));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new Error(`${own} is missing: run \`deno install --frozen\` first`);
  }
  if (real !== own) {
    throw new Error(
      `${own} leads to ${real}: the bundle's chunk names depend on where the packages are, so build ` +
        "with the checkout's own node_modules/ (remove the link, run `deno install --frozen`)",
    );
  }
}

/**
 * `deno bundle` of `entry` (relative to `root`) as the start bundle is made: code splitting,
 * minified, the external packages left outside; into `outDir`.
 */
export async function bundleModule(entry: string, outDir: string, root = ROOT): Promise<void> {
  await run([
    Deno.execPath(),
    "bundle",
    "-q",
    "--platform=deno",
    "--code-splitting",
    "--minify",
    `--outdir=${outDir}`,
    ...EXTERNAL_PACKAGES.map((p) => `--external=${p}`),
    entry,
  ], root);
}

/** Builds the bundle into `outDir` (emptied first) from the repository at `root`. */
export async function buildBundle(outDir: string, root = ROOT): Promise<void> {
  checkNodeModules(root);
  const work = `${outDir}.partial`;
  removeIfThere(work);
  await bundleModule("main.ts", work, root);
  const info = await denoInfo<GraphInfo>("main.ts", root);
  Deno.writeTextFileSync(join(work, NOTICE), notice(bundledPackages(info), inlinedPackages(info)));
  removeIfThere(outDir);
  Deno.renameSync(work, outDir);
}

function removeIfThere(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/**
 * The npm packages a built bundle loads at run time (the external ones, with their dependencies),
 * from `deno info --json` of its entry; type declarations never load.
 */
export function runtimePackages(info: GraphInfo): NpmPackage[] {
  return packageClosure(info, () => true);
}

/** A package's folder in a node_modules/ that `deno install` filled: `.deno/@scope+name@1.2.3`. */
function storeFolder(pkg: NpmPackage): string {
  return `${pkg.name.replace("/", "+")}@${pkg.version}`;
}

/**
 * The files of the package in `dir` that the server runs, for a package trimmed to them (of
 * gpt-tokenizer, the modules its imported encodings reach, as the release compile embeds it);
 * undefined for one copied whole.
 */
function runFiles(dir: string, name: string, imported: Map<string, Set<string>>): Set<string> | undefined {
  const subpaths = TRIMMED_PACKAGES.includes(name) ? imported.get(name) : undefined;
  if (!subpaths) return undefined;
  const manifest = JSON.parse(Deno.readTextFileSync(join(dir, "package.json")));
  const keep = esmClosure(dir, [...subpaths].map((p) => exportTarget(manifest, p)));
  keep.add("package.json");
  for (const e of Deno.readDirSync(dir)) if (/^licen[cs]e/i.test(e.name)) keep.add(e.name);
  return keep;
}

/**
 * Copies `packages` from `from` (a node_modules/ that `deno install` filled) to `to`: each one's
 * folder under .deno/ with the links to its dependencies (of a trimmed package, only the files its
 * `imported` subpaths reach), and the top-level link of each that has one. Links stay links
 * (relative, as Deno made them), so `to` resolves as `from` does; Deno grants making a link only
 * with unscoped read and write permissions.
 */
export function copyPackages(
  from: string,
  to: string,
  packages: NpmPackage[],
  imported: Map<string, Set<string>> = new Map(),
): void {
  Deno.mkdirSync(join(to, ".deno"), { recursive: true });
  for (const pkg of packages) {
    const store = join(".deno", storeFolder(pkg));
    const own = join(store, "node_modules", pkg.name);
    const keep = runFiles(join(from, own), pkg.name, imported);
    if (keep) {
      for (const file of keep) {
        Deno.mkdirSync(dirname(join(to, own, file)), { recursive: true });
        Deno.copyFileSync(join(from, own, file), join(to, own, file));
      }
    } else {
      cpSync(join(from, store), join(to, store), { recursive: true, verbatimSymlinks: true });
    }
    const link = join(from, pkg.name);
    let target: string;
    try {
      target = Deno.readLinkSync(link);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue; // Only a dependency: no top-level link.
      throw e;
    }
    Deno.mkdirSync(join(to, pkg.name, ".."), { recursive: true });
    Deno.symlinkSync(target, join(to, pkg.name));
  }
}

/**
 * What the container runs, in `outDir` (emptied first): the bundle built from the sources at
 * `root`, deno.json (the permission set, the import map), deno.lock, config/, and a node_modules/
 * holding only the packages the bundle loads. The test-only packages (client SDKs, playwright-core,
 * oidc-provider, ...) stay in the build. Resolves to the packages copied, as name@version.
 */
export async function assembleRuntime(outDir: string, root = ROOT): Promise<string[]> {
  removeIfThere(outDir);
  Deno.mkdirSync(outDir, { recursive: true });
  await buildBundle(join(outDir, BUNDLE_DIR), root);
  for (const file of ["deno.json", "deno.lock"]) Deno.copyFileSync(join(root, file), join(outDir, file));
  cpSync(join(root, "config"), join(outDir, "config"), { recursive: true });
  const info = await denoInfo<GraphInfo>(join(outDir, BUNDLE_ENTRY), root);
  const packages = runtimePackages(info);
  copyPackages(join(root, "node_modules"), join(outDir, "node_modules"), packages, npmImports(info));
  return packages.map((p) => `${p.name}@${p.version}`);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { runtime: { type: "string" } },
  });
  try {
    checkNodeModules();
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    Deno.exit(1);
  }
  if (values.runtime) {
    const packages = await assembleRuntime(values.runtime);
    console.log(
      `wrote ${values.runtime}: bundle/, deno.json, deno.lock, config/, node_modules/ (${
        packages.join(", ")
      })`,
    );
  } else {
    await buildBundle(join(ROOT, BUNDLE_DIR));
    console.log(`wrote ${BUNDLE_DIR}/`);
  }
}
