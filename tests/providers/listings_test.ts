import assert from "node:assert/strict";
import { isSet, selectListing } from "../../lib/mcp/listing.ts";
import type { ListingFile, ProviderListing, ProviderListings } from "../../lib/mcp/listing.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import {
  CORE_SCHEMAS_PATH,
  generateCoreSchemas,
  generateListings,
  indentedJson,
  LISTINGS_PATH,
  renderCoreSchemas,
  renderListings,
  standaloneCoreTools,
} from "../../tools/listings.ts";
import { describeTool, toJsonSchema } from "../../lib/mcp/server.ts";

/** The first place two JSON values differ, as a path, for a readable failure. */
function firstDifference(a: unknown, b: unknown, path = ""): string | undefined {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return path || "/";
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const d = firstDifference(
      (a as Record<string, unknown>)[k],
      (b as Record<string, unknown>)[k],
      `${path}/${k}`,
    );
    if (d) return d;
  }
  return path || "/";
}

Deno.test("lib/providers/listings.json matches what the providers' code serves (deno task schemas)", async () => {
  const fresh = await generateListings();
  const stored = JSON.parse(await Deno.readTextFile(LISTINGS_PATH)) as ListingFile & { $comment: string };
  const { $comment: _, ...file } = stored;
  const where = firstDifference(file, fresh);
  assert.equal(where, undefined, `lib/providers/listings.json is stale at ${where}: run deno task schemas`);
  assert.equal(await Deno.readTextFile(LISTINGS_PATH), renderListings(fresh), "stale: run deno task schemas");
});

Deno.test("lib/mcp/core_schemas.json matches the core tools' zod schemas (deno task schemas)", () => {
  assert.equal(
    Deno.readTextFileSync(CORE_SCHEMAS_PATH),
    renderCoreSchemas(generateCoreSchemas()),
    "stale: run deno task schemas",
  );
});

Deno.test("the core tools are listed with the generated schemas, equal to converting their zod schemas", () => {
  const tools = standaloneCoreTools();
  for (const name of ["opendata_search", "opendata_describe"]) {
    const tool = tools.find((t) => t.name === name)!;
    assert.ok(tool.inputJsonSchema && tool.outputJsonSchema, `${name} carries generated schemas`);
    const { inputJsonSchema: _i, outputJsonSchema: _o, ...fromZod } = tool;
    const converted = describeTool(fromZod);
    const listed = describeTool(tool);
    assert.deepEqual(listed.inputSchema, converted.inputSchema, name);
    assert.deepEqual(listed.outputSchema, converted.outputSchema, name);
    assert.deepEqual(listed.outputSchema, toJsonSchema(tool.output!, "output"), name);
  }
});

Deno.test("PROVIDERS carry their listings with the module each loads", () => {
  for (const spec of PROVIDERS) {
    assert.ok(spec.listings, `${spec.id} has listings`);
    assert.equal(
      spec.listings.module,
      new URL(`../../lib/providers/${spec.id}/mod.ts`, import.meta.url).href,
    );
  }
});

Deno.test("the FRED listings switch on FRED_API_KEY: without it only the project tools, with it all twelve", () => {
  const fred = PROVIDERS.find((s) => s.id === "fred")!.listings!;
  assert.deepEqual(fred.switches, ["api_key"]);
  const settings = PROVIDERS.find((s) => s.id === "fred")!.schema.parse({}) as unknown as Record<
    string,
    unknown
  >;
  const context = { $character_limit: 25_000, $data_dir: "/nonexistent" };
  const keyless = selectListing(fred, settings, context)!;
  assert.deepEqual(keyless.tools.map((t) => t.tool.name), [
    "fred_project_list",
    "fred_project_create",
    "fred_project_files",
  ]);
  assert.deepEqual(keyless.unavailable?.map((u) => u.toolset), ["fred-data", "fred-jobs"]);
  assert.equal(keyless.search, undefined, "no series search without a key");
  assert.match(keyless.warnings.join("\n"), /FRED_API_KEY is not set/);
  const keyed = selectListing(fred, { ...settings, api_key: "k".repeat(32) }, context)!;
  assert.equal(keyed.tools.length, 12);
  assert.ok(keyed.search, "the series search with a key");
  assert.deepEqual(keyed.warnings, []);
  assert.ok(!JSON.stringify(keyed).includes("k".repeat(32)), "the key is in no listing");
});

const listing: ProviderListing = { toolsets: [], tools: [], warnings: [] };
const entry: ProviderListings = {
  module: "./x/mod.ts",
  fixed: { limit: 100, $character_limit: 25_000 },
  switches: ["key"],
  defaults: { limit: 100 },
  variants: [
    { when: { key: false }, listing: { ...listing, warnings: ["no key"] } },
    { when: { key: true }, listing },
  ],
};

Deno.test("selectListing() picks the variant of the switch settings and refuses another fixed value", () => {
  const context = { $character_limit: 25_000, $data_dir: "/d" };
  assert.deepEqual(selectListing(entry, { limit: 100, key: "" }, context)?.warnings, ["no key"]);
  assert.deepEqual(selectListing(entry, { limit: 100, key: "abc" }, context)?.warnings, []);
  assert.equal(selectListing(entry, { limit: 50, key: "" }, context), undefined, "a fixed setting changed");
  assert.equal(
    selectListing(entry, { limit: 100, key: "" }, { ...context, $character_limit: 1000 }),
    undefined,
    "the character limit is fixed too",
  );
});

Deno.test("isSet() counts empty strings, lists and null as not set", () => {
  assert.deepEqual(["", [], null, undefined, "x", ["a"], 0, false].map(isSet), [
    false,
    false,
    false,
    false,
    true,
    true,
    true,
    true,
  ]);
});

Deno.test("indentedJson() indents down to the given depth, writes deeper values on one line, and parses back the same", () => {
  const value = { a: [1, { b: { c: [2, 3] } }], d: {}, e: [], f: "x\ny", g: undefined };
  assert.equal(
    indentedJson(value, 2),
    '{\n  "a": [\n    1,\n    {"b":{"c":[2,3]}}\n  ],\n  "d": {},\n  "e": [],\n  "f": "x\\ny"\n}',
  );
  assert.equal(indentedJson(value, 0), JSON.stringify(value));
  for (const depth of [0, 1, 2, 3, 9]) {
    assert.deepEqual(JSON.parse(indentedJson(value, depth)), JSON.parse(JSON.stringify(value)));
  }
});
