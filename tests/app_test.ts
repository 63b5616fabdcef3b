import assert from "node:assert/strict";
import { checkAllowlist, createApp, matchesPattern } from "../lib/app.ts";
import { parseConfig } from "../lib/config/parse.ts";
import { defineProvider } from "../lib/config/provider_spec.ts";
import type { ProviderSpec } from "../lib/config/provider_spec.ts";
import { ConfigError } from "../lib/errors.ts";
import { Logger } from "../lib/log.ts";
import { exampleSpec } from "../lib/providers/example/config.ts";
import { loadYaml } from "../lib/config/yaml.ts";

// parseConfig() reads config text with the YAML parser, which loads on demand.
await loadYaml();

const remote = defineProvider({
  id: "remote",
  title: "Remote",
  description: "Reaches a host",
  common: { base_url: "https://data.example.org/v1" },
  load: () => Promise.reject<never>(new Error("not loaded")),
});
const SPECS = [remote, exampleSpec] as unknown as ProviderSpec[];

Deno.test("checkAllowlist() refuses a base_url host outside the network allowlist with the fix", () => {
  const config = parseConfig({
    flags: {},
    env: {},
    fileText: "providers:\n  remote:\n    base_url: http://10.1.2.3:9000\n",
  }, SPECS);
  assert.throws(
    () => checkAllowlist(config, [SPECS[0]!], (host) => host === "data.example.org"),
    (e: unknown) =>
      e instanceof ConfigError && e.path === "providers.remote.base_url" &&
      /"10.1.2.3:9000".*outside.*--allow-net=10.1.2.3:9000/.test(e.message),
  );
  const ok = parseConfig({ flags: {}, env: {} }, SPECS);
  checkAllowlist(ok, [SPECS[0]!], (host) => host === "data.example.org");
});

Deno.test("createApp() filters tools by include and exclude patterns", async () => {
  const warnings: string[] = [];
  const logger = new Logger({ level: "warn", write: (l) => warnings.push(l) });
  const config = parseConfig({
    flags: { providers: "example", tools: "example-*", "exclude-tools": "*-echo,nothing-*" },
    env: {},
  }, SPECS);
  const app = await createApp(config, SPECS, { logger, dataDir: "/tmp" });
  assert.deepEqual(app.allTools.map((t) => t.name), ["example-ping"]);
  assert.ok(
    warnings.map((w) => JSON.parse(w).msg).includes('Tool filter "nothing-*" matches no served tool'),
  );
  const server = app.newServer();
  assert.ok(server.server);
  await app.close();
});

Deno.test("matchesPattern() treats * as a wildcard and nothing else as special", () => {
  assert.ok(matchesPattern("wikipedia-search", "wikipedia-*"));
  assert.ok(matchesPattern("a.b", "a.b"));
  assert.ok(!matchesPattern("axb", "a.b"));
  assert.ok(!matchesPattern("snl-search", "wikipedia-*"));
});
