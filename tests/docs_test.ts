import assert from "node:assert/strict";
import { parseConfig } from "../lib/config/parse.ts";
import { PROVIDERS } from "../lib/providers/registry.ts";
import { generated } from "./tools/docs.ts";
import { envAllowlist, netAllowlist, permissionTasks } from "./tools/permissions.ts";

const ROOT = new URL("../", import.meta.url);

Deno.test("README tools table, config reference, config/apis.yaml and .env.example are current", async () => {
  for (const [path, wanted] of Object.entries(await generated())) {
    const current = await Deno.readTextFile(new URL(path, ROOT));
    assert.equal(current, wanted, `${path} is stale: run deno task docs`);
  }
});

Deno.test("config/apis.yaml equals the built-in defaults", async () => {
  const fileText = await Deno.readTextFile(new URL("config/apis.yaml", ROOT));
  const fromFile = parseConfig({ flags: {}, env: {}, fileText, filePath: "config/apis.yaml" }, PROVIDERS);
  const builtIn = parseConfig({ flags: {}, env: {} }, PROVIDERS);
  assert.deepEqual({ ...fromFile, file: null }, builtIn);
});

Deno.test("deno.json permission tasks match the registry's hosts and variables", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  for (const [name, task] of Object.entries(permissionTasks())) {
    assert.equal(config.tasks[name], task, `task "${name}" is stale: run deno task permissions`);
  }
  for (const spec of PROVIDERS) {
    for (const host of spec.allowNet) assert.ok(netAllowlist().includes(host), host);
    for (const b of spec.env) assert.ok(envAllowlist().includes(b.name), b.name);
  }
  assert.ok(!JSON.stringify(config.tasks).includes(" -A "), "never -A");
});
