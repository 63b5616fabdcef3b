import assert from "node:assert/strict";
import { runCli, startStdio } from "../fakes/server.ts";

Deno.test("stdio server answers initialize with protocol 2025-11-25 and serves the example tools", async () => {
  await using s = await startStdio({ args: ["--providers", "example"] });
  assert.equal(s.client.getServerVersion()?.name, "opendata-mcp");
  const { tools } = await s.client.listTools();
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
  const payload = JSON.parse(content[1]!.text);
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
