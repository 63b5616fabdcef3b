// Shared by the tests of the Wikipedia, SNL, Riksantikvaren and GeoNorge providers: the served
// schemas against the strict-client rules, the cost of a provider's tools, result files read back
// over MCP, and a call context for running a provider's `opendata_search` source in-process (as
// the core's `opendata_search` does) against a loopback fake, which the BOJ and World Bank tests
// use too.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { Logger } from "../../lib/log.ts";
import type { Provider, ProviderContext, ToolCallContext } from "../../lib/mcp/provider.ts";
import type { ResultFiles } from "../../lib/output/exports.ts";
import { PROVIDERS } from "../../lib/providers/registry.ts";
import type { Client } from "../harness/sdk_client.ts";
import type { ToolResult } from "../harness/results.ts";
import { schemaProblems } from "../../tools/schema_rules.ts";
import { measureTools } from "../../tools/tool_budget.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

/**
 * Checks a provider's served tools: each names `toolset`, the provider declares it, every input
 * schema keeps the strict-client rules, and all its tools together stay within the budget.
 */
export async function assertLean(
  provider: string,
  toolset: string,
  budget: { tokens: number; chars: number },
): Promise<void> {
  const { app, costs } = await measureTools({ providers: [provider] });
  try {
    const p = app.providers.find((x) => x.id === provider)!;
    assert.deepEqual(p.toolsets?.map((t) => t.id), [toolset]);
    assert.ok((p.toolsets?.[0]?.description.length ?? 0) >= 20, "the toolset says what it holds");
    for (const tool of p.tools) assert.equal(tool.toolset, toolset, tool.name);
    for (const c of costs) {
      assert.deepEqual(schemaProblems(c.tool.inputSchema as Record<string, unknown>), [], c.name);
      const out = JSON.stringify(c.tool.outputSchema);
      assert.ok(!out.includes('"description"'), `${c.name}: no descriptions in the output schema`);
      assert.ok(!out.includes("9007199254740991"), `${c.name}: no ±2^53 bounds in the output schema`);
    }
    const tokens = costs.reduce((n, c) => n + c.tokens, 0);
    const chars = costs.reduce((n, c) => n + c.chars, 0);
    assert.ok(tokens <= budget.tokens, `${provider}: ${tokens} tokens, budget ${budget.tokens}`);
    assert.ok(chars <= budget.chars, `${provider}: ${chars} characters, budget ${budget.chars}`);
  } finally {
    await app.close();
  }
}

/** The `resource_link` block of a result, read back with `resources/read`. */
export async function readLinked(client: Client, r: ToolResult): Promise<{ uri: string; text: string }> {
  const link = (r.content as { type: string; uri?: string }[]).find((c) => c.type === "resource_link");
  assert.ok(link?.uri, "the result links its file");
  const read = await client.readResource({ uri: link.uri });
  return { uri: link.uri, text: (read.contents[0] as { text: string }).text };
}

/** Creates one provider in-process with `settings` (a config block), for its search source. */
export async function providerFor(id: string, settings: Record<string, unknown>): Promise<Provider> {
  const spec = PROVIDERS.find((s) => s.id === id)!;
  const clock = new FakeClock();
  // deno-lint-ignore no-explicit-any
  const context: ProviderContext<any> = {
    settings: spec.schema.parse(settings),
    http: new HttpRuntime({ clock }),
    logger: new Logger({ write: () => {} }),
    clock,
    limits: { characterLimit: 25_000 },
    dataDir: Deno.makeTempDirSync({ prefix: "opendata-mcp-norway-" }),
  };
  const mod = await spec.load();
  return await mod.createProvider(context);
}

const NO_FILES: ResultFiles = { save: () => Promise.reject(new Error("no files in a search")) };

/** A call context for a search source (what `opendata_search` hands each source). */
export function searchContext(): ToolCallContext {
  return {
    signal: new AbortController().signal,
    logger: new Logger({ write: () => {} }),
    requestId: "search-test",
    limits: { characterLimit: 25_000 },
    progress: () => Promise.resolve(),
    sealState: (p) => Promise.resolve(JSON.stringify(p)),
    files: NO_FILES,
    mcp: {} as ToolCallContext["mcp"],
  };
}
