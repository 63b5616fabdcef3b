// The ways the server is started, run for real with deno.json's permission set: `deno task start`
// (the sources) on any port, and the container's command with its health check in the image's /app
// as the Dockerfile's build stage lays it out (the bundle built now, only the runtime packages).
// The release compile's payload: tests/e2e/binary_test.ts.
import assert from "node:assert/strict";
import { join } from "node:path";
import { completeLines } from "../harness/spawn_http.ts";
import { childEnv, removeHome, scratchHome } from "../harness/spawn.ts";
import { assembleRuntime } from "../../tools/bundle.ts";
import { splitStartTask } from "../../tools/permissions.ts";

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

for (const typed of [["start", "--transport", "http"], ["start:http"]]) {
  Deno.test(`deno task ${typed.join(" ")} --port <any free port> answers /health with the permission set`, async () => {
    await answersHealth(typed);
  });
}

async function answersHealth(typed: string[]): Promise<void> {
  const home = scratchHome();
  const port = freePort();
  try {
    // Exactly what a user types (from another folder: --config names the project).
    const server = await spawnServing(
      ["task", "-q", "--config", join(ROOT, "deno.json"), ...typed, "--port", String(port)],
      { env: childEnv(home), cwd: home },
    );
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    const health = await response.json();
    assert.equal(response.status, 200);
    assert.equal(health.status, "ok");
    // A 2026-07-28 request: the SDK reads its signal, which Deno's legacy abort warned about on stderr.
    const era = "2026-07-28";
    const listed = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": era,
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": era,
            "io.modelcontextprotocol/clientInfo": { name: "start-task-test", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    assert.equal(listed.status, 200, await listed.clone().text());
    assert.ok((await listed.text()).includes("opendata_search"));
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
    assert.doesNotMatch(server.stderr(), /Not allowed|NotCapable|experimental/);
    // stderr is the JSON-lines log: every line parses (no runtime notice between them).
    for (const line of completeLines(server.stderr()).filter((l) => l !== "")) {
      assert.doesNotThrow(() => JSON.parse(line), `not a JSON log line: ${line}`);
    }
  } finally {
    removeHome(home);
  }
}

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

Deno.test("deno task start and deno task dev run the sources, so no start runs code older than lib/", () => {
  const tasks = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks;
  const start = splitStartTask(String(tasks.start))!;
  const dev = splitStartTask(String(tasks.dev))!;
  assert.equal(start.entry, "main.ts");
  assert.deepEqual(dev, { ...start, args: ["--watch", ...start.args] }, "dev is start with --watch");
  const ignored = Deno.readTextFileSync(join(ROOT, ".gitignore")).split("\n");
  assert.ok(ignored.includes("bundle/"), "bundle/ is built where it ships, never committed");
});

/** The Dockerfile's stages: each `FROM` line with the lines up to the next. */
function dockerStages(): { from: string; lines: string[] }[] {
  const stages: { from: string; lines: string[] }[] = [];
  for (const line of Deno.readTextFileSync(join(ROOT, "Dockerfile")).split("\n")) {
    if (line.startsWith("FROM ")) stages.push({ from: line, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

Deno.test("the Dockerfile builds the bundle in its build stage and its runtime stage copies only what runs", () => {
  const [build, runtime, ...rest] = dockerStages();
  assert.equal(rest.length, 0);
  assert.match(build!.from, / AS build$/);
  const buildText = build!.lines.join("\n");
  assert.match(buildText, /^RUN deno install --frozen$/m);
  assert.match(buildText, /tools\/bundle\.ts --runtime \/runtime/, "builds the bundle from the sources");
  assert.match(buildText, /^COPY lib\/ lib\/$/m);
  assert.doesNotMatch(buildText, /^COPY bundle\//m, "no bundle from the build context");
  // Everything the runtime stage takes from the build: the runtime layout, an empty Deno cache, /data.
  const copies = runtime!.lines.filter((l) => l.startsWith("COPY "));
  assert.deepEqual(copies, [
    "COPY --from=build /runtime /app",
    "COPY --from=build --chown=65532:65532 /runtime-deno-dir /deno-dir",
    "COPY --from=build --chown=65532:65532 /data /data",
  ]);
  const ignore = Deno.readTextFileSync(join(ROOT, ".dockerignore"));
  assert.doesNotMatch(
    ignore,
    /^!(bundle|tests|node_modules)\//m,
    "the build context holds no bundle, tests or packages",
  );
});

Deno.test("the container's command serves on 0.0.0.0 with the permission set from the image's /app, and its health check needs 127.0.0.1 in MCP_ALLOWED_HOSTS", async () => {
  const { cmd, healthcheck } = dockerCommands();
  const home = scratchHome();
  const data = Deno.makeTempDirSync({ prefix: "opendata-mcp-data-" });
  const image = Deno.makeTempDirSync({ prefix: "opendata-mcp-image-" });
  try {
    const app = join(image, "app");
    await assembleRuntime(app);
    for (const [hosts, healthy] of [["localhost,127.0.0.1", 0], ["mcp.example.org", 1]] as const) {
      const port = freePort();
      const args = cmd.map((a, i) => (cmd[i - 1] === "--port" ? String(port) : a));
      // The container's working directory: /app, with deno.json, bundle/, config/, node_modules/.
      const server = await spawnServing(args, {
        env: childEnv(home, { MCP_ALLOWED_HOSTS: hosts, OPENDATA_MCP_DATA_DIR: data }),
        cwd: app,
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
    removeHome(image);
  }
});
