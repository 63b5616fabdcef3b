// How an npm package's `exports` map an import subpath to a file, and which files of a package the
// server's imports reach, as far as the release compile (tools/compile.ts), the start bundle's
// licence notice and the image's runtime packages (tools/bundle.ts) need it.
import { join } from "node:path";

/** The export conditions Deno resolves an ES module import of an npm package with. */
export const RUNTIME_CONDITIONS: readonly string[] = ["deno", "node", "import", "default"];

/**
 * The file a package subpath ("encoding/o200k_base", "" for the package itself) resolves to under
 * the "import" condition of the package's exports, with "*" patterns. With `conditions`, an
 * object's first key that is one of them is taken instead, as Node and Deno resolve (Deno's are
 * `RUNTIME_CONDITIONS`).
 */
export function exportTarget(
  packageJson: { exports?: unknown; module?: string; main?: string },
  subpath: string,
  conditions?: readonly string[],
): string {
  const key = subpath ? `./${subpath}` : ".";
  const exportsField = packageJson.exports as Record<string, unknown> | undefined;
  const pick = (value: unknown): string | undefined => {
    if (typeof value === "string") return value;
    if (value && typeof value === "object") {
      const v = value as Record<string, unknown>;
      if (!conditions) return pick(v["import"] ?? v["default"]);
      for (const k of Object.keys(v)) {
        const target = conditions.includes(k) ? pick(v[k]) : undefined;
        if (target) return target;
      }
    }
    return undefined;
  };
  let target: string | undefined;
  if (exportsField) {
    target = pick(exportsField[key]);
    if (!target) {
      for (const [pattern, value] of Object.entries(exportsField)) {
        const star = pattern.indexOf("*");
        if (star < 0) continue;
        const [before, after] = [pattern.slice(0, star), pattern.slice(star + 1)];
        if (key.startsWith(before) && key.endsWith(after) && key.length >= before.length + after.length) {
          const matched = key.slice(before.length, key.length - after.length);
          target = pick(value)?.replaceAll("*", matched);
          if (target) break;
        }
      }
    }
  } else if (!subpath) {
    target = packageJson.module ?? packageJson.main;
  }
  if (!target) throw new Error(`"${key}" is not exported for import`);
  return target.replace(/^\.\//, "");
}

/**
 * Packages trimmed to the ES modules that the subpaths the server imports reach (relative imports
 * followed): of gpt-tokenizer, the encodings lib/output/tokens.ts imports.
 */
export const TRIMMED_PACKAGES = ["gpt-tokenizer"];

/** The files of an ES module package that `entries` import, following relative imports. */
export function esmClosure(dir: string, entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = Deno.readTextFileSync(join(dir, file));
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = new URL(m[1]!, `file:///${file}`).pathname.slice(1);
      queue.push(target);
    }
  }
  return seen;
}

/**
 * The npm packages a module graph (`deno info --json`'s modules) imports, by bare name, with the
 * subpaths it imports of each ("" for the package itself).
 */
export function npmImports(
  info: { modules: { kind?: string; specifier?: string }[] },
): Map<string, Set<string>> {
  const imports = new Map<string, Set<string>>();
  for (const m of info.modules) {
    if (m.kind !== "npm") continue;
    // "npm:/@scope/name@1.2.3/sub/path" or "npm:name@1.2.3"
    const match = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@[^/]+(?:\/(.*))?$/.exec(m.specifier ?? "");
    if (!match) continue;
    const subpaths = imports.get(match[1]!) ?? new Set<string>();
    subpaths.add(match[2] ?? "");
    imports.set(match[1]!, subpaths);
  }
  return imports;
}
