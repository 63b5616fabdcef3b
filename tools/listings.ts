// `deno task schemas`: writes lib/providers/listings.json, what every provider serves (tools with
// their JSON Schemas as tools/list gives them, toolsets, search source, resources, prompts, the
// warnings its creation logs), so the server lists tools without loading provider code or
// converting schemas. tests/providers/listings_test.ts fails when the file is stale.
//
// What a provider serves may depend on its settings. Each setting (and the character limit and
// data folder of the provider context) is varied over a few valid values and the provider
// created again: a setting that changes nothing is ignored; one whose presence alone matters
// (an API key) becomes a switch with one listing per state; any other that matters is fixed
// at its default, and a server configured otherwise creates that provider at start-up.
import { z } from "zod";
import { FakeClock } from "../lib/clock.ts";
import { serverSchema } from "../lib/config/parse.ts";
import type { ProviderSpec } from "../lib/config/provider_spec.ts";
import { HttpRuntime, loadHttpClient } from "../lib/http/runtime.ts";
import { isSet, listProvider } from "../lib/mcp/listing.ts";
import type { ListingContext, ListingFile, ProviderListing, ProviderListings } from "../lib/mcp/listing.ts";
import { describeTool } from "../lib/mcp/server.ts";
import { coreTools } from "../lib/mcp/core_tools.ts";
import { ToolCatalog } from "../lib/mcp/toolsets.ts";
import type { ToolDefinition } from "../lib/mcp/provider.ts";
import { Logger } from "../lib/log.ts";
import { PROVIDER_SPECS } from "../lib/providers/registry.ts";

/** Where the generated file lives. */
export const LISTINGS_PATH = new URL("../lib/providers/listings.json", import.meta.url);
/** Where the core tools' generated JSON Schemas live. */
export const CORE_SCHEMAS_PATH = new URL("../lib/mcp/core_schemas.json", import.meta.url);
const REGISTRY_URL = new URL("../lib/providers/registry.ts", import.meta.url).href;

/** The data folder the listings are made with (providers do not touch it when created). */
const DATA_DIR = "/nonexistent/opendata-mcp-listings";

type Settings = Record<string, unknown>;

/** Creates the provider with these settings and lists what it serves. */
async function listingOf(
  spec: ProviderSpec,
  settings: Settings,
  context: ListingContext,
): Promise<ProviderListing> {
  const warnings: string[] = [];
  const logger = new Logger({
    level: "warn",
    write: (line) => {
      const { level, msg } = JSON.parse(line) as { level: string; msg: string };
      if (level === "warn") warnings.push(msg);
    },
  });
  const clock = new FakeClock();
  const module = await spec.load();
  await loadHttpClient();
  const provider = await module.createProvider({
    settings: settings as never,
    http: new HttpRuntime({ clock, logger }),
    logger: logger.child({ provider: spec.id }),
    clock,
    limits: { characterLimit: context.$character_limit },
    dataDir: context.$data_dir,
  });
  try {
    return listProvider(provider, warnings, describeTool);
  } finally {
    await provider.close?.();
  }
}

/** A few valid values of a setting other than its default, to see whether they change the listing. */
function candidates(spec: ProviderSpec, defaults: Settings, key: string): unknown[] {
  const value = defaults[key];
  const raw: unknown[] = [];
  if (typeof value === "boolean") raw.push(!value);
  if (typeof value === "number") {
    raw.push(value + 1, value * 2, value - 1, Math.floor(value / 2), 0, 1, 7, 1000, 0.5);
  }
  if (typeof value === "string") {
    raw.push("", "x", "abcdefghijklmnopqrstuvwxyz012345", "http://127.0.0.1:9/v9", "de", "./elsewhere");
  }
  if (Array.isArray(value)) raw.push([], ["x"], ["de"], value.slice(0, 1));
  if (value === null) raw.push("x", 1, true);
  const json = z.toJSONSchema(spec.schema, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, { enum?: unknown[]; minimum?: number; maximum?: number }>;
  };
  const prop = json.properties?.[key] ?? {};
  raw.push(...(prop.enum ?? []));
  if (prop.minimum !== undefined) raw.push(prop.minimum);
  if (prop.maximum !== undefined) raw.push(prop.maximum);
  const seen = new Set([JSON.stringify(value)]);
  const out: unknown[] = [];
  for (const v of raw) {
    const k = JSON.stringify(v);
    if (seen.has(k)) continue;
    seen.add(k);
    if (spec.schema.safeParse({ ...defaults, [key]: v }).success) out.push(v);
  }
  // Every value of an enum; a few of anything else.
  return prop.enum ? out : out.slice(0, 4);
}

/** The settings after validation (defaults filled in, values normalized). */
function parsed(spec: ProviderSpec, settings: Settings): Settings {
  return spec.schema.parse(settings) as unknown as Settings;
}

/** One provider's entry: which settings matter, and a listing per switch state. */
export async function providerListings(spec: ProviderSpec): Promise<ProviderListings> {
  const module = `./${spec.id}/mod.ts`;
  if ((await import(new URL(module, REGISTRY_URL).href)) !== await spec.load()) {
    throw new Error(
      `The provider "${spec.id}" does not load ${module}: keep each provider's code in <id>/mod.ts`,
    );
  }
  const defaults = parsed(spec, {});
  const context: ListingContext = {
    $character_limit: serverSchema().parse({}).character_limit,
    $data_dir: DATA_DIR,
  };
  const contextCandidates: Record<keyof ListingContext, unknown[]> = {
    $character_limit: [2000, 100_000],
    $data_dir: ["/nonexistent/elsewhere"],
  };
  const keys = [...Object.keys(defaults), ...Object.keys(contextCandidates)];
  const valuesOf = (key: string): unknown[] =>
    key in contextCandidates
      ? contextCandidates[key as keyof ListingContext]
      : candidates(spec, defaults, key);
  const run = (settings: Settings, ctx: ListingContext): Promise<string> =>
    listingOf(spec, settings, ctx).then((l) => JSON.stringify(l));
  const varied = (base: Settings, key: string, value: unknown): [Settings, ListingContext] =>
    key in contextCandidates
      ? [base, { ...context, [key]: value }]
      : [parsed(spec, { ...base, [key]: value }), context];

  const fixed: Record<string, unknown> = {};
  const switches: { key: string; on: unknown }[] = [];
  const base = await run(defaults, context);
  for (const key of keys) {
    const values = valuesOf(key);
    const results = await Promise.all(values.map((v) => run(...varied(defaults, key, v))));
    if (results.every((r) => r === base)) continue;
    const setOnes = values.map((v, i) => [v, results[i]!] as const).filter(([v]) => isSet(v));
    const unsetDiffers = results.some((r, i) => !isSet(values[i]) && r !== base);
    if (
      !isSet(defaults[key]) && !unsetDiffers && setOnes.length > 0 &&
      setOnes.every(([, r]) => r === setOnes[0]![1])
    ) {
      switches.push({ key, on: setOnes[0]![0] });
    } else {
      fixed[key] = key in context ? context[key as keyof ListingContext] : defaults[key];
    }
  }
  if (switches.length > 3) {
    throw new Error(`The provider "${spec.id}" has ${switches.length} switch settings`);
  }

  const variants = [];
  for (let mask = 0; mask < 1 << switches.length; mask++) {
    let settings = defaults;
    const when: Record<string, boolean> = {};
    switches.forEach((s, i) => {
      const on = (mask & (1 << i)) !== 0;
      when[s.key] = on;
      if (on) settings = parsed(spec, { ...settings, [s.key]: s.on });
    });
    if (mask !== 0) {
      // With a switch on, the other settings may matter where they did not before.
      const variantBase = await run(settings, context);
      for (const key of keys) {
        if (key in fixed || switches.some((s) => s.key === key)) continue;
        for (const v of valuesOf(key)) {
          if (await run(...varied(settings, key, v)) !== variantBase) {
            fixed[key] = key in context ? context[key as keyof ListingContext] : defaults[key];
            break;
          }
        }
      }
    }
    variants.push({ when, listing: await listingOf(spec, settings, context) });
  }
  return { module, fixed, switches: switches.map((s) => s.key), defaults, variants };
}

/** Every provider's listings. */
export async function generateListings(
  specs: readonly ProviderSpec[] = PROVIDER_SPECS,
): Promise<ListingFile> {
  const providers: ListingFile["providers"] = {};
  for (const spec of specs) providers[spec.id] = await providerListings(spec);
  return { providers };
}

/**
 * The file's text: one provider variant per block and one tool, toolset or resource per line,
 * stable for diffs. Indenting inside each tool's schemas too made the file 2.5 times as large,
 * and every start reads it (2-3 ms of a start, docs/BENCHMARKS.md).
 */
export function renderListings(file: ListingFile): string {
  return `${
    indentedJson(
      {
        $comment:
          "Generated by `deno task schemas` (tools/listings.ts) from the providers' code: do not edit. tests/providers/listings_test.ts fails when it is stale.",
        ...file,
      },
      // root, providers, a provider, its variants, a variant, its listing, a list in the listing
      7,
    )
  }\n`;
}

/**
 * JSON indented by two spaces down to `depth` levels of nesting, each value below that on one
 * line; parses to the same value as `JSON.stringify(value)`.
 */
export function indentedJson(value: unknown, depth: number, indent = ""): string {
  if (depth <= 0 || value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}  `;
  const entries = Array.isArray(value)
    ? value.map((v) => indentedJson(v, depth - 1, inner))
    : Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k, v]) =>
      `${JSON.stringify(k)}: ${indentedJson(v, depth - 1, inner)}`
    );
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return `${open}${close}`;
  return `${open}\n${inner}${entries.join(`,\n${inner}`)}\n${indent}${close}`;
}

/** The core tools of a server without providers (their schemas do not depend on them). */
// deno-lint-ignore no-explicit-any
export function standaloneCoreTools(): ToolDefinition<any, any>[] {
  return coreTools({
    catalog: new ToolCatalog([]),
    providers: [],
    served: new Set(),
    searchTimeoutMs: 1000,
    clock: new FakeClock(),
    inputSchemaOf: () => ({}),
  });
}

/**
 * The JSON Schemas the core tools are listed with, converted from their zod schemas as
 * tools/list would without the generated file (opendata_call's input is written by hand).
 */
export function generateCoreSchemas(): {
  tools: Record<string, { inputSchema: unknown; outputSchema: unknown }>;
} {
  const tools = standaloneCoreTools();
  const out: Record<string, { inputSchema: unknown; outputSchema: unknown }> = {};
  for (const tool of tools) {
    if (!tool.outputJsonSchema) continue;
    const { inputJsonSchema: _input, outputJsonSchema: _output, ...fromZod } = tool;
    const listed = describeTool(fromZod);
    out[tool.name] = { inputSchema: listed.inputSchema, outputSchema: listed.outputSchema };
  }
  return { tools: out };
}

/** The core schemas file's text. */
export function renderCoreSchemas(file: ReturnType<typeof generateCoreSchemas>): string {
  return `${
    JSON.stringify(
      {
        $comment:
          "Generated by `deno task schemas` (tools/listings.ts) from lib/mcp/core_tools.ts: do not edit. tests/providers/listings_test.ts fails when it is stale.",
        ...file,
      },
      null,
      2,
    )
  }\n`;
}

if (import.meta.main) {
  const files: [URL, string][] = [
    [LISTINGS_PATH, renderListings(await generateListings())],
    [CORE_SCHEMAS_PATH, renderCoreSchemas(generateCoreSchemas())],
  ];
  for (const [path, text] of files) {
    const name = path.pathname.slice(path.pathname.indexOf("/lib/") + 1);
    if (Deno.args.includes("--check")) {
      const current = await Deno.readTextFile(path).catch(() => "");
      if (current !== text) {
        console.error(`${name} is stale: run deno task schemas`);
        Deno.exit(1);
      }
    } else {
      await Deno.writeTextFile(path, text);
      console.log(`Wrote ${name} (${text.length} characters)`);
    }
  }
}
