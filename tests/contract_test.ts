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
  const config = parseConfig({
    flags: { providers: ids, toolsets: "all" },
    env: { FRED_API_KEY: "a".repeat(32) },
  }, PROVIDERS);
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
    // opendata_call returns the called tool's result unchanged: its shape is that tool's.
    if (tool.name !== "opendata_call") assert.ok(tool.outputSchema, `${tool.name} declares an outputSchema`);
    const a = tool.annotations ?? {};
    for (const hint of ["readOnlyHint", "idempotentHint", "destructiveHint", "openWorldHint"] as const) {
      assert.equal(typeof a[hint], "boolean", `${tool.name} sets ${hint}`);
    }
    assert.ok((tool.description ?? "").length >= 40, `${tool.name} explains itself`);
    assert.match(tool.name, /^[a-z][a-z0-9_-]{2,63}$/, `${tool.name} is a valid tool name`);
  }
});

Deno.test("only tools that write files, call other tools or cancel jobs say they are not read-only", async () => {
  const tools = await allTools();
  const writesFiles = (t: (typeof tools)[number]) =>
    ((t.inputSchema as Schema).properties?.["output"] as { enum?: string[] } | undefined)?.enum?.includes(
      "file",
    );
  const writers = tools.filter((t) => t.annotations?.readOnlyHint !== true && !writesFiles(t)).map((t) =>
    t.name
  );
  // job_cancel stops work in progress; project_create makes a folder; opendata_call may call any
  // tool; tools with output: "file" may write their result to a file.
  assert.deepEqual(writers.sort(), ["fred_job_cancel", "fred_project_create", "opendata_call"]);
  const destructive = (await allTools()).filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
  assert.deepEqual(destructive, ["fred_job_cancel"]);
});
