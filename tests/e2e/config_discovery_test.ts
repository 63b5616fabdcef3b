import { CORE_TOOLS } from "../harness/results.ts";
import { providerTools } from "../harness/results.ts";
// Which config file the real process reads (config/apis.yaml, --config,
// OPENDATA_MCP_CONFIG, the per-user file) and what it skips instead of stopping (an unknown
// provider block, a provider whose module is missing).
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeHome, runCli, startStdio } from "../harness/spawn.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A scratch folder holding `config/apis.yaml` with `yaml`, as a checkout of the repository does. */
function projectDir(yaml: string): string {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-project-" });
  Deno.mkdirSync(join(dir, "config"));
  Deno.writeTextFileSync(join(dir, "config", "apis.yaml"), yaml);
  return dir;
}

function logLines(stderr: string): Record<string, unknown>[] {
  return stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

function configFile(stderr: string): unknown {
  return logLines(stderr).find((l) => l["msg"] === "configuration loaded")?.["config_file"];
}

/** The tool names `tools` prints, without the core tools every server lists. */
function toolNames(stdout: string): string[] {
  return stdout.split("\n").filter((l) => l && !l.startsWith(" ") && !CORE_TOOLS.includes(l));
}

Deno.test("server reads ./config/apis.yaml from the working directory, and editing it changes the served tools", async () => {
  const dir = projectDir("enabled_providers: [example]\n");
  try {
    {
      await using s = await startStdio({ cwd: dir });
      const tools = providerTools((await s.client.listTools()).tools);
      assert.deepEqual(tools.map((t) => t.name), ["example-ping", "example-echo"]);
      assert.equal(configFile(s.stderr()), "config/apis.yaml");
    }
    Deno.writeTextFileSync(
      join(dir, "config", "apis.yaml"),
      'enabled_providers: [example, wikipedia]\ntools:\n  exclude: ["example-echo", "wikipedia-*"]\n',
    );
    await using s = await startStdio({ cwd: dir });
    const tools = providerTools((await s.client.listTools()).tools);
    assert.deepEqual(tools.map((t) => t.name), ["example-ping"]);
  } finally {
    removeHome(dir);
  }
});

Deno.test("--config and OPENDATA_MCP_CONFIG win over ./config/apis.yaml", async () => {
  const dir = projectDir("enabled_providers: [wikipedia]\n");
  const other = join(dir, "config", "other.yaml");
  Deno.writeTextFileSync(other, "enabled_providers: [example]\ntools:\n  include: [example-echo]\n");
  try {
    const flag = await runCli(["tools", "--config", other], { cwd: dir });
    assert.equal(flag.code, 0, flag.stderr);
    assert.deepEqual(toolNames(flag.stdout), ["example-echo"]);
    assert.equal(configFile(flag.stderr), other);

    const env = await runCli(["tools"], { cwd: dir, env: { OPENDATA_MCP_CONFIG: other } });
    assert.equal(env.code, 0, env.stderr);
    assert.deepEqual(toolNames(env.stdout), ["example-echo"]);
    assert.equal(configFile(env.stderr), other);

    const missing = await runCli(["tools"], {
      cwd: dir,
      env: { OPENDATA_MCP_CONFIG: join(dir, "config", "nope.yaml") },
    });
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /"OPENDATA_MCP_CONFIG".*nope\.yaml" \(from OPENDATA_MCP_CONFIG\) does not exist/,
    );
  } finally {
    removeHome(dir);
  }
});

Deno.test("the per-user file is read when there is no ./config/apis.yaml, and only then", async () => {
  const empty = Deno.makeTempDirSync({ prefix: "opendata-mcp-empty-" });
  const dir = projectDir("enabled_providers: [example]\n");
  // An unknown provider block is a warning, not exit 2.
  const userYaml =
    "enabled_providers: [example]\ntools:\n  include: [example-ping]\nproviders:\n  atlantis: {}\n";
  try {
    const user = await runCli(["tools"], { cwd: empty, configYaml: userYaml });
    assert.equal(user.code, 0, user.stderr);
    assert.deepEqual(toolNames(user.stdout), ["example-ping"]);
    assert.match(String(configFile(user.stderr)), /\.config\/opendata-mcp\/config\.yaml$/);
    const warning = logLines(user.stderr).find((l) => l["level"] === "warn");
    assert.match(String(warning?.["msg"]), /Unknown provider "atlantis" under "providers".*was ignored/);

    const project = await runCli(["tools"], { cwd: dir, configYaml: userYaml });
    assert.equal(project.code, 0, project.stderr);
    assert.deepEqual(toolNames(project.stdout), ["example-ping", "example-echo"]);
    assert.equal(configFile(project.stderr), "config/apis.yaml");
  } finally {
    removeHome(empty);
    removeHome(dir);
  }
});

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    if (entry.isDirectory) copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) Deno.copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}

Deno.test("server skips a provider whose mod.ts is missing with a warning naming it, and serves the rest", async () => {
  // A copy of the repository's code with one provider's module deleted, run as deno task start runs it.
  const copy = Deno.makeTempDirSync({ prefix: "opendata-mcp-copy-" });
  try {
    for (const file of ["main.ts", "deno.json", "deno.lock"]) {
      Deno.copyFileSync(join(ROOT, file), join(copy, file));
    }
    copyTree(join(ROOT, "lib"), join(copy, "lib"));
    Deno.symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    Deno.removeSync(join(copy, "lib", "providers", "example", "mod.ts"));

    await using s = await startStdio({
      main: join(copy, "main.ts"),
      args: ["--providers", "example,wikipedia"],
    });
    const tools = providerTools((await s.client.listTools()).tools);
    assert.deepEqual(tools.map((t) => t.name), [
      "wikipedia-search",
      "wikipedia-summary",
      "wikipedia-geosearch",
      "wikipedia-content",
    ]);
    const warning = logLines(s.stderr()).find((l) => l["level"] === "warn");
    assert.equal(warning?.["provider"], "example");
    assert.match(String(warning?.["msg"]), /Provider "example" was skipped: its module could not be loaded/);
    const serving = logLines(s.stderr()).find((l) => l["msg"] === "serving MCP over stdio");
    assert.deepEqual(serving?.["providers"], ["wikipedia"]);
  } finally {
    removeHome(copy);
  }
});
