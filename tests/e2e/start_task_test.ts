// The ways the server is started, run for real with deno.json's permission set: `deno task start`
// on any port, the container's command with its health check, and what `deno compile -P`
// embeds in a binary.
import assert from "node:assert/strict";
import { join } from "node:path";
import { completeLines } from "../fakes/http_server.ts";
import { childEnv, removeHome, scratchHome } from "../fakes/server.ts";
import { RELEASE_TARGETS } from "../tools/distribution.ts";
import { permissionSet, permissionTasks } from "../tools/permissions.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return listener.addr.port;
}

/** A started process whose stderr is read as it comes, until it says it serves HTTP. */
async function spawnServing(
  args: string[],
  options: { env: Record<string, string>; cwd: string },
): Promise<{ child: Deno.ChildProcess; stderr: () => string; stop: () => Promise<Deno.CommandStatus> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env: options.env,
    clearEnv: true,
    cwd: options.cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const serving = Promise.withResolvers<void>();
  const reading = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      stderr += chunk;
      if (completeLines(stderr).some((l) => l.includes('"serving MCP over HTTP"'))) serving.resolve();
    }
    serving.reject(new Error(`The server exited before serving:\n${stderr}`));
  })();
  const timer = setTimeout(() => serving.reject(new Error(`Not serving after 30 s:\n${stderr}`)), 30_000);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    const status = await child.status;
    await reading.catch(() => {});
    return status;
  };
  try {
    await serving.promise;
  } catch (e) {
    await stop();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return { child, stderr: () => stderr, stop };
}

Deno.test("deno task start --transport http --port <any free port> answers /health with the permission set", async () => {
  const home = scratchHome();
  const port = freePort();
  try {
    // Exactly what a user types (from another folder: --config names the project).
    const server = await spawnServing(
      [
        "task",
        "-q",
        "--config",
        join(ROOT, "deno.json"),
        "start",
        "--transport",
        "http",
        "--port",
        String(port),
      ],
      { env: childEnv(home), cwd: home },
    );
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    const health = await response.json();
    assert.equal(response.status, 200);
    assert.equal(health.status, "ok");
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    assert.doesNotMatch(server.stderr(), /Not allowed|NotCapable|experimental/);
  } finally {
    removeHome(home);
  }
});

/** The `CMD` and the `HEALTHCHECK` command of the Dockerfile, as JSON arrays. */
function dockerCommands(): { cmd: string[]; healthcheck: string[] } {
  const text = Deno.readTextFileSync(join(ROOT, "Dockerfile"));
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(text)![1]!);
  const healthcheck = JSON.parse(/^HEALTHCHECK [^\n]*\\\n\s+CMD (\[.*\])$/m.exec(text)![1]!);
  return { cmd, healthcheck };
}

async function runHealthcheck(healthcheck: string[], port: number): Promise<number> {
  // The image's /bin/deno is this deno; only the port differs from the container's 8000.
  const [, ...args] = healthcheck.map((a) => a.replace("127.0.0.1:8000", `127.0.0.1:${port}`));
  const out = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "null", stderr: "null" })
    .output();
  return out.code;
}

Deno.test("the container's command serves on 0.0.0.0 with the permission set, and its health check needs 127.0.0.1 in MCP_ALLOWED_HOSTS", async () => {
  const { cmd, healthcheck } = dockerCommands();
  const home = scratchHome();
  const data = Deno.makeTempDirSync({ prefix: "opendata-mcp-data-" });
  try {
    for (const [hosts, healthy] of [["localhost,127.0.0.1", 0], ["mcp.example.org", 1]] as const) {
      const port = freePort();
      const args = cmd.map((a, i) => (cmd[i - 1] === "--port" ? String(port) : a));
      // The container's working directory (/app) is the project: deno.json, main.ts, config/.
      const server = await spawnServing(args, {
        env: childEnv(home, { MCP_ALLOWED_HOSTS: hosts, OPENDATA_MCP_DATA_DIR: data }),
        cwd: ROOT,
      });
      try {
        assert.match(server.stderr(), new RegExp(`"host":"0\\.0\\.0\\.0","port":${port}`));
        assert.equal(await runHealthcheck(healthcheck, port), healthy, `MCP_ALLOWED_HOSTS=${hosts}`);
      } finally {
        assert.equal((await server.stop()).code, 0, server.stderr());
      }
    }
  } finally {
    removeHome(home);
    removeHome(data);
  }
});

/** The JSON metadata `deno compile` appends to a binary. */
function embeddedMetadata(binary: Uint8Array): Record<string, unknown> {
  const text = new TextDecoder("latin1").decode(
    binary.subarray(Math.max(0, binary.length - 4 * 1024 * 1024)),
  );
  const start = text.lastIndexOf('{"argv":');
  assert.ok(start >= 0, "no metadata in the binary");
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error("Unterminated metadata");
}

// The compile task for this machine's own target (the metadata is written for it).
const HOST_COMPILE_TASK = RELEASE_TARGETS.some((t) => t.target === Deno.build.target)
  ? permissionTasks()[`compile:${Deno.build.target}`]
  : undefined;

Deno.test({
  name: "deno compile -P embeds the permission set: the net and env allowlists, any file, no prompts",
  ignore: HOST_COMPILE_TASK === undefined,
  fn: compileEmbedsThePermissionSet,
});

async function compileEmbedsThePermissionSet(): Promise<void> {
  // `deno compile` normally downloads its runtime (denort), which these machines cannot. DENORT_BIN
  // (Deno's own test hook) points it at this deno instead: the output is no working binary, but
  // it carries the same metadata a real compile embeds, which is what this test reads.
  const task = HOST_COMPILE_TASK!;
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-compile-" });
  try {
    const entry = join(dir, "entry.ts");
    Deno.writeTextFileSync(entry, "console.log(1);\n");
    const output = join(dir, "out");
    // The task's own flags, with a one-line entry (the permissions do not depend on it).
    const args = task.replace(/^deno /, "").split(" ").map((a, i, all) =>
      a === "main.ts" ? entry : all[i - 1] === "--output" ? output : a
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["--quiet", ...args.slice(0, 1), "--config", join(ROOT, "deno.json"), ...args.slice(1)],
      env: { DENORT_BIN: Deno.execPath(), NO_COLOR: "1" },
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const exe = Deno.statSync(output).isFile ? output : `${output}.exe`;
    const { permissions } = embeddedMetadata(Deno.readFileSync(exe)) as {
      permissions: Record<string, unknown>;
    };
    const set = permissionSet();
    assert.deepEqual(permissions["allow_net"], set.net);
    assert.deepEqual(permissions["allow_env"], set.env);
    assert.deepEqual(permissions["allow_read"], [], "[] is every path");
    assert.deepEqual(permissions["allow_write"], [], "[] is every path");
    assert.equal(permissions["allow_run"], null);
    assert.equal(permissions["allow_sys"], null);
    assert.equal(permissions["prompt"], false);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
