// How an npm package's `exports` map an import subpath to a file, as far as the release compile
// (tools/compile.ts) and the start bundle's licence notice (tools/bundle.ts) need it.

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
