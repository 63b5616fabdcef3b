import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/parse.ts";
import { plainSettings } from "../../lib/config/provider_spec.ts";
import { loadYaml } from "../../lib/config/yaml.ts";
import { ConfigError } from "../../lib/errors.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";

await loadYaml();

// Values for every common key: inside, at and past each range's ends, of other types, NaN,
// infinities, fractions where integers are asked for.
const SAMPLES: unknown[] = [
  -1,
  -0.5,
  0,
  0.5,
  1,
  2,
  10,
  11,
  60,
  1000,
  1001,
  3600,
  3601,
  60_000,
  60_001,
  86_400,
  86_401,
  604_800,
  604_801,
  1024,
  1025,
  2 ** 53,
  NaN,
  Infinity,
  "5",
  true,
  null,
  [],
  {},
];

Deno.test("plainSettings() takes only what each provider's schema takes, and gives what it gives", () => {
  for (const spec of PROVIDERS) {
    const defaults = spec.listings!.defaults;
    for (const key of Object.keys(defaults)) {
      for (const value of [...SAMPLES, defaults[key], "https://example.org", "no"]) {
        const plain = plainSettings(spec, defaults, { [key]: value });
        if (plain === undefined) continue;
        const parsed = spec.schema.safeParse({ [key]: value });
        assert.ok(
          parsed.success,
          `${spec.id}.${key} = ${String(value)} taken without the schema, which rejects it`,
        );
        assert.deepEqual(plain, parsed.data, `${spec.id}.${key} = ${String(value)}`);
      }
    }
  }
});

Deno.test("plainSettings() leaves unknown keys and non-default provider values to the schema", () => {
  const wikipedia = PROVIDERS.find((s) => s.id === "wikipedia")!;
  const defaults = wikipedia.listings!.defaults;
  assert.equal(plainSettings(wikipedia, defaults, { nope: 1 }), undefined);
  assert.equal(plainSettings(wikipedia, defaults, { default_language: "en" }), undefined);
  assert.equal(plainSettings(wikipedia, defaults, { base_url: "https://{lang}.example.org" }), undefined);
  assert.deepEqual(plainSettings(wikipedia, defaults, { timeout: 12 }), { ...defaults, timeout: 12 });
});

Deno.test("parseConfig() gives every provider block of a file exactly what its schema gives", () => {
  // Every key of every provider, half at a non-default common value (taken without the schema),
  // the rest at their defaults; a block that sets a provider's own key to another value goes to
  // the schema.
  const blocks: Record<string, Record<string, unknown>> = {};
  for (const spec of PROVIDERS) {
    blocks[spec.id] = { ...spec.listings!.defaults, timeout: 7, max_retries: 1, cache_ttl: 0 };
  }
  blocks["boj"] = { file_max_requests: 7 };
  const fileText = JSON.stringify({
    enabled_providers: PROVIDERS.map((s) => s.id),
    toolsets: ["core"],
    tools: { exclude: ["x"] },
    server: { log_level: "warn" },
    providers: { ...blocks, geonorge: null },
  });
  const config = parseConfig({ fileText, env: {}, flags: {} }, PROVIDERS);
  for (const spec of PROVIDERS) {
    const block = spec.id === "geonorge" ? {} : blocks[spec.id]!;
    assert.deepEqual(config.providers[spec.id], spec.schema.parse(block), spec.id);
  }
  assert.equal(config.server.log_level, "warn");
  assert.deepEqual(config.tools, { include: [], exclude: ["x"] });
});

Deno.test("parseConfig() still names the key of a value out of range or of the wrong shape", () => {
  const fail = (fileText: string): string => {
    try {
      parseConfig({ fileText, env: {}, flags: {} }, PROVIDERS);
    } catch (e) {
      assert.ok(e instanceof ConfigError);
      return e.message;
    }
    throw new Error("parsed");
  };
  assert.match(fail("providers:\n  boj:\n    timeout: 0\n"), /Invalid "providers\.boj\.timeout" .*got 0/);
  assert.match(fail("providers:\n  boj:\n    max_retries: 1.5\n"), /providers\.boj\.max_retries/);
  assert.match(fail("providers:\n  boj:\n    nope: 1\n"), /Unknown key "providers\.boj\.nope"/);
  assert.match(fail("enabled_providers: worldbank\n"), /Invalid "enabled_providers"/);
  assert.match(fail("tools:\n  only: [a]\n"), /Unknown key "tools\.only"/);
  assert.match(fail("providers:\n  boj: [1]\n"), /Invalid "providers\.boj"/);
});

Deno.test("parseConfig() takes FRED's api_key from the file or FRED_API_KEY without building FRED's schema, as the schema gives it", () => {
  const fred = PROVIDERS.find((s) => s.id === "fred")!;
  let built = 0;
  const counted = Object.create(
    Object.getPrototypeOf(fred),
    {
      ...Object.getOwnPropertyDescriptors(fred),
      schema: { get: () => (built++, fred.schema) },
    },
  ) as typeof fred;
  const specs = PROVIDERS.map((s) => s === fred ? counted : s);
  const key = "0123456789abcdef".repeat(2);
  const fromFile = parseConfig({
    fileText: `providers:\n  fred:\n    api_key: "${key}"\n`,
    env: {},
    flags: {},
  }, specs);
  const fromEnv = parseConfig({ env: { FRED_API_KEY: key }, flags: {} }, specs);
  assert.equal(built, 0, "the schema was not built");
  assert.deepEqual(fromFile.providers["fred"], fred.schema.parse({ api_key: key }));
  assert.deepEqual(fromEnv.providers["fred"], fred.schema.parse({ api_key: key }));
  assert.throws(
    () => parseConfig({ fileText: "providers:\n  fred:\n    api_key: 123\n", env: {}, flags: {} }, specs),
    (e: Error) => e instanceof ConfigError && /providers\.fred\.api_key/.test(e.message),
  );
  assert.equal(built, 1, "a value of another type goes to the schema");
});
