import { payloadOf, providerTools } from "../harness/results.ts";
import assert from "node:assert/strict";
import {
  childEnv,
  entryOf,
  lines,
  removeHome,
  runCli,
  scratchHome,
  startArgs,
  startStdio,
} from "../harness/spawn.ts";
import { Client, StdioClientTransport } from "../harness/sdk_client.ts";

/** The server these tests spawn: the sources' main.ts. */
const MAIN = entryOf({});

Deno.test("stdio server answers initialize with protocol 2025-11-25 and serves the example tools", async () => {
  await using s = await startStdio({ args: ["--providers", "example"] });
  assert.equal(s.client.getServerVersion()?.name, "opendata-mcp");
  const init = JSON.parse(s.transport.stdoutLines[0]!);
  assert.equal(init.result.protocolVersion, "2025-11-25");
  const tools = providerTools((await s.client.listTools()).tools);
  assert.deepEqual(tools.map((t) => t.name), ["example-ping", "example-echo"]);
  const ping = tools[0]!;
  assert.equal(ping.annotations?.readOnlyHint, true);
  assert.ok(ping.outputSchema, "example-ping declares an outputSchema");

  const pong = await s.client.callTool({ name: "example-ping", arguments: {} });
  assert.deepEqual(pong.structuredContent, { pong: true });
  assert.equal(pong.isError, undefined);

  const echo = await s.client.callTool({ name: "example-echo", arguments: { a: 1, nested: { b: [1, 2] } } });
  assert.deepEqual(echo.structuredContent, { echo: { a: 1, nested: { b: [1, 2] } } });
});

Deno.test("stdio server rejects invalid arguments with a VALIDATION_ERROR result naming the field", async () => {
  await using s = await startStdio({ args: ["--providers", "example"] });
  const result = await s.client.callTool({ name: "example-ping", arguments: { surprise: true } });
  assert.equal(result.isError, true);
  const content = result.content as { type: string; text: string }[];
  assert.match(content[0]!.text, /VALIDATION_ERROR/);
  assert.match(content[0]!.text, /"surprise"/);
  const payload = payloadOf(result);
  assert.equal(payload.error_type, "VALIDATION_ERROR");
  assert.equal(payload.retryable, false);
});

Deno.test("stdio server answers an unknown tool with JSON-RPC -32602", async () => {
  await using s = await startStdio({ args: ["--providers", "example"] });
  await assert.rejects(
    () => s.client.callTool({ name: "no-such-tool", arguments: {} }),
    (e: Error & { code?: number }) => e.code === -32602 && /Unknown tool "no-such-tool"/.test(e.message),
  );
});

Deno.test("cli call example-echo prints the result and exits 0", async () => {
  const r = await runCli(["call", "example-echo", "--providers", "example", "--args", '{"a":1}']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '{"a":1}');
});

Deno.test("stdio server answers malformed lines with JSON-RPC errors and keeps serving", async () => {
  await using s = await startStdio({ args: ["--providers", "example"] });
  await s.transport.sendRaw("{not json\n");
  await s.transport.sendRaw('{"hello":"world","id":7}\n');
  const pong = await s.client.callTool({ name: "example-ping", arguments: {} });
  assert.deepEqual(pong.structuredContent, { pong: true }, "the session survived");
  const errors = s.transport.stdoutLines.map((l) => JSON.parse(l)).filter((m) => m.error);
  assert.deepEqual(errors.map((m) => [m.id, m.error.code]), [[null, -32700], [7, -32600]]);
  for (const line of s.transport.stdoutLines) {
    assert.equal(JSON.parse(line).jsonrpc, "2.0", "stdout is JSON-RPC only");
  }
  const logs = s.stderr();
  assert.doesNotMatch(logs, /\n\s+at /, "no stack trace on stderr");
});

Deno.test("stdio server negotiates down to protocol 2024-11-05 for older clients", async () => {
  // The client's initialize must be the connection's first message: a second one is refused.
  const home = scratchHome();
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...startArgs(home), MAIN, "--providers", "example"],
      env: childEnv(home),
      clearEnv: true,
      cwd: home,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(`${
      JSON.stringify({
        jsonrpc: "2.0",
        id: "old-1",
        method: "initialize",
        params: {
          protocolVersion: "2024-11-05",
          capabilities: {},
          clientInfo: { name: "Agent Builder", version: "1" },
        },
      })
    }\n`));
    await writer.close();
    const out: Record<string, unknown>[] = [];
    for await (const line of lines(child.stdout)) out.push(JSON.parse(line));
    assert.equal((await child.status).code, 0);
    const reply = out.find((m) => m["id"] === "old-1") as
      | { result?: { protocolVersion?: string } }
      | undefined;
    assert.equal(reply?.result?.protocolVersion, "2024-11-05");
  } finally {
    removeHome(home);
  }
});

Deno.test("stdio server works with the SDK's own StdioClientTransport, as desktop clients launch it", async () => {
  const home = Deno.makeTempDirSync();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      ...startArgs(home),
      new URL("../../main.ts", import.meta.url).pathname,
      "--providers",
      "example",
    ],
    env: {
      HOME: home,
      PATH: Deno.env.get("PATH") ?? "",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "desktop-like", version: "1" });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: "example-echo", arguments: { from: "desktop" } });
    assert.deepEqual(result.structuredContent, { echo: { from: "desktop" } });
  } finally {
    await client.close();
  }
});

Deno.test("stdio server completes an optional prompt argument and serves the example resource", async () => {
  await using s = await startStdio({ args: ["--providers", "example"] });
  assert.ok(s.client.getServerCapabilities()?.completions, "completions are announced");
  const done = await s.client.complete({
    ref: { type: "ref/prompt", name: "example_ping_flow" },
    argument: { name: "note", value: "h" },
  });
  assert.deepEqual(done.completion.values, ["hello", "hei", "hallo"]);
  const prompt = await s.client.getPrompt({ name: "example_ping_flow", arguments: { note: "hei" } });
  assert.match(JSON.stringify(prompt.messages), /\\"note\\": \\"hei\\"/);
  const resource = await s.client.readResource({ uri: "example://about" });
  assert.match(JSON.stringify(resource.contents), /Example provider/);
});

Deno.test("stdio server skips an oversized message with -32600 and keeps the session", async () => {
  await using s = await startStdio({ args: ["--providers", "example"], env: { MCP_MAX_BODY_BYTES: "2048" } });
  const big = JSON.stringify({
    jsonrpc: "2.0",
    id: "big",
    method: "tools/call",
    params: { name: "example-echo", arguments: { blob: "x".repeat(10_000) } },
  });
  await s.transport.sendRaw(`${big}\n`);
  const small = await s.client.callTool({ name: "example-echo", arguments: { blob: "ok" } });
  assert.deepEqual(small.structuredContent, { echo: { blob: "ok" } });
  const refused = s.transport.stdoutLines.map((l) => JSON.parse(l)).find((m) => m.error?.code === -32600);
  assert.match(refused?.error.message ?? "", /larger than 2048 bytes/);
});
