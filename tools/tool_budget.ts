// What each served tool costs an agent: tokens (o200k, the part clients send their model: name,
// description and input schema) and characters of its whole tools/list entry (output schema
// included), with the schema-rule problems of its input schema.
//
//   deno run -A tools/tool_budget.ts [--providers a,b] [--toolsets all] [--problems]
import { parseArgs } from "node:util";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { createApp } from "../lib/app.ts";
import type { App } from "../lib/app.ts";
import { parseConfig } from "../lib/config/parse.ts";
import { Logger } from "../lib/log.ts";
import { describeTool } from "../lib/mcp/server.ts";
import type { Tool } from "../lib/mcp/sdk.ts";
import { PROVIDER_SPECS } from "../lib/providers/registry.ts";
import { schemaProblems } from "./schema_rules.ts";

/** The real providers, served by default. */
export const REAL_PROVIDERS = [
  "worldbank",
  "boj",
  "fred",
  "wikipedia",
  "snl",
  "riksantikvaren_ogc",
  "riksantikvaren_arcgis",
  "geonorge",
];

/** One tool's cost. */
export interface ToolCost {
  provider: string;
  name: string;
  /** o200k tokens of name + description + input schema. */
  tokens: number;
  /** Characters of the whole tools/list entry. */
  chars: number;
  tool: Tool;
}

/** Tokens of what clients send their model for one tool. */
export function toolTokens(tool: Tool): number {
  return encode(
    JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }),
  )
    .length;
}

/** Builds the app (with a FRED key, so keyed tools are served) and measures every tool it serves. */
export async function measureTools(
  options: { providers?: string[]; flags?: Record<string, string>; listed?: boolean } = {},
): Promise<{ app: App; costs: ToolCost[] }> {
  const config = parseConfig({
    flags: { providers: (options.providers ?? REAL_PROVIDERS).join(","), ...options.flags },
    env: { FRED_API_KEY: "a".repeat(32) },
  }, PROVIDER_SPECS);
  // The providers' code, not the generated listings: what an agent pays once they are regenerated.
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-budget-" });
  const app = await createApp(config, PROVIDER_SPECS, { logger: new Logger({ write: () => {} }), dataDir });
  // Closing the app also removes its scratch data folder.
  const close = app.close.bind(app);
  app.close = async () => {
    try {
      await close();
    } finally {
      Deno.removeSync(dataDir, { recursive: true });
    }
  };
  const providerOf = new Map(app.providers.flatMap((p) => p.tools.map((t) => [t.name, p.id] as const)));
  // By default every provider tool (whatever is listed); `listed`: exactly what tools/list shows.
  const tools = options.listed ? app.tools : app.providers.flatMap((p) => p.tools);
  const costs = tools.map((t) => {
    const tool = describeTool(t);
    const provider = providerOf.get(t.name) ?? "core";
    return { provider, name: t.name, tokens: toolTokens(tool), chars: JSON.stringify(tool).length, tool };
  });
  return { app, costs };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { providers: { type: "string" }, problems: { type: "boolean" } },
  });
  const { app, costs } = await measureTools(
    values.providers ? { providers: values.providers.split(",") } : {},
  );
  const per = new Map<string, { tokens: number; chars: number; tools: number }>();
  for (const c of costs) {
    console.log(
      `${c.provider.padEnd(22)} ${c.name.padEnd(32)} ${String(c.tokens).padStart(6)} tok ${
        String(c.chars).padStart(7)
      } ch`,
    );
    const p = per.get(c.provider) ?? { tokens: 0, chars: 0, tools: 0 };
    per.set(c.provider, { tokens: p.tokens + c.tokens, chars: p.chars + c.chars, tools: p.tools + 1 });
    if (values.problems) {
      for (const problem of schemaProblems(c.tool.inputSchema as Record<string, unknown>)) {
        console.log(`    ${problem.path || "/"}: ${problem.problem}`);
      }
    }
  }
  for (const [id, p] of per) {
    console.log(`${id.padEnd(22)} ${p.tools} tools ${p.tokens} tokens ${p.chars} chars`);
  }
  console.log(
    `total: ${costs.length} tools, ${costs.reduce((n, c) => n + c.tokens, 0)} tokens, ${
      costs.reduce((n, c) => n + c.chars, 0)
    } chars`,
  );
  await app.close();
}
