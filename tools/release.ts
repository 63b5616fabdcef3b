// Assembles a release from the compiled binaries, for .github/workflows/release.yml:
//
//   release.ts check-version TAG         the tag, lib/version.ts, manifest.json and the npm package agree
//   release.ts manifests OUT             OUT/<label>/manifest.json for each target (to validate)
//   release.ts bundles DIST OUT          OUT/<label>/{manifest.json,server/opendata-mcp[.exe]}, to pack with mcpb
//   release.ts server-json DIST REPO TAG DIST/server.json with each bundle's SHA-256 (bundles in DIST)
//   release.ts npm DIST OUT              OUT/<package>/ for each platform package and the launcher
//   release.ts sha256sums DIST           DIST/SHA256SUMS over every file in DIST
//   release.ts notes TAG OUT             OUT: the CHANGELOG.md section of TAG's version (the release notes)
//   release.ts server-json-template      ./server.json, the committed registry entry (no hashes yet)
//
// Everything but the packing (npx @anthropic-ai/mcpb pack) and the publishing happens here, so
// it is tested locally (tests/distribution_test.ts) with stand-in binaries.
import { join } from "node:path";
import { VERSION } from "../lib/version.ts";
import {
  bundleFileName,
  npmPlatformPackage,
  npmPlatformPackageJson,
  RELEASE_TARGETS,
  REPOSITORY,
  serverJson,
  targetManifest,
} from "./distribution.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const NPM_LAUNCHER = join(ROOT, "npm", "opendata-mcp");

/**
 * The body of CHANGELOG.md's section for `version` (`## [0.1.0] - 2026-12-01` up to the next
 * `## ` heading), trimmed; throws when there is none, so a release without notes stops before it
 * publishes anything.
 */
export function releaseNotes(version: string, changelog: string): string {
  const lines = changelog.split("\n");
  const heading = new RegExp(`^## \\[${version.replaceAll(".", "\\.")}\\](?: - \\d{4}-\\d{2}-\\d{2})?\\s*$`);
  const start = lines.findIndex((l) => heading.test(l));
  if (start < 0) {
    throw new Error(
      `CHANGELOG.md has no section "## [${version}] - YYYY-MM-DD": move the Unreleased notes under it before tagging`,
    );
  }
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join("\n").trim();
  if (!body) throw new Error(`CHANGELOG.md's section for ${version} is empty`);
  return body;
}

/** The committed server.json: the registry entry of this version, without the bundles' hashes. */
export function serverJsonTemplate(): Record<string, unknown> {
  return serverJson({ version: VERSION, repository: REPOSITORY, tag: `v${VERSION}` });
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(path));
}

function writeJson(path: string, value: unknown): void {
  Deno.writeTextFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** What disagrees with `tag` (`v0.1.0`) among the version's homes; empty when all agree. */
export function versionMismatches(tag: string, root = ROOT): string[] {
  const want = tag.replace(/^v/, "");
  const problems: string[] = [];
  const check = (where: string, have: unknown) => {
    if (have !== want) problems.push(`${where} is "${String(have)}", the tag says "${want}"`);
  };
  const source = Deno.readTextFileSync(join(root, "lib", "version.ts"));
  check("lib/version.ts VERSION", /export const VERSION = "([^"]+)"/.exec(source)?.[1]);
  check("manifest.json version", readJson(join(root, "manifest.json"))["version"]);
  const dockerfile = Deno.readTextFileSync(join(root, "Dockerfile"));
  check("Dockerfile ARG VERSION (the image's version label)", /^ARG VERSION=(\S+)$/m.exec(dockerfile)?.[1]);
  const pkg = readJson(join(root, "npm", "opendata-mcp", "package.json"));
  check("npm/opendata-mcp/package.json version", pkg["version"]);
  const optional = (pkg["optionalDependencies"] ?? {}) as Record<string, string>;
  for (const t of RELEASE_TARGETS) {
    check(
      `npm/opendata-mcp/package.json optionalDependencies["${npmPlatformPackage(t)}"]`,
      optional[npmPlatformPackage(t)],
    );
  }
  const extra = Object.keys(optional).filter((name) =>
    !RELEASE_TARGETS.some((t) => npmPlatformPackage(t) === name)
  );
  if (extra.length) {
    problems.push(`npm/opendata-mcp/package.json has optional dependencies of no target: ${extra}`);
  }
  return problems;
}

/** Writes each target's bundle manifest to `out/<label>/manifest.json`; returns the folders. */
export function writeManifests(out: string, root = ROOT): string[] {
  const base = readJson(join(root, "manifest.json"));
  return RELEASE_TARGETS.map((t) => {
    const dir = join(out, t.label);
    Deno.mkdirSync(dir, { recursive: true });
    writeJson(join(dir, "manifest.json"), targetManifest(base, t));
    return dir;
  });
}

/** Lays out each target's bundle folder (manifest + executable binary) under `out`. */
export function writeBundles(dist: string, out: string, root = ROOT): string[] {
  const dirs = writeManifests(out, root);
  RELEASE_TARGETS.forEach((t, i) => {
    const server = join(dirs[i]!, "server");
    Deno.mkdirSync(server, { recursive: true });
    Deno.copyFileSync(join(root, "LICENSE"), join(dirs[i]!, "LICENSE"));
    const to = join(server, t.os === "win32" ? "opendata-mcp.exe" : "opendata-mcp");
    Deno.copyFileSync(join(dist, t.binary), to);
    if (Deno.build.os !== "windows") Deno.chmodSync(to, 0o755);
  });
  return dirs;
}

/** Hex SHA-256 of a file. */
export async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Writes `dist/server.json` for the bundles in `dist`; returns its content. */
export async function writeServerJson(
  dist: string,
  repository: string,
  tag: string,
): Promise<Record<string, unknown>> {
  const version = tag.replace(/^v/, "");
  const bundleSha256: Record<string, string> = {};
  for (const t of RELEASE_TARGETS) {
    bundleSha256[t.label] = await sha256(join(dist, bundleFileName(t, version)));
  }
  const json = serverJson({ version, repository, tag, bundleSha256 });
  writeJson(join(dist, "server.json"), json);
  return json;
}

/** Lays out the npm packages under `out`: one per platform with its binary, and the launcher. */
export function writeNpmPackages(dist: string, out: string, version: string): string[] {
  const dirs: string[] = [];
  for (const t of RELEASE_TARGETS) {
    const dir = join(out, npmPlatformPackage(t).replace("@opendata-mcp/", "opendata-mcp-"));
    Deno.mkdirSync(join(dir, "bin"), { recursive: true });
    writeJson(join(dir, "package.json"), npmPlatformPackageJson(t, version));
    Deno.writeTextFileSync(
      join(dir, "README.md"),
      `# ${
        npmPlatformPackage(t)
      }\n\nThe ${t.label} binary of [opendata-mcp](https://www.npmjs.com/package/opendata-mcp). ` +
        "Install `opendata-mcp`, not this package.\n",
    );
    Deno.copyFileSync(join(ROOT, "LICENSE"), join(dir, "LICENSE"));
    const bin = join(dir, "bin", t.os === "win32" ? "opendata-mcp.exe" : "opendata-mcp");
    Deno.copyFileSync(join(dist, t.binary), bin);
    if (Deno.build.os !== "windows") Deno.chmodSync(bin, 0o755);
    dirs.push(dir);
  }
  const launcher = join(out, "opendata-mcp");
  copyTree(NPM_LAUNCHER, launcher);
  Deno.copyFileSync(join(ROOT, "LICENSE"), join(launcher, "LICENSE"));
  dirs.push(launcher);
  return dirs;
}

/** Writes `dist/SHA256SUMS` (`sha256sum` format) over the files in `dist`. */
export async function writeSha256Sums(dist: string): Promise<string> {
  const names = [...Deno.readDirSync(dist)].filter((e) => e.isFile && e.name !== "SHA256SUMS").map((e) =>
    e.name
  )
    .toSorted();
  const lines = [];
  for (const name of names) lines.push(`${await sha256(join(dist, name))}  ${name}`);
  const text = `${lines.join("\n")}\n`;
  Deno.writeTextFileSync(join(dist, "SHA256SUMS"), text);
  return text;
}

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    if (entry.isDirectory) copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) Deno.copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}

if (import.meta.main) {
  const [command, ...args] = Deno.args;
  const need = (n: number, usage: string) => {
    if (args.length !== n) {
      console.error(`Usage: release.ts ${command} ${usage}`);
      Deno.exit(2);
    }
  };
  switch (command) {
    case "check-version": {
      need(1, "TAG");
      const problems = versionMismatches(args[0]!);
      for (const p of problems) console.error(p);
      if (problems.length) Deno.exit(1);
      console.log(`version ${VERSION} matches the tag ${args[0]}`);
      break;
    }
    case "manifests":
      need(1, "OUT");
      for (const dir of writeManifests(args[0]!)) console.log(join(dir, "manifest.json"));
      break;
    case "bundles":
      need(2, "DIST OUT");
      for (const dir of writeBundles(args[0]!, args[1]!)) console.log(dir);
      break;
    case "server-json":
      need(3, "DIST REPOSITORY TAG");
      await writeServerJson(args[0]!, args[1]!, args[2]!);
      console.log(join(args[0]!, "server.json"));
      break;
    case "npm":
      need(2, "DIST OUT");
      for (const dir of writeNpmPackages(args[0]!, args[1]!, VERSION)) console.log(dir);
      break;
    case "sha256sums":
      need(1, "DIST");
      console.log((await writeSha256Sums(args[0]!)).trimEnd());
      break;
    case "notes": {
      need(2, "TAG OUT");
      const notes = releaseNotes(
        args[0]!.replace(/^v/, ""),
        Deno.readTextFileSync(join(ROOT, "CHANGELOG.md")),
      );
      Deno.writeTextFileSync(args[1]!, `${notes}\n`);
      console.log(args[1]);
      break;
    }
    case "server-json-template":
      need(0, "");
      writeJson(join(ROOT, "server.json"), serverJsonTemplate());
      console.log(join(ROOT, "server.json"));
      break;
    default:
      console.error(
        `Unknown command "${
          command ?? ""
        }"; commands: check-version, manifests, bundles, server-json, npm, sha256sums, notes, server-json-template`,
      );
      Deno.exit(2);
  }
}
