// Contracts every served tool keeps (DESIGN.md), checked over the whole registry so a new
// provider cannot forget one: described and strict inputs, an output schema, all four
// annotations, and a description a model can act on.
import assert from "node:assert/strict";
import { createApp } from "../lib/app.ts";
import { parseConfig } from "../lib/config/parse.ts";
import { Logger } from "../lib/log.ts";
import { describeTool } from "../lib/mcp/server.ts";
import { PROVIDERS } from "../lib/providers/registry.ts";

type Schema = {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: Schema;
  anyOf?: Schema[];
};

async function allTools() {
  const ids = PROVIDERS.filter((s) => !s.hidden).map((s) => s.id).join(",");
  // A placeholder FRED key: FRED serves its data and job tools only with a key.
  const config = parseConfig({ flags: { providers: ids }, env: { FRED_API_KEY: "0".repeat(32) } }, PROVIDERS);
  const app = await createApp(config, PROVIDERS, { logger: new Logger(), dataDir: Deno.makeTempDirSync() });
  const tools = app.tools.map(describeTool);
  await app.close();
  return tools;
}

Deno.test("every tool has a strict, fully described input schema", async () => {
  for (const tool of await allTools()) {
    const schema = tool.inputSchema as Schema;
    assert.equal(schema.type, "object", tool.name);
    if (tool.name !== "example-echo") {
      assert.equal(schema.additionalProperties, false, `${tool.name} must reject unknown arguments`);
    }
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const described = prop.description ?? prop.anyOf?.find((p) => p.description)?.description;
      assert.ok(described && described.length >= 8, `${tool.name}.${name} needs a description`);
    }
  }
});

Deno.test("every tool declares an output schema, all four annotations and a useful description", async () => {
  const tools = await allTools();
  assert.ok(tools.length >= 30, `expected the whole registry, got ${tools.length} tools`);
  for (const tool of tools) {
    assert.ok(tool.outputSchema, `${tool.name} declares an outputSchema`);
    const a = tool.annotations ?? {};
    for (const hint of ["readOnlyHint", "idempotentHint", "destructiveHint", "openWorldHint"] as const) {
      assert.equal(typeof a[hint], "boolean", `${tool.name} sets ${hint}`);
    }
    assert.ok((tool.description ?? "").length >= 40, `${tool.name} explains itself`);
    assert.match(tool.name, /^[a-z][a-z0-9_-]{2,63}$/, `${tool.name} is a valid tool name`);
  }
});

Deno.test("only tools that write files or cancel jobs say they are not read-only", async () => {
  const writers = (await allTools()).filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name);
  // FRED's data tools may write their result to a project file (output: "file"); job_cancel
  // stops work in progress; project_create makes a folder.
  assert.deepEqual(writers.sort(), [
    "fred_category",
    "fred_job_cancel",
    "fred_maps",
    "fred_project_create",
    "fred_release",
    "fred_series",
    "fred_source",
    "fred_tag",
  ]);
  const destructive = (await allTools()).filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
  assert.deepEqual(destructive, ["fred_job_cancel"]);
});
