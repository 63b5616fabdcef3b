import { providerTools } from "../harness/results.ts";
import assert from "node:assert/strict";
import { runCli } from "../harness/spawn.ts";

Deno.test("cli tools --json lists the served tools with their schemas", async () => {
  const r = await runCli(["tools", "--providers", "example", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const tools = JSON.parse(r.stdout) as { name: string; inputSchema: { type: string } }[];
  assert.deepEqual(providerTools(tools).map((t) => t.name), ["example-ping", "example-echo"]);
  assert.equal(tools[0]!.inputSchema.type, "object");
});

Deno.test("cli accepts global flags after the command and applies tool filters", async () => {
  const r = await runCli(["tools", "--providers", "example", "--exclude-tools", "*-echo"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /example-ping/);
  assert.doesNotMatch(r.stdout, /example-echo/);
});

Deno.test("cli call exits 1 and prints the error text when the result is an error", async () => {
  const r = await runCli(["call", "example-ping", "--providers", "example", "--args", '{"x":1}']);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /Error \(VALIDATION_ERROR\): Invalid arguments: Unknown argument "x"/);
  const json = await runCli(["call", "example-ping", "--providers", "example", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout).structuredContent, { pong: true });
});

Deno.test("cli call refuses bad --args JSON and unknown tools with exit 2", async () => {
  const bad = await runCli(["call", "example-echo", "--providers", "example", "--args", "{nope"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Cannot parse --args as JSON/);
  const unknown = await runCli(["call", "nope", "--providers", "example"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown tool "nope"; tools: example-ping, example-echo/);
});

Deno.test("cli exits 2 naming the key for a bad config value and skips unknown providers with a warning", async () => {
  const bad = await runCli(["tools", "--providers", "example"], {
    configYaml: "providers:\n  example:\n    cache_ttl: -1\n",
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /configuration error at "providers.example.cache_ttl".*got -1/);
  const unknown = await runCli(["tools"], { configYaml: "enabled_providers: [example, atlantis]\n" });
  assert.equal(unknown.code, 0, unknown.stderr);
  assert.match(unknown.stdout, /example-ping/);
  const warning = unknown.stderr.split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((l) =>
    l.level === "warn"
  );
  assert.match(warning?.msg ?? "", /Unknown provider "atlantis".*skipped/);
});

Deno.test("cli config check prints the effective config with secrets masked", async () => {
  const r = await runCli(["config", "check", "--providers", "example"], {
    env: { MCP_AUTH_TOKEN: "very-secret-token-42" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes("very-secret-token-42"));
  const printed = JSON.parse(r.stdout);
  assert.equal(printed.server.auth_token, "***");
  assert.deepEqual(printed.enabled_providers, ["example"]);
  assert.match(printed.file, /config.yaml|none/);
});

Deno.test("cli --help and --version describe the command and exit 0", async () => {
  const help = await runCli(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /opendata-mcp call TOOL --args JSON/);
  assert.match(help.stdout, /MCP_AUTH_TOKEN/);
  const version = await runCli(["serve", "--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^opendata-mcp \d+\.\d+\.\d+/);
});

Deno.test("cli reports an unreadable --config file with exit 2", async () => {
  const r = await runCli(["tools", "--config", "/nonexistent/opendata.yaml"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /"--config".*nonexistent\/opendata.yaml/);
});

Deno.test("cli warns at start-up of a response cache that could take more than a quarter of the heap limit", async () => {
  const warnings = (stderr: string) =>
    stderr.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.level === "warn")
      .map((l) => String(l.msg));
  const big = await runCli(["tools", "--providers", "example"], { env: { OPENDATA_MCP_CACHE_MB: "512" } });
  assert.equal(big.code, 0, big.stderr);
  const said = warnings(big.stderr).find((m) => m.startsWith("server.cache_max_mb is 512 MiB"));
  assert.ok(said, big.stderr);
  // The run tasks cap the old generation at 1 GiB: the limit said is about that.
  const limit = Number(/heap limit \((\d+) MiB\)/.exec(said)?.[1]);
  assert.ok(limit >= 1024 && limit < 1100, said);
  assert.match(said, /--max-old-space-size=2048/);
  const usual = await runCli(["tools", "--providers", "example"], { env: { OPENDATA_MCP_CACHE_MB: "256" } });
  assert.equal(usual.code, 0, usual.stderr);
  assert.deepEqual(warnings(usual.stderr).filter((m) => m.includes("cache_max_mb")), []);
});
