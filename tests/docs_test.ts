import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { parseConfig } from "../lib/config/parse.ts";
import { PROVIDERS } from "../lib/providers/registry.ts";
import { generated, GENERATED_FILES } from "../tools/docs.ts";
import {
  envAllowlist,
  envGranted,
  envNames,
  netAllowlist,
  OWNED_ENV_PREFIXES,
  permissionSet,
  permissionTasks,
} from "../tools/permissions.ts";
import { loadYaml } from "../lib/config/yaml.ts";

// parseConfig() reads config text with the YAML parser, which loads on demand.
await loadYaml();

const ROOT = new URL("../", import.meta.url);

Deno.test("generated files (README sources table, docs/TOOLS.md tools table, docs/CONFIGURATION.md, config/apis.example.yaml, .env.example, manifest.json) are current", async () => {
  for (const [path, wanted] of Object.entries(await generated())) {
    const current = await Deno.readTextFile(new URL(path, ROOT));
    assert.equal(current, wanted, `${path} is stale: run deno task docs`);
  }
});

Deno.test("deno task docs never writes config/apis.yaml, the user's file", async () => {
  assert.ok(!(GENERATED_FILES as readonly string[]).includes("config/apis.yaml"));
  assert.ok(!Object.keys(await generated()).includes("config/apis.yaml"));
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const writes = /--allow-write=(\S+)/.exec(config.tasks.docs)?.[1]?.split(",") ?? [];
  assert.deepEqual(
    writes.toSorted(),
    [...GENERATED_FILES].toSorted(),
    "the docs task may write only its outputs",
  );
});

Deno.test("config/apis.yaml is short, in the documented shape, and equal in effect to the built-in defaults", async () => {
  const fileText = await Deno.readTextFile(new URL("config/apis.yaml", ROOT));
  const raw = parseYaml(fileText) as Record<string, unknown>;
  assert.deepEqual(
    Object.keys(raw),
    ["enabled_providers", "providers"],
    "enabled_providers + providers, as docs/CONFIGURATION.md says",
  );
  assert.ok(fileText.split("\n").length < 80, "hand-editable, not the generated reference");
  // Equal with no environment, and also where a timeout variable sets the default deadline
  // (a timeout in the file would silently override DEFAULT_TIMEOUT and GEO_API_TIMEOUT).
  for (const env of [{}, { DEFAULT_TIMEOUT: "12", GEO_API_TIMEOUT: "90" }]) {
    const fromFile = parseConfig({ flags: {}, env, fileText, filePath: "config/apis.yaml" }, PROVIDERS);
    const builtIn = parseConfig({ flags: {}, env }, PROVIDERS);
    assert.deepEqual({ ...fromFile, file: null }, builtIn, JSON.stringify(env));
    assert.deepEqual(fromFile.warnings, []);
  }
});

Deno.test("deno.json has one permission set, generated from the registry, and the run and compile tasks use it", async () => {
  const text = await Deno.readTextFile(new URL("deno.json", ROOT));
  const config = JSON.parse(text);
  assert.deepEqual(config.permissions, { default: permissionSet() }, "stale: run deno task permissions");
  for (const [name, task] of Object.entries(permissionTasks())) {
    assert.equal(config.tasks[name], task, `task "${name}" is stale: run deno task permissions`);
    // The compile tasks run tools/compile.ts, whose `deno compile -P` embeds the set
    // (tests/e2e/binary_test.ts reads it back from the binary).
    if (name.startsWith("compile:")) assert.match(task, /^deno run [^]*tools\/compile\.ts /, name);
    else assert.match(task, / -P /, `${name} uses the permission set`);
  }
  for (const spec of PROVIDERS) {
    for (const host of spec.allowNet) assert.ok(netAllowlist().includes(host), host);
    for (const b of spec.env) assert.ok(envGranted(b.name), b.name);
  }
  // Wildcards only for the server's own prefixes; every variable it reads is granted.
  for (const entry of envAllowlist().filter((e) => e.includes("*"))) {
    assert.ok(OWNED_ENV_PREFIXES.includes(entry.slice(0, -1)), `${entry} is an owned prefix`);
  }
  for (const name of envNames()) assert.ok(envGranted(name, config.permissions.default.env), name);
  assert.ok(!envGranted("MCP_OTHER_SERVER_TOKEN") && !envGranted("REDIS_PASSWORD") && !envGranted("PATH"));
  // The set is the only allowlist: no task repeats network or environment grants.
  for (const [name, task] of Object.entries(config.tasks as Record<string, string>)) {
    assert.doesNotMatch(task, /--allow-(net|env)=/, `task "${name}" repeats an allowlist`);
  }
  assert.ok(!JSON.stringify(config.tasks).includes(" -A "), "never -A");
  assert.ok(text.length < 8 * 1024, `deno.json is ${text.length} bytes`);
});

/** The text of a Markdown file outside fenced code blocks and inline code, where links and headings live. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "").replace(/`[^`\n]*`/g, "``");
}

/** GitHub's anchor for each heading of a Markdown file (lower case, punctuation dropped, `-n` on repeats). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "");
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = m[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative link targets (`[text](target)`, images too) of a Markdown file, outside code. */
export function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function markdownFiles(dir: URL): URL[] {
  const files: URL[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) files.push(...markdownFiles(url));
    else if (entry.name.endsWith(".md")) files.push(url);
  }
  return files;
}

Deno.test("headingAnchors() makes GitHub's anchors: punctuation dropped, repeats numbered, code skipped", () => {
  const doc =
    "# Tools\n\n## `providers.fred` — FRED\n\n```sh\n# not a heading\n```\n\n## Tools\n\n### Replayable provenance\n";
  assert.deepEqual([...headingAnchors(doc)], [
    "tools",
    "providersfred--fred",
    "tools-1",
    "replayable-provenance",
  ]);
  assert.deepEqual(
    relativeLinks('[a](docs/A.md#x) [b](https://x.org) ![c](images/c.png "t") `[d](no.md)`'),
    ["docs/A.md#x", "images/c.png"],
  );
});

Deno.test("README.md is a front door of at most 250 lines", async () => {
  const lines = (await Deno.readTextFile(new URL("README.md", ROOT))).trimEnd().split("\n").length;
  assert.ok(lines <= 250, `README.md has ${lines} lines; move detail into docs/`);
});

Deno.test("every relative link in README.md and docs/**/*.md names an existing file and heading", async () => {
  const files = [new URL("README.md", ROOT), ...markdownFiles(new URL("docs/", ROOT))];
  const broken: string[] = [];
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    for (const link of relativeLinks(text)) {
      const [path = "", anchor] = link.split("#", 2);
      const target = path === "" ? file : new URL(path, file);
      const where = `${file.pathname.slice(new URL(ROOT).pathname.length)}: ${link}`;
      let isFile = false;
      try {
        isFile = (await Deno.stat(target)).isFile;
      } catch {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor && isFile && target.pathname.endsWith(".md")) {
        if (!headingAnchors(await Deno.readTextFile(target)).has(decodeURIComponent(anchor))) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});
