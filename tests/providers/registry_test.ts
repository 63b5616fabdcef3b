import assert from "node:assert/strict";
import { createApp } from "../../lib/app.ts";
import { parseConfig } from "../../lib/config/parse.ts";
import { defineProvider } from "../../lib/config/provider_spec.ts";
import { Logger } from "../../lib/log.ts";
import { exampleSpec } from "../../lib/providers/example/config.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";

// Not a literal specifier, so the type checker does not look for it: the seam is the spec's
// load(), pointed at a module that does not exist, as when a provider's mod.ts is deleted.
const MISSING = new URL("./no_such_provider/mod.ts", import.meta.url).href;

const missing = defineProvider({
  id: "missing",
  title: "Missing",
  description: "A provider whose module is not there",
  common: { base_url: "https://missing.example.org" },
  load: () => import(MISSING),
});

Deno.test("createApp() skips a provider whose module is missing with a warning naming it; the rest serve", async () => {
  const specs = [missing, exampleSpec];
  const config = parseConfig({ flags: { providers: "missing,example" }, env: {} }, specs);
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ write: (line) => lines.push(JSON.parse(line)) });
  const app = await createApp(config, specs, { logger, dataDir: "/nonexistent" });
  try {
    assert.deepEqual(app.allTools.map((t) => t.name), ["example-ping", "example-echo"]);
    assert.deepEqual(app.config.enabledProviders, ["example"], "config lists only what is served");
    const warning = lines.find((l) => l["level"] === "warn");
    assert.equal(warning?.["provider"], "missing");
    assert.match(String(warning?.["msg"]), /^Provider "missing" was skipped: its module could not be loaded/);
    assert.match(String(warning?.["msg"]), /no_such_provider\/mod\.ts/);
    assert.equal(app.config.warnings.length, 1);
  } finally {
    await app.close();
  }
});

Deno.test("PROVIDERS has one spec per id, each with a loadable module", async () => {
  const ids = PROVIDERS.map((s) => s.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const spec of PROVIDERS) {
    const module = await spec.load();
    assert.equal(typeof module.createProvider, "function", spec.id);
  }
});
