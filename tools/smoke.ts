// Smoke test of a built server, as its users run it. smoke(): `--version`, then `initialize`,
// `notifications/initialized` and `tools/list` over stdio. smokeServer() (the command line; the
// release workflow and CI run it on each binary, on a runner of the binary's own OS and
// architecture) goes on to use every part a release must hold:
// - over stdio, a provider tool through `opendata_call` that needs no upstream
//   (`boj_list_databases`), and one against a loopback fake upstream (a World Bank search
//   answered with a recorded body, which also counts tokens);
// - over HTTP: `/health`, `initialize` and a tool call;
// - with REDIS_URL naming a port where nothing listens: exit 2 saying Redis cannot be reached
//   (not "Module not found", which a binary missing modules says).
//
//   deno run --allow-run --allow-read --allow-net=127.0.0.1 --allow-env --allow-write \
//     tools/smoke.ts [--version X.Y.Z] COMMAND [ARGS...]
//
// Exit 0 when the server answers as it should; otherwise 1, with what went wrong.

/** What the server said. */
export interface SmokeResult {
  version: string;
  serverInfo: { name: string; version: string };
  protocolVersion: string;
  tools: string[];
}

/** Options for {@linkcode smoke}. */
export interface SmokeOptions {
  /** The version `--version` and `serverInfo` must report. */
  expectVersion?: string;
  /** Bound for each step, in ms (default 60 s: a first start may unpack or verify the binary). */
  timeoutMs?: number;
  /** Environment of the server (default: inherited). */
  env?: Record<string, string>;
  cwd?: string;
  /**
   * After tools/list, call `boj_list_databases` through `opendata_call` and, when given, a World
   * Bank search against this upstream origin (the server's WORLDBANK_BASE_URL must point at it).
   */
  calls?: { worldbank?: boolean };
}

const PROTOCOL_VERSION = "2025-06-18";

/** Runs `command` (program and arguments) through the checks; throws saying what failed. */
export async function smoke(command: readonly string[], options: SmokeOptions = {}): Promise<SmokeResult> {
  const [program, ...args] = command;
  if (!program) throw new Error("No command to run");
  const timeoutMs = options.timeoutMs ?? 60_000;
  const base = {
    ...(options.env ? { env: options.env, clearEnv: true } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  };

  const out = await new Deno.Command(program, {
    ...base,
    args: [...args, "--version"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  const versionText = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) {
    throw new Error(`--version exited with ${out.code}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  const version = /^opendata-mcp (\S+)$/.exec(versionText)?.[1];
  if (!version) throw new Error(`--version printed ${JSON.stringify(versionText)}, not "opendata-mcp X.Y.Z"`);
  if (options.expectVersion && version !== options.expectVersion) {
    throw new Error(`--version says ${version}, expected ${options.expectVersion}`);
  }

  const child = new Deno.Command(program, {
    ...base,
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const readingErr = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  let pending = "";
  const send = (message: unknown) => writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  const reply = async (id: number): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      let nl: number;
      while ((nl = pending.indexOf("\n")) !== -1) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line);
        } catch {
          throw new Error(
            `stdout carried a line that is not JSON-RPC: ${JSON.stringify(line.slice(0, 200))}`,
          );
        }
        if (message["id"] === id) {
          if (message["error"]) throw new Error(`request ${id} failed: ${JSON.stringify(message["error"])}`);
          return message["result"] as Record<string, unknown>;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer to request ${id} within ${timeoutMs} ms; stderr:\n${stderr}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const chunk = await Promise.race([
        lines.read(),
        new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), left)),
      ]);
      clearTimeout(timer);
      if (chunk === null) continue;
      if (chunk.done) {
        throw new Error(`the server closed stdout before answering request ${id}; stderr:\n${stderr}`);
      }
      pending += chunk.value;
    }
  };

  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "opendata-mcp-smoke", version: "1" },
      },
    });
    const init = await reply(1);
    const serverInfo = init["serverInfo"] as SmokeResult["serverInfo"];
    if (serverInfo?.name !== "opendata-mcp") throw new Error(`serverInfo is ${JSON.stringify(serverInfo)}`);
    if (options.expectVersion && serverInfo.version !== options.expectVersion) {
      throw new Error(`serverInfo.version is ${serverInfo.version}, expected ${options.expectVersion}`);
    }
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const list = await reply(2);
    const tools = ((list["tools"] ?? []) as { name: string }[]).map((t) => t.name);
    if (tools.length === 0) throw new Error("tools/list returned no tools");
    if (options.calls) {
      await send(callRequest(3, "boj_list_databases", {}));
      checkDatabases(await reply(3));
      if (options.calls.worldbank) {
        await send(callRequest(4, "worldbank_search_documents", { query: "post office", limit: 1 }));
        checkSearch(await reply(4));
      }
    }
    return { version, serverInfo, protocolVersion: String(init["protocolVersion"]), tools };
  } finally {
    await writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, 10_000);
    await child.status;
    clearTimeout(timer);
    await lines.cancel().catch(() => {});
    await readingErr.catch(() => {});
  }
}

/** A tools/call of `opendata_call` that runs `tool`. */
function callRequest(id: number, tool: string, args: Record<string, unknown>): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "opendata_call", arguments: { tool, arguments: args } },
  };
}

/** The text of a tool result that is not an error; throws with the result otherwise. */
function resultText(result: Record<string, unknown>, what: string): string {
  const content = (result["content"] ?? []) as { type: string; text?: string }[];
  const text = content.filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
  if (result["isError"]) throw new Error(`${what} answered an error: ${text.slice(0, 500)}`);
  return text;
}

function checkDatabases(result: Record<string, unknown>): void {
  const text = resultText(result, "opendata_call boj_list_databases");
  if (!/\bFM01\b/.test(text)) {
    throw new Error(`boj_list_databases did not list the database FM01: ${text.slice(0, 300)}`);
  }
}

function checkSearch(result: Record<string, unknown>): void {
  const text = resultText(result, "opendata_call worldbank_search_documents (loopback fake upstream)");
  if (!/documents\.worldbank\.org|worldbank/i.test(text) || !/Post Office/i.test(text)) {
    throw new Error(`the World Bank search did not return the recorded document: ${text.slice(0, 300)}`);
  }
}

/** A recorded World Bank search body (a release checkout has tests/fixtures/). */
const WORLDBANK_FIXTURE = new URL(
  "../tests/fixtures/worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json",
  import.meta.url,
);

/** A loopback upstream answering every request with the recorded World Bank search. */
function fakeWorldBank(): { origin: string; requests: () => number; close: () => Promise<void> } {
  const body = Deno.readFileSync(WORLDBANK_FIXTURE);
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    requests++;
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests: () => requests,
    close: () => server.shutdown(),
  };
}

/** Runs `command` with `args` added, collecting stderr, until `stop` resolves or it exits. */
function spawn(
  command: readonly string[],
  args: string[],
  options: SmokeOptions,
  env: Record<string, string>,
) {
  const [program, ...rest] = command;
  const child = new Deno.Command(program!, {
    args: [...rest, ...args],
    env: { ...options.env ?? Deno.env.toObject(), ...env },
    clearEnv: true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const listening = Promise.withResolvers<number>();
  const reading = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      stderr += chunk;
      const line = stderr.split("\n").find((l) => l.includes('"serving MCP over HTTP"'));
      if (line) listening.resolve(Number(JSON.parse(line)["port"]));
    }
    listening.reject(new Error(`the server exited before listening:\n${stderr}`));
  })();
  listening.promise.catch(() => {});
  return {
    child,
    listening: listening.promise,
    stderr: () => stderr,
    async done(): Promise<Deno.CommandStatus> {
      const status = await child.status;
      await reading.catch(() => {});
      return status;
    },
  };
}

/** Bounds `promise` by `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One JSON-RPC message from a Streamable HTTP answer (JSON or an SSE stream). */
async function rpcAnswer(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${text.slice(0, 300)}`);
  const json = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).find((l) => l)
    : text;
  if (!json) throw new Error(`no JSON-RPC message in ${JSON.stringify(text.slice(0, 300))}`);
  const message = JSON.parse(json) as Record<string, unknown>;
  if (message["error"]) throw new Error(`JSON-RPC error: ${JSON.stringify(message["error"])}`);
  return message["result"] as Record<string, unknown>;
}

/** The HTTP checks: /health, initialize and a tool call on Streamable HTTP at /mcp. */
async function smokeHttp(command: readonly string[], options: SmokeOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const server = spawn(
    command,
    ["serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0"],
    options,
    {},
  );
  try {
    const port = await within(server.listening, timeoutMs, "serve --transport http");
    const base = `http://127.0.0.1:${port}`;
    const health = await fetch(`${base}/health`);
    await health.body?.cancel();
    if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = await fetch(`${base}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "opendata-mcp-smoke", version: "1" },
        },
      }),
    });
    const session = init.headers.get("mcp-session-id");
    const initResult = await rpcAnswer(init);
    if ((initResult["serverInfo"] as { name?: string })?.name !== "opendata-mcp") {
      throw new Error(`HTTP initialize answered ${JSON.stringify(initResult).slice(0, 300)}`);
    }
    const sessionHeaders = {
      ...headers,
      "mcp-protocol-version": PROTOCOL_VERSION,
      ...(session ? { "mcp-session-id": session } : {}),
    };
    const note = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await note.body?.cancel();
    const call = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify(callRequest(2, "boj_list_databases", {})),
    });
    checkDatabases(await rpcAnswer(call));
  } catch (e) {
    throw new Error(`over HTTP: ${e instanceof Error ? e.message : String(e)}\nstderr:\n${server.stderr()}`);
  } finally {
    try {
      server.child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await within(server.done(), 15_000, "the HTTP server's exit").catch(() => server.child.kill("SIGKILL"));
  }
}

/** With REDIS_URL naming a closed port, `serve` exits 2 saying Redis cannot be reached. */
async function smokeRedis(command: readonly string[], options: SmokeOptions): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const server = spawn(
    command,
    ["serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0"],
    options,
    {
      REDIS_URL: `redis://127.0.0.1:${port}`,
    },
  );
  const status = await within(server.done(), options.timeoutMs ?? 60_000, "serve with REDIS_URL").catch(
    (e) => {
      server.child.kill("SIGKILL");
      throw e;
    },
  );
  const stderr = server.stderr();
  if (/Module not found|Cannot find module/i.test(stderr)) {
    throw new Error(`with REDIS_URL the server could not load its Redis code:\n${stderr}`);
  }
  if (status.code !== 2 || !/Cannot reach Redis/i.test(stderr)) {
    throw new Error(
      `with REDIS_URL at a closed port: exit ${status.code}, expected 2 saying "Cannot reach Redis":\n${stderr}`,
    );
  }
}

/** Every check: smoke() with the tool calls, then HTTP, then REDIS_URL. */
export async function smokeServer(
  command: readonly string[],
  options: SmokeOptions = {},
): Promise<SmokeResult> {
  const fake = fakeWorldBank();
  const home = Deno.makeTempDirSync({ prefix: "opendata-mcp-smoke-" });
  try {
    // A scratch HOME and working folder: no config file of the machine is read.
    const env = {
      ...(options.env ?? Deno.env.toObject()),
      HOME: home,
      OPENDATA_MCP_DATA_DIR: `${home}/data`,
      WORLDBANK_BASE_URL: `${fake.origin}/api/v3/wds`,
    };
    const local = { ...options, env, cwd: options.cwd ?? home };
    const result = await smoke(command, { ...local, calls: { worldbank: true } });
    if (fake.requests() === 0) throw new Error("the World Bank search did not reach the fake upstream");
    await smokeHttp(command, local);
    await smokeRedis(command, local);
    return result;
  } finally {
    await fake.close();
    Deno.removeSync(home, { recursive: true });
  }
}

if (import.meta.main) {
  const args = [...Deno.args];
  let expectVersion: string | undefined;
  if (args[0] === "--version") {
    expectVersion = args[1];
    args.splice(0, 2);
  }
  try {
    const result = await smokeServer(args, expectVersion ? { expectVersion } : {});
    console.log(
      `ok: ${
        args.join(" ")
      }: ${result.serverInfo.name} ${result.version}, protocol ${result.protocolVersion}, ` +
        `${result.tools.length} tools (${result.tools.slice(0, 3).join(", ")}, ...); ` +
        "stdio calls (no upstream, loopback upstream), HTTP /health + initialize + call, REDIS_URL unreachable: ok",
    );
  } catch (e) {
    console.error(`smoke test failed: ${args.join(" ")}: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
}
