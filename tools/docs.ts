// Generates what must never drift from the code: the README's sources table, the tools table in
// docs/TOOLS.md, the configuration reference in docs/CONFIGURATION.md, config/apis.example.yaml (every key with its default),
// .env.example and the MCP bundle manifest (manifest.json). `deno task docs` writes them;
// tests/docs_test.ts fails when any is stale. It never writes config/apis.yaml: that file is the
// user's.
import { stringify } from "yaml";
import { z } from "zod";
import { createApp } from "../lib/app.ts";
import { OTHER_ENV, parseConfig, SERVER_ENV, SERVER_FLAGS, serverSchema } from "../lib/config/parse.ts";
import type { ProviderSpec } from "../lib/config/provider_spec.ts";
import { Logger } from "../lib/log.ts";
import { firstSentence, markdownTable } from "../lib/mcp/shaping.ts";
// The providers' code, not the generated listings: the docs follow the code even before
// `deno task schemas` has run.
import { PROVIDER_SPECS as PROVIDERS } from "../lib/providers/registry.ts";
import { mcpbManifest } from "./distribution.ts";

const ROOT = new URL("../", import.meta.url);

/** The providers users see (test-only ones are hidden). */
export function publicSpecs(): ProviderSpec[] {
  return PROVIDERS.filter((s) => !s.hidden);
}

interface KeyDoc {
  key: string;
  default: unknown;
  description: string;
}

function keyDocs(schema: z.ZodType): KeyDoc[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, { default?: unknown; description?: string }>;
  };
  return Object.entries(json.properties ?? {}).map(([key, p]) => ({
    key,
    default: p.default ?? null,
    description: p.description ?? "",
  }));
}

function show(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value) && value.length === 0) return "[]";
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** One tool as the docs list it. */
export interface ToolDoc {
  name: string;
  provider: string;
  toolset: string;
  description: string;
}

/**
 * The core tools, then the tools of `specs` (every public provider unless given) in registry order,
 * with their toolsets (with a FRED key, so the tools that need one are listed too). The core tools'
 * descriptions name the sources of `specs` only.
 */
export async function publicTools(specs: ProviderSpec[] = publicSpecs()): Promise<ToolDoc[]> {
  const config = parseConfig({
    flags: { providers: specs.map((s) => s.id).join(","), toolsets: "all" },
    env: { FRED_API_KEY: "a".repeat(32) },
  }, PROVIDERS);
  const app = await createApp(config, PROVIDERS, {
    logger: new Logger({ write: () => {} }),
    dataDir: "/nonexistent",
  });
  try {
    const toolsetOf = new Map(
      app.catalog.toolsets.flatMap((s) => s.tools.map((t) => [t.name, s.id] as const)),
    );
    const providerOf = new Map(app.providers.flatMap((p) => p.tools.map((t) => [t.name, p.id] as const)));
    return app.tools.map((t) => ({
      name: t.name,
      provider: providerOf.get(t.name) ?? "core",
      toolset: toolsetOf.get(t.name) ?? "core",
      description: firstSentence(t.description),
    }));
  } finally {
    await app.close();
  }
}

/** docs/TOOLS.md's tools table, from the registry (every public provider enabled). */
export async function toolsTable(tools?: ToolDoc[]): Promise<string> {
  const rows = (tools ?? await publicTools()).map((
    t,
  ) => [`\`${t.name}\``, `\`${t.toolset}\``, t.description]);
  return markdownTable(["Tool", "Toolset", "What it does"], rows);
}

/**
 * The README's sources table: each public provider with its page in docs/apis/, what it offers, the
 * variable it cannot serve without, and its toolsets.
 */
export async function sourcesTable(tools?: ToolDoc[]): Promise<string> {
  const all = tools ?? await publicTools();
  const rows = publicSpecs().map((spec) => {
    const keys = spec.env.filter((b) => spec.secrets.includes(b.key)).map((b) => `\`${b.name}\``);
    const notes = [
      ...(keys.length ? [`needs ${keys.join(", ")}`] : []),
      ...(spec.defaultEnabled ? [] : ["not enabled by default"]),
    ];
    const toolsets = [...new Set(all.filter((t) => t.provider === spec.id).map((t) => t.toolset))];
    return [
      `[${spec.title}](docs/apis/${spec.id}.md)${notes.length ? ` (${notes.join("; ")})` : ""}`,
      spec.description,
      toolsets.map((s) => `\`${s}\``).join(", "),
    ];
  });
  return markdownTable(["Source", "What it offers", "Toolsets"], rows);
}

/** `manifest.json`, the MCP bundle manifest: the tools a bundle serves by default. */
export async function manifestJson(): Promise<string> {
  // Built with the default providers only, so opendata_search names the sources a bundle searches.
  const tools = await publicTools(publicSpecs().filter((s) => s.defaultEnabled));
  return `${JSON.stringify(mcpbManifest(tools), null, 2)}\n`;
}

/** docs/CONFIGURATION.md's configuration reference. */
export function configReference(): string {
  const specs = publicSpecs();
  const parts: string[] = [];
  parts.push("#### Server (`server:` block)\n");
  const envByKey = new Map(SERVER_ENV.map((b) => [b.key, b.name]));
  const flagByKey = new Map(SERVER_FLAGS.map((b) => [b.key, `--${b.name}`]));
  parts.push(markdownTable(
    ["Key", "Variable", "Flag", "Default", "Meaning"],
    keyDocs(serverSchema()).map((k) => [
      `\`${k.key}\``,
      envByKey.has(k.key) ? `\`${envByKey.get(k.key)}\`` : "",
      flagByKey.has(k.key) ? `\`${flagByKey.get(k.key)}\`` : "",
      show(k.default),
      k.description,
    ]),
  ));
  parts.push("\n#### Other variables and flags\n");
  parts.push(markdownTable(["Name", "Meaning"], [
    ...OTHER_ENV.map((e) => [`\`${e.name}\``, e.description]),
    [
      "`--config FILE`",
      "Config file; else `OPENDATA_MCP_CONFIG`, else `./config/apis.yaml` (from source), else the per-user file",
    ],
    ["`--providers a,b`", "Providers to serve (else `OPENDATA_MCP_PROVIDERS`, else `enabled_providers`)"],
    [
      "`--tools a,b` / `--exclude-tools a,b`",
      "Static tool filters (`*` wildcards); also `tools.include` / `tools.exclude`",
    ],
  ]));
  for (const spec of specs) {
    parts.push(
      `\n#### \`providers.${spec.id}\` — ${spec.title}${
        spec.defaultEnabled ? "" : " (not enabled by default)"
      }\n`,
    );
    const env = new Map<string, string[]>();
    for (const b of spec.env) env.set(b.key, [...(env.get(b.key) ?? []), `\`${b.name}\``]);
    const flags = new Map<string, string[]>();
    for (const b of spec.flags) flags.set(b.key, [...(flags.get(b.key) ?? []), `\`--${b.name}\``]);
    const timeoutEnv = spec.defaultTimeoutEnv !== "DEFAULT_TIMEOUT"
      ? spec.defaultTimeoutEnv
      : "DEFAULT_TIMEOUT";
    parts.push(markdownTable(
      ["Key", "Variable", "Flag", "Default", "Meaning"],
      keyDocs(spec.schema).map((k) => [
        `\`${k.key}\``,
        [...(env.get(k.key) ?? []), ...(k.key === "timeout" ? [`\`${timeoutEnv}\` (default only)`] : [])]
          .join(", "),
        (flags.get(k.key) ?? []).join(", "),
        spec.secrets.includes(k.key) ? "— (secret)" : show(k.default),
        k.description,
      ]),
    ));
  }
  return parts.join("\n");
}

/** `config/apis.example.yaml`: every public provider's block with its defaults, commented. */
export function apisExampleYaml(): string {
  const specs = publicSpecs();
  const lines = [
    "# opendata-mcp configuration: every key with its built-in default.",
    "# Generated by `deno task docs` from the code; loading this file changes nothing.",
    "# Copy what you need into config/apis.yaml (read when running from source), the per-user file",
    "# (~/.config/opendata-mcp/config.yaml) or a file passed with --config FILE. See docs/CONFIGURATION.md.",
    "# Precedence: command-line flags > environment variables > the config file > built-in defaults.",
    "# Units are in the key names: seconds unless the key ends in _ms, _bytes or _mb.",
    "",
    "# Providers served when no --providers flag or OPENDATA_MCP_PROVIDERS is given.",
    "# Unknown names are skipped with a warning. `example` is the template provider.",
    stringify({ enabled_providers: specs.filter((s) => s.defaultEnabled).map((s) => s.id) }).trimEnd(),
    "",
    "server:",
    ...block(keyDocs(serverSchema())),
    "",
    "# Static tool filters (* wildcards).",
    "tools:",
    "  include: []",
    "  exclude: []",
    "",
    "providers:",
  ];
  for (const spec of specs) {
    lines.push(`  # ${spec.title}: ${spec.description}`);
    lines.push(`  ${spec.id}:`);
    lines.push(...block(keyDocs(spec.schema), "    ", spec.secrets));
  }
  return `${lines.join("\n")}\n`;
}

function block(keys: KeyDoc[], indent = "  ", secrets: readonly string[] = []): string[] {
  return keys.map((k) => {
    // Strings are quoted: YAML 1.1 readers take a bare `no` (Norwegian) for false.
    const value = stringify(k.default, { lineWidth: 0, defaultStringType: "QUOTE_DOUBLE" }).trimEnd()
      .replace(/\n/g, " ");
    const note = secrets.includes(k.key) ? " (secret: prefer the environment variable)" : "";
    return `${indent}${k.key}: ${value}${k.description ? `  # ${k.description}${note}` : ""}`;
  });
}

/** `.env.example`: every variable, empty or with its default, with what it does. */
export function envExample(): string {
  const specs = publicSpecs();
  const lines = [
    "# opendata-mcp environment variables (generated by `deno task docs`).",
    "# Every one is optional; blank values count as unset. Flags win over these, these over the config file.",
    "",
    "# Server",
    ...OTHER_ENV.map((e) => `# ${e.description}\n${e.name}=`),
    ...SERVER_ENV.map((e) => `# ${e.description}\n${e.name}=`),
  ];
  const seen = new Set([...OTHER_ENV.map((e) => e.name), ...SERVER_ENV.map((e) => e.name)]);
  for (const spec of specs) {
    const own = [
      ...(seen.has(spec.defaultTimeoutEnv)
        ? []
        : [{ name: spec.defaultTimeoutEnv, description: "Default deadline in seconds" }]),
      ...spec.env.filter((e) => !seen.has(e.name)),
    ];
    if (own.length === 0) continue;
    lines.push("", `# ${spec.title} (${spec.id})`);
    for (const e of own) {
      seen.add(e.name);
      lines.push(`# ${e.description}\n${e.name}=`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Replaces the text between `<!-- name:start -->` and `<!-- name:end -->`. */
export function replaceBetween(doc: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a === -1 || b === -1) throw new Error(`The document lacks the ${start} ... ${end} markers`);
  return `${doc.slice(0, a + start.length)}\n${content}\n${doc.slice(b)}`;
}

/** Formats text the way `deno fmt` formats files with extension `ext`, so checks stay stable. */
export async function denoFmt(text: string, ext: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", `--ext=${ext}`, "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  if (!out.success) throw new Error(`deno fmt failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** The files `deno task docs` writes; `config/apis.yaml` is never one of them. */
export const GENERATED_FILES = [
  "README.md",
  "docs/TOOLS.md",
  "docs/CONFIGURATION.md",
  "config/apis.example.yaml",
  ".env.example",
  "manifest.json",
] as const;

/** Every generated file with its wanted content. */
export async function generated(): Promise<Record<string, string>> {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const toolsDoc = await Deno.readTextFile(new URL("docs/TOOLS.md", ROOT));
  const configuration = await Deno.readTextFile(new URL("docs/CONFIGURATION.md", ROOT));
  const tools = await publicTools();
  const files: Record<(typeof GENERATED_FILES)[number], string> = {
    "README.md": await denoFmt(replaceBetween(readme, "sources", await sourcesTable(tools)), "md"),
    "docs/TOOLS.md": await denoFmt(replaceBetween(toolsDoc, "tools", await toolsTable(tools)), "md"),
    "docs/CONFIGURATION.md": await denoFmt(replaceBetween(configuration, "config", configReference()), "md"),
    "config/apis.example.yaml": await denoFmt(apisExampleYaml(), "yaml"),
    ".env.example": envExample(),
    "manifest.json": await denoFmt(await manifestJson(), "json"),
  };
  return files;
}

if (import.meta.main) {
  const files = await generated();
  const stale: string[] = [];
  for (const [path, content] of Object.entries(files)) {
    const url = new URL(path, ROOT);
    let current = "";
    try {
      current = await Deno.readTextFile(url);
    } catch {
      // Missing counts as stale.
    }
    if (current !== content) {
      stale.push(path);
      if (!Deno.args.includes("--check")) await Deno.writeTextFile(url, content);
    }
  }
  if (Deno.args.includes("--check") && stale.length) {
    console.error(`Stale generated files: ${stale.join(", ")}; run deno task docs`);
    Deno.exit(1);
  }
  console.log(stale.length ? `Updated: ${stale.join(", ")}` : "Already up to date");
}
