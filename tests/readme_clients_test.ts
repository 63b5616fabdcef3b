// The client configuration snippets in README.md: valid JSON in the shape each client documents,
// and the ones that run this checkout with deno start a real server that answers over stdio.
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, removeHome, scratchHome } from "./harness/spawn.ts";
import { smoke } from "../tools/smoke.ts";

const ROOT = new URL("../", import.meta.url).pathname;

interface Snippet {
  client: string;
  json: Record<string, unknown>;
}

function snippets(): Snippet[] {
  const readme = Deno.readTextFileSync(join(ROOT, "README.md"));
  return [...readme.matchAll(/<!-- client-config: ([^>]+?) -->\s*```json\n([\s\S]*?)\n```/g)].map((m) => ({
    client: m[1]!,
    json: JSON.parse(m[2]!),
  }));
}

interface StdioServer {
  type?: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

function checkServer(name: string, server: Record<string, unknown>, keys: string[]): StdioServer {
  assert.deepEqual(Object.keys(server).filter((k) => !keys.includes(k)), [], `${name}: unknown keys`);
  assert.equal(typeof server["command"], "string", `${name}: command`);
  for (const a of (server["args"] ?? []) as unknown[]) assert.equal(typeof a, "string", `${name}: args`);
  for (const v of Object.values((server["env"] ?? {}) as Record<string, unknown>)) {
    assert.equal(typeof v, "string", `${name}: env values are strings`);
  }
  return server as unknown as StdioServer;
}

Deno.test("README client snippets are valid JSON in each client's documented shape", () => {
  const all = snippets();
  assert.deepEqual(
    [...new Set(all.map((s) => s.client))],
    ["claude-desktop binary", "claude-desktop deno", "claude-code", "cursor", "vscode"],
  );
  for (const { client, json } of all) {
    if (client === "vscode") {
      // VS Code: "servers" (type stdio) and "inputs" for secrets referenced as ${input:id}.
      const servers = json["servers"] as Record<string, Record<string, unknown>>;
      const inputs = (json["inputs"] ?? []) as { id: string; type: string }[];
      for (const [name, server] of Object.entries(servers)) {
        const s = checkServer(name, server, ["type", "command", "args", "env"]);
        assert.equal(s.type, "stdio");
        for (const id of JSON.stringify(s).matchAll(/\$\{input:([^}]+)\}/g)) {
          assert.ok(
            inputs.some((i) => i.id === id[1] && i.type === "promptString"),
            `input "${id[1]}" is declared`,
          );
        }
      }
    } else {
      // Claude Desktop, Claude Code (.mcp.json) and Cursor: "mcpServers" with command, args, env.
      assert.deepEqual(Object.keys(json), ["mcpServers"], client);
      for (
        const [name, server] of Object.entries(json["mcpServers"] as Record<string, Record<string, unknown>>)
      ) {
        checkServer(name, server, ["command", "args", "env"]);
      }
    }
  }
});

Deno.test("README's deno snippet starts this checkout's server, which answers initialize and tools/list", async () => {
  const snippet = snippets().find((s) => s.client === "claude-desktop deno")!;
  const server = (snippet.json["mcpServers"] as Record<string, StdioServer>)["opendata"]!;
  assert.match(server.command, /\/deno$/);
  const args = server.args!.map((a) => a.endsWith("/opendata-mcp/deno.json") ? join(ROOT, "deno.json") : a);
  assert.ok(args.includes(join(ROOT, "deno.json")), "the snippet names a deno.json");
  const home = scratchHome();
  try {
    // Started like a desktop app starts it: from an unrelated folder, with the snippet's env.
    const result = await smoke([Deno.execPath(), ...args], { env: childEnv(home, server.env), cwd: home });
    assert.equal(result.serverInfo.name, "opendata-mcp");
    assert.ok(result.tools.includes("wikipedia-search"), "the checkout's config/apis.yaml providers");
  } finally {
    removeHome(home);
  }
});
