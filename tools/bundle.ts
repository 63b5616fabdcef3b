// The start bundle (issue 29): main.ts, lib/ and the packages every start loads (the MCP server
// SDK and zod) in about 50 minified ES modules under bundle/, which `deno task start`, the
// container and the release compile run. The sources stay split for people (one tool a file,
// issue 28); loading the ~400 modules they and those packages are made of took a start from the
// sources to 1.2× an empty SDK server, and the bundle brings it to about 1.0× (docs/BENCHMARKS.md).
// Generated, committed, never edited: a fresh clone starts from it without a build step, and
// tests/e2e/bundle_test.ts fails while it differs from what the sources give.
//
//   deno task build            rewrites bundle/
//   deno task build --check    exits 1 (naming the fix) when bundle/ is stale
//
// What stays outside, loaded from node_modules/ by the bundle's literal imports, as from source:
// packages only some starts load (OpenTelemetry, Redis, jose for OAuth, js-yaml for YAML beyond
// plain, gpt-tokenizer's encodings of several MB).
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exportTarget, RUNTIME_CONDITIONS } from "./npm_exports.ts";
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
  const roots = new Set(
    info.modules.filter((m) => m.kind === "npm" && m.npmPackage).map((m) => m.npmPackage!),
  );
  const seen = new Map<string, NpmPackage>();
  const stack = [...roots].filter((id) => !isExternal(info.npmPackages[id]?.name ?? ""));
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
    "Generated by `deno task build` (tools/bundle.ts) from main.ts and lib/: do not edit. `deno task start`,",
    "the container and the release binary run it; `deno task dev` runs the sources. After changing lib/, run",
    "`deno task build` (tests/e2e/bundle_test.ts fails while this folder differs from what the sources give).",
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

/** Every file of a folder (relative path → bytes). */
function filesOf(dir: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (e.isFile) out.set(e.name, Deno.readFileSync(join(dir, e.name)));
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return out;
}

/** What differs between two folders' files: names only in one, and names whose bytes differ. */
export function differences(want: Map<string, Uint8Array>, have: Map<string, Uint8Array>): string[] {
  const out: string[] = [];
  for (const [name, bytes] of want) {
    const other = have.get(name);
    if (!other) out.push(`missing ${name}`);
    else if (other.length !== bytes.length || other.some((b, i) => b !== bytes[i])) out.push(`stale ${name}`);
  }
  for (const name of have.keys()) if (!want.has(name)) out.push(`left over ${name}`);
  return out.sort();
}

/** The Deno version CI runs (`DENO_VERSION` in .ci/run), if it says one. */
export function ciDenoVersion(root = ROOT): string | undefined {
  try {
    return /^DENO_VERSION=v?(\S+)$/m.exec(Deno.readTextFileSync(join(root, ".ci", "run")))?.[1];
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/**
 * Builds into a scratch folder (`scratch`, removed afterwards; default a new temporary folder) and
 * lists how `bundle/` of `root` differs from it.
 */
export async function staleness(
  root = ROOT,
  scratch = Deno.makeTempDirSync({ prefix: "opendata-mcp-bundle-" }),
): Promise<string[]> {
  try {
    await buildBundle(join(scratch, "bundle"), root);
    const out = differences(filesOf(join(scratch, "bundle")), filesOf(join(root, BUNDLE_DIR)));
    // deno bundle's output depends on the esbuild inside Deno: with another Deno than CI's, a
    // difference may be the version's, not the sources'.
    const ci = ciDenoVersion(root);
    if (out.length && ci && ci !== Deno.version.deno) {
      out.unshift(
        `checked with Deno ${Deno.version.deno}, but CI builds with Deno ${ci} (.ci/run): use that`,
      );
    }
    return out;
  } finally {
    removeIfThere(scratch);
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { check: { type: "boolean" } } });
  try {
    checkNodeModules();
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    Deno.exit(1);
  }
  if (values.check) {
    const stale = await staleness(ROOT, join(ROOT, `${BUNDLE_DIR}.check`));
    if (stale.length) {
      console.error(
        `bundle/ is stale (${stale.slice(0, 5).join(", ")}${
          stale.length > 5 ? ", ..." : ""
        }): run \`deno task build\``,
      );
      Deno.exit(1);
    }
    console.log("bundle/ is up to date");
  } else {
    await buildBundle(join(ROOT, BUNDLE_DIR));
    console.log(`wrote ${BUNDLE_DIR}/ (${filesOf(join(ROOT, BUNDLE_DIR)).size} files)`);
  }
}
