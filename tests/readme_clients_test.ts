// The client configuration snippets in README.md: valid JSON in the shape each client documents,
// the ones that run this checkout with deno start a real server that answers over stdio, and every
// `claude mcp add` command in README.md and docs/ names the server where claude-code reads it.
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

/** Every `claude mcp add ...` command line in README.md and the Markdown files under docs/. */
function claudeAddCommands(): string[] {
  const files = [join(ROOT, "README.md")];
  const walk = (dir: string): void => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory) walk(join(dir, e.name));
      else if (e.name.endsWith(".md")) files.push(join(dir, e.name));
    }
  };
  walk(join(ROOT, "docs"));
  return files.flatMap((f) =>
    [...Deno.readTextFileSync(f).matchAll(/claude mcp add [^`\n#]*/g)].map((m) => m[0].trim())
  );
}

/**
 * The server name `claude mcp add` would read: the first word after the single-value options. `-e`
 * and `--header` take every word up to the next option or `--`, so a name after them is not a name.
 */
export function claudeAddName(command: string): string | undefined {
  const words = command.split(/\s+/).slice(3);
  let i = 0;
  while (["--transport", "-t", "--scope", "-s"].includes(words[i] ?? "")) i += 2;
  const name = words[i];
  return name === undefined || name.startsWith("-") ? undefined : name;
}

Deno.test("claudeAddName() reads the name after --transport and --scope, never after a variadic -e", () => {
  assert.equal(
    claudeAddName("claude mcp add --transport stdio --scope user opendata -e A=b -- x"),
    "opendata",
  );
  assert.equal(claudeAddName("claude mcp add --transport stdio --env A=b opendata -- x"), undefined);
  assert.equal(claudeAddName("claude mcp add --transport http opendata https://host/mcp"), "opendata");
});

Deno.test("every claude mcp add command in README.md and docs/ names the server before -e and --header", () => {
  const commands = claudeAddCommands();
  assert.ok(commands.length >= 5, `found ${commands.length} commands`);
  for (const command of commands) assert.equal(claudeAddName(command), "opendata", command);
  assert.ok(commands.some((c) => / opendata -e FRED_API_KEY=\S+ -- /.test(c)), "one passes the FRED key");
});
