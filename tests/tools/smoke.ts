// Smoke test of a built server, as a desktop client uses it: `--version`, then `initialize`,
// `notifications/initialized` and `tools/list` over stdio. The release workflow runs it on a
// runner of each binary's own OS and architecture:
//
//   deno run --allow-run --allow-read tests/tools/smoke.ts [--version X.Y.Z] COMMAND [ARGS...]
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

if (import.meta.main) {
  const args = [...Deno.args];
  let expectVersion: string | undefined;
  if (args[0] === "--version") {
    expectVersion = args[1];
    args.splice(0, 2);
  }
  try {
    const result = await smoke(args, expectVersion ? { expectVersion } : {});
    console.log(
      `ok: ${
        args.join(" ")
      }: ${result.serverInfo.name} ${result.version}, protocol ${result.protocolVersion}, ` +
        `${result.tools.length} tools (${result.tools.slice(0, 3).join(", ")}, ...)`,
    );
  } catch (e) {
    console.error(`smoke test failed: ${args.join(" ")}: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
}
