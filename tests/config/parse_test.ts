import assert from "node:assert/strict";
import { z } from "zod";
import {
  configSecrets,
  knownEnvNames,
  parseConfig,
  redactConfig,
  SERVER_DEFAULTS,
  serverSchema,
} from "../../lib/config/parse.ts";
import type { ConfigInput } from "../../lib/config/parse.ts";
import { defineProvider } from "../../lib/config/provider_spec.ts";
import type { ProviderSpec } from "../../lib/config/provider_spec.ts";
import { ConfigError } from "../../lib/errors.ts";
import { exampleSpec } from "../../lib/providers/example/config.ts";
import { loadYaml } from "../../lib/config/yaml.ts";
import { USER_AGENT, userAgent } from "../../lib/version.ts";

// parseConfig() reads config text with the YAML parser, which loads on demand.
await loadYaml();

const demo = defineProvider({
  id: "demo",
  title: "Demo",
  description: "A provider for config tests",
  common: { base_url: "https://demo.example.org/api", timeout: 10, max_retries: 2 },
  extra: {
    api_key: z.string().nullable().default(null).describe("Secret key"),
    language: z.enum(["en", "no"]).default("no").describe("Default language"),
  },
  env: [
    { name: "DEMO_BASE_URL", key: "base_url", kind: "string", description: "Base URL" },
    { name: "DEMO_TIMEOUT_MS", key: "timeout", kind: "ms_to_s", description: "Timeout in ms" },
    { name: "DEMO_RETRY_MAX", key: "max_retries", kind: "int", description: "Retries" },
    { name: "DEMO_API_KEY", key: "api_key", kind: "string", description: "Key" },
  ],
  flags: [{ name: "demo-timeout-ms", key: "timeout", kind: "ms_to_s", description: "Timeout in ms" }],
  secrets: ["api_key"],
  load: () => Promise.reject<never>(new Error("not loaded in config tests")),
});
const geo = defineProvider({
  id: "geo",
  title: "Geo",
  description: "A slow provider",
  common: { base_url: "https://geo.example.org", timeout: 60 },
  defaultTimeoutEnv: "GEO_API_TIMEOUT",
  load: () => Promise.reject<never>(new Error("not loaded")),
});
const SPECS = [demo, geo, exampleSpec] as unknown as ProviderSpec[];

function parse(input: Partial<ConfigInput>): ReturnType<typeof parseConfig> {
  return parseConfig({ flags: {}, env: {}, ...input }, SPECS);
}

function throwsAt(fn: () => unknown, path: string, message: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
    assert.equal(e.path, path);
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("parseConfig() uses built-in defaults and enables every default provider", () => {
  const config = parse({});
  assert.deepEqual(config.enabledProviders, ["demo", "geo"], "example is not enabled by default");
  assert.equal(config.providers["demo"]?.timeout, 10);
  assert.equal(config.providers["demo"]?.["language"], "no");
  assert.equal(config.server.transport, "stdio");
  assert.equal(config.server.http_port, 8000);
  assert.equal(config.server.character_limit, 25_000);
  assert.equal(config.file, null);
});

Deno.test("parseConfig() applies precedence flags > env > file > defaults", () => {
  const fileText = "providers:\n  demo:\n    timeout: 20\n    max_retries: 4\n";
  const fromFile = parse({ fileText });
  assert.equal(fromFile.providers["demo"]?.timeout, 20);
  const fromEnv = parse({ fileText, env: { DEMO_TIMEOUT_MS: "5000" } });
  assert.equal(fromEnv.providers["demo"]?.timeout, 5, "milliseconds in the variable, seconds in the config");
  assert.equal(fromEnv.providers["demo"]?.max_retries, 4, "untouched keys keep the file value");
  const fromFlag = parse({
    fileText,
    env: { DEMO_TIMEOUT_MS: "5000" },
    flags: { "demo-timeout-ms": "1500" },
  });
  assert.equal(fromFlag.providers["demo"]?.timeout, 1.5);
  const server = parse({
    fileText: "server:\n  http_port: 9000\n  log_level: INFO\n",
    env: { MCP_HTTP_PORT: "9100" },
    flags: { port: "9200" },
  });
  assert.equal(server.server.http_port, 9200);
  assert.equal(server.server.log_level, "info", "log levels are case-insensitive");
});

Deno.test("parseConfig() lets DEFAULT_TIMEOUT and a provider's own default-timeout variable replace built-in defaults", () => {
  const config = parse({ env: { DEFAULT_TIMEOUT: "45", GEO_API_TIMEOUT: "90" } });
  assert.equal(config.providers["demo"]?.timeout, 45);
  assert.equal(config.providers["geo"]?.timeout, 90);
  const fileWins = parse({
    env: { DEFAULT_TIMEOUT: "45" },
    fileText: "providers:\n  demo:\n    timeout: 12\n",
  });
  assert.equal(fileWins.providers["demo"]?.timeout, 12, "a value set in the file is not a default");
});

Deno.test("parseConfig() takes enabled providers from flags, then env, then the file", () => {
  assert.deepEqual(parse({ fileText: "enabled_providers: [geo]" }).enabledProviders, ["geo"]);
  assert.deepEqual(
    parse({ fileText: "enabled_providers: [geo]", env: { OPENDATA_MCP_PROVIDERS: "demo" } }).enabledProviders,
    ["demo"],
  );
  assert.deepEqual(
    parse({ env: { OPENDATA_MCP_PROVIDERS: "demo" }, flags: { providers: "example, geo" } }).enabledProviders,
    ["example", "geo"],
  );
});

Deno.test("parseConfig() skips an unknown enabled provider with a warning", () => {
  const config = parse({ fileText: "enabled_providers: [demo, nonsense]" });
  assert.deepEqual(config.enabledProviders, ["demo"]);
  assert.equal(config.warnings.length, 1);
  assert.match(
    config.warnings[0]!,
    /Unknown provider "nonsense".*skipped.*known providers: demo, geo, example/,
  );
});

Deno.test("parseConfig() names the key, the bad value and the source of every invalid value", () => {
  throwsAt(
    () => parse({ fileText: "providers:\n  demo:\n    timeout: -3\n" }),
    "providers.demo.timeout",
    /Invalid "providers.demo.timeout" \(providers.demo.timeout in the config file\).*got -3/,
  );
  throwsAt(
    () => parse({ env: { DEMO_TIMEOUT_MS: "abc" } }),
    "DEMO_TIMEOUT_MS",
    /Cannot parse DEMO_TIMEOUT_MS: expected a whole number of milliseconds, got "abc"/,
  );
  throwsAt(
    () => parse({ env: { DEMO_RETRY_MAX: "99" } }),
    "providers.demo.max_retries",
    /environment variable DEMO_RETRY_MAX.*got 99/,
  );
  throwsAt(
    () => parse({ fileText: "providers:\n  demo:\n    language: de\n" }),
    "providers.demo.language",
    /expected one of "en"\|"no"/,
  );
  throwsAt(() => parse({ flags: { port: "eighty" } }), "--port", /expected an integer, got "eighty"/);
  throwsAt(() => parse({ env: { MCP_TRANSPORT: "carrier-pigeon" } }), "server.transport", /"stdio"\|"http"/);
  throwsAt(() => parse({ env: { RATE_LIMIT_ENABLED: "maybe" } }), "RATE_LIMIT_ENABLED", /true or false/);
  throwsAt(
    () => parse({ fileText: "providers:\n  demo:\n    base_url: not a url\n" }),
    "providers.demo.base_url",
    /base_url/,
  );
});

Deno.test("parseConfig() rejects unknown keys with their path", () => {
  throwsAt(() => parse({ fileText: "colour: blue\n" }), "colour", /Unknown key "colour"/);
  throwsAt(
    () => parse({ fileText: "providers:\n  demo:\n    timout: 5\n" }),
    "providers.demo.timout",
    /Unknown key "providers.demo.timout".*allowed keys: base_url, timeout/,
  );
  throwsAt(() => parse({ fileText: "server:\n  prot: 1\n" }), "server.prot", /Unknown key "server.prot"/);
  throwsAt(() => parse({ fileText: "tools:\n  only: [x]\n" }), "tools.only", /Unknown key "tools.only"/);
});

Deno.test("parseConfig() ignores an unknown providers.<name> block with a warning (skip, do not stop)", () => {
  const config = parse({
    fileText: "providers:\n  wikipedai:\n    timeout: 5\n  demo:\n    timeout: 7\n",
    filePath: "config/apis.yaml",
  });
  assert.deepEqual(config.warnings, [
    'Unknown provider "wikipedai" under "providers" in the config file config/apis.yaml was ignored; ' +
    "known providers: demo, geo, example",
  ]);
  assert.equal(config.providers["demo"]!.timeout, 7, "the known block still applies");
  assert.ok(!("wikipedai" in config.providers));
});

Deno.test("parseConfig() reports YAML syntax errors and wrong shapes", () => {
  throwsAt(
    () => parse({ fileText: "providers: [unclosed\n" }),
    "<file>",
    /Cannot parse the config file as YAML/,
  );
  throwsAt(() => parse({ fileText: "enabled_providers: demo\n" }), "enabled_providers", /expected array/);
  assert.deepEqual(parse({ fileText: "# only a comment\n" }).enabledProviders, ["demo", "geo"]);
});

Deno.test("parseConfig() reads plain values as YAML 1.2's core schema does: 2024_06 and 0b101 stay text", () => {
  const config = parse({
    fileText: "server:\n  name: 2024_06\n  version: 0b101\n" +
      "providers:\n  demo:\n    timeout: 1.5e1\n    max_retries: 0o3\n    api_key: 1_000\n",
  });
  assert.equal(config.server.name, "2024_06", "digits with underscores are text, not 202406");
  assert.equal(config.server.version, "0b101", "0b is no number prefix in YAML 1.2");
  assert.equal(config.providers["demo"]!.timeout, 15);
  assert.equal(config.providers["demo"]!.max_retries, 3, "0o is YAML 1.2's octal");
  assert.equal(config.providers["demo"]!["api_key"], "1_000");
  const numbers = parse({ fileText: "providers:\n  demo:\n    timeout: .5\n  geo:\n    timeout: +2.\n" });
  assert.equal(numbers.providers["demo"]!.timeout, 0.5);
  assert.equal(numbers.providers["geo"]!.timeout, 2);
});

Deno.test("parseConfig() validates a disabled provider's file block but not its variables", () => {
  throwsAt(
    () => parse({ fileText: "enabled_providers: [geo]\nproviders:\n  demo:\n    timeout: zero\n" }),
    "providers.demo.timeout",
    /expected number/,
  );
  const config = parse({ fileText: "enabled_providers: [geo]", env: { DEMO_TIMEOUT_MS: "abc" } });
  assert.deepEqual(Object.keys(config.providers), ["geo"]);
});

Deno.test("parseConfig() reads tool filters from flags before the file", () => {
  const config = parse({ fileText: "tools:\n  exclude: [a]\n", flags: { tools: "x-*,y" } });
  assert.deepEqual(config.tools, { include: ["x-*", "y"], exclude: ["a"] });
});

Deno.test("redactConfig() and configSecrets() keep secrets out of config check output", () => {
  const config = parse({ env: { DEMO_API_KEY: "supersecretkey123", MCP_AUTH_TOKEN: "tok-abcdef" } });
  const printed = JSON.stringify(redactConfig(config, SPECS));
  assert.ok(!printed.includes("supersecretkey123"));
  assert.ok(!printed.includes("tok-abcdef"));
  assert.match(printed, /"api_key":"\*\*\*"/);
  assert.deepEqual(configSecrets(config, SPECS).sort(), ["supersecretkey123", "tok-abcdef"]);
});

Deno.test("parseConfig() reads the OAuth and write settings; the introspection secret is redacted", () => {
  const config = parse({
    env: {
      MCP_OAUTH_ISSUER: "https://login.example.com/realms/main",
      MCP_OAUTH_SCOPES: "mcp:tools, mcp:read",
      MCP_OAUTH_CLIENT_ID: "rs",
      MCP_OAUTH_CLIENT_SECRET: "introspection-secret-1",
      MCP_PUBLIC_URL: "https://mcp.example.com",
      MCP_WRITES: "Bounded",
    },
  });
  assert.equal(config.server.oauth_issuer, "https://login.example.com/realms/main");
  assert.deepEqual(config.server.oauth_scopes, ["mcp:tools", "mcp:read"]);
  assert.equal(config.server.writes, "bounded");
  assert.ok(!JSON.stringify(redactConfig(config, SPECS)).includes("introspection-secret-1"));
  assert.deepEqual(configSecrets(config, SPECS), ["introspection-secret-1"]);
  assert.throws(() => parse({ env: { MCP_WRITES: "sometimes" } }), /server\.writes/);
  assert.equal(parse({}).server.structured_content, "on");
  assert.equal(parse({ env: { MCP_STRUCTURED_CONTENT: "Off" } }).server.structured_content, "off");
  assert.equal(parse({ flags: { "structured-content": "off" } }).server.structured_content, "off");
  assert.throws(() => parse({ env: { MCP_STRUCTURED_CONTENT: "half" } }), /server\.structured_content/);
  assert.throws(() => parse({ env: { MCP_OAUTH_ISSUER: "not a url" } }), /server\.oauth_issuer/);
});

Deno.test("knownEnvNames() lists every variable of the server and the providers once", () => {
  const names = knownEnvNames(SPECS);
  for (const n of ["MCP_TRANSPORT", "DEFAULT_TIMEOUT", "GEO_API_TIMEOUT", "DEMO_TIMEOUT_MS", "HOME"]) {
    assert.ok(names.includes(n), n);
  }
  assert.equal(new Set(names).size, names.length);
});

Deno.test("a provider the configuration leaves alone takes its generated defaults (equal to its schema's), a copy each time", async () => {
  const { PROVIDERS } = await import("../../lib/providers/registry.ts");
  const all = PROVIDERS.map((s) => s.id).join(",");
  const a = parseConfig({ env: { OPENDATA_MCP_PROVIDERS: all }, flags: {} }, PROVIDERS);
  const b = parseConfig({ env: { OPENDATA_MCP_PROVIDERS: all }, flags: {} }, PROVIDERS);
  for (const spec of PROVIDERS) {
    assert.ok(spec.listings, `${spec.id} has listings`);
    assert.deepEqual(spec.listings.defaults, spec.schema.parse({}), `${spec.id}: run deno task schemas`);
    assert.deepEqual(a.providers[spec.id], spec.schema.parse({}), spec.id);
    assert.notEqual(a.providers[spec.id], b.providers[spec.id], `${spec.id}: each parse has its own copy`);
    assert.notEqual(a.providers[spec.id], spec.listings.defaults, `${spec.id}: the listings stay untouched`);
  }
});

Deno.test("a provider with a setting is validated by its schema, not given the generated defaults", async () => {
  const { PROVIDERS } = await import("../../lib/providers/registry.ts");
  const bad = (): unknown =>
    parseConfig({ env: { OPENDATA_MCP_PROVIDERS: "boj", BOJ_RETRY_MAX: "50" }, flags: {} }, PROVIDERS);
  assert.throws(
    bad,
    (e: unknown) => e instanceof ConfigError && /providers\.boj\.max_retries/.test(e.message),
  );
  const config = parseConfig(
    { env: { OPENDATA_MCP_PROVIDERS: "boj", BOJ_TIMEOUT_MS: "5000" }, flags: {} },
    PROVIDERS,
  );
  assert.equal(config.providers["boj"]!.timeout, 5);
  assert.equal(config.providers["boj"]!.base_url, "https://www.stat-search.boj.or.jp");
});

Deno.test("SERVER_DEFAULTS are what the server schema fills in; a start that sets nothing gets its own copy", () => {
  assert.deepEqual(serverSchema().parse({}), SERVER_DEFAULTS);
  const a = parseConfig({ env: {}, flags: {} }, [exampleSpec]).server;
  const b = parseConfig({ env: {}, flags: {} }, [exampleSpec]).server;
  assert.deepEqual(a, SERVER_DEFAULTS);
  assert.notEqual(a, SERVER_DEFAULTS);
  assert.notEqual(a.allowed_origins, b.allowed_origins);
  // One setting and the whole block goes through the schema, with its error naming the source.
  assert.throws(
    () => parseConfig({ env: { MCP_HTTP_PORT: "70000" }, flags: {} }, [exampleSpec]),
    (e: unknown) =>
      e instanceof ConfigError && /server\.http_port/.test(e.message) && /MCP_HTTP_PORT/.test(e.message),
  );
});

Deno.test("parseConfig() reads MCP_REQUEST_STATE_KEY (32+ characters), keeps it secret and refuses a short one", () => {
  const key = "k".repeat(32);
  const config = parse({ env: { MCP_REQUEST_STATE_KEY: key } });
  assert.equal(config.server.request_state_key, key);
  assert.ok(!JSON.stringify(redactConfig(config, SPECS)).includes(key));
  assert.ok(configSecrets(config, SPECS).includes(key));
  assert.equal(parse({}).server.request_state_key, null, "no key: a random one per process");
  throwsAt(
    () => parse({ env: { MCP_REQUEST_STATE_KEY: "too-short" } }),
    "server.request_state_key",
    /32/,
  );
});

Deno.test("parseConfig() reads OPENDATA_MCP_CONTACT into the upstream User-Agent and refuses a header-breaking one", () => {
  const config = parse({ env: { OPENDATA_MCP_CONTACT: " ops@example.org " } });
  assert.equal(config.server.operator_contact, "ops@example.org");
  assert.equal(userAgent(config.server.operator_contact), `${USER_AGENT.slice(0, -1)}; ops@example.org)`);
  assert.equal(
    userAgent(parse({}).server.operator_contact),
    USER_AGENT,
    "no contact: the project and its URL",
  );
  assert.match(USER_AGENT, /^opendata-mcp\/\S+ \(\+https:\/\/\S+\)$/);
  throwsAt(
    () => parse({ env: { OPENDATA_MCP_CONTACT: "me (boss)" } }),
    "server.operator_contact",
    /parenthes/,
  );
  throwsAt(
    () => parse({ env: { OPENDATA_MCP_CONTACT: "a\u00e6b@x.no" } }),
    "server.operator_contact",
    /ASCII/,
  );
});
