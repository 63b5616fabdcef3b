// Registry-wide: every served tool keeps the rules strict clients apply (docs/CLIENTS.md), and the
// whole list stays within the context budget. Checked once with the clients' own libraries
// (docs/CLIENTS.md says how); this test keeps the rules from regressing.
import assert from "node:assert/strict";
import { CORE_TOOLS } from "./harness/results.ts";
import { measureTools } from "../tools/tool_budget.ts";
import { schemaProblems } from "../tools/schema_rules.ts";

Deno.test("every tool of every toolset has a strict-client-safe input schema", async () => {
  const { app, costs } = await measureTools({ flags: { toolsets: "all" }, listed: true });
  try {
    const tools = app.tools;
    assert.ok(tools.length >= 39, `every seed tool and the core ones: ${tools.length}`);
    const problems = costs.flatMap((c) =>
      schemaProblems(c.tool.inputSchema).map((p) => `${c.name} ${p.path || "/"}: ${p.problem}`)
    );
    assert.deepEqual(problems, []);
  } finally {
    await app.close();
  }
});

Deno.test("the default list and the whole list stay within their budgets", async () => {
  const all = await measureTools({ flags: { toolsets: "all" }, listed: true });
  const core = await measureTools({ listed: true });
  try {
    const defaultTokens = core.costs.reduce((n, c) => n + c.tokens, 0);
    assert.deepEqual(core.app.tools.map((t) => t.name), [...CORE_TOOLS]);
    assert.ok(defaultTokens > 0 && defaultTokens <= 3_000, `default list: ${defaultTokens} tokens`);
    const allTokens = all.costs.reduce((n, c) => n + c.tokens, 0);
    const allChars = JSON.stringify({ tools: all.costs.map((c) => c.tool) }).length;
    assert.ok(allTokens <= 12_000, `--toolsets all: ${allTokens} tokens`);
    assert.ok(allChars <= 80_000, `--toolsets all: ${allChars} characters of tools/list`);
  } finally {
    await all.app.close();
    await core.app.close();
  }
});
