import assert from "node:assert/strict";
import { BASE, openSession, postMcp, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";
import { parseConfig } from "../../../lib/config/parse.ts";
import { TEST_PROVIDERS } from "../../harness/providers.ts";

function toolCall(id: number, name: string, args: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

function accessLines(h: Harness): Record<string, unknown>[] {
  return h.logs.filter((l) => l["msg"] === "http request");
}

async function call(h: Harness, session: string, id: number, name: string, args = {}): Promise<void> {
  const res = await postMcp(h, toolCall(id, name, args), { "Mcp-Session-Id": session });
  assert.equal(res.status, 200);
  await res.text();
}

Deno.test("access_log off writes the lines of errors only: refused requests and failed tool calls", async () => {
  await using h = await startHarness({ server: { access_log: "off" } });
  const session = await openSession(h);
  await call(h, session, 1, "example-echo", { a: 1 });
  assert.deepEqual(accessLines(h), [], "requests that went well leave no line");
  assert.ok(!h.logs.some((l) => l["msg"] === "tool call"), "nor does their tool call");
  await call(h, session, 2, "example-ping", { not_an_argument: true });
  const failed = accessLines(h);
  assert.equal(failed.length, 1, "a failed call is an error worth its line");
  assert.equal(failed[0]!["tool_name"], "example-ping");
  assert.equal(failed[0]!["tool_status"], "error");
  assert.equal(failed[0]!["status"], 200);
  const missing = await h.fetch(`${BASE}/nope`);
  await missing.body?.cancel();
  assert.equal(accessLines(h).at(-1)!["status"], 404);
  assert.equal(accessLines(h).length, 2);
});

Deno.test("access_log sampled writes one in access_log_sample ordinary requests, and every error", async () => {
  await using h = await startHarness({ server: { access_log: "sampled", access_log_sample: 3 } });
  for (let i = 0; i < 6; i++) {
    const res = await h.fetch(`${BASE}/`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
  assert.equal(accessLines(h).length, 2, "two in six");
  assert.ok(accessLines(h).every((l) => l["path"] === "/" && typeof l["duration_ms"] === "number"));
  for (let i = 0; i < 2; i++) {
    const res = await h.fetch(`${BASE}/nope`);
    await res.body?.cancel();
  }
  assert.deepEqual(
    accessLines(h).slice(2).map((l) => l["status"]),
    [404, 404],
    "errors are never sampled out",
  );
});

Deno.test("access_log all writes one line per request, a call's outcome on it, and no separate tool call line", async () => {
  await using h = await startHarness();
  const session = await openSession(h);
  const before = accessLines(h).length;
  await call(h, session, 1, "example-echo", { a: 1 });
  await call(h, session, 2, "example-echo", { a: 2 });
  const lines = accessLines(h).slice(before);
  assert.equal(lines.length, 2);
  for (const line of lines) {
    assert.equal(line["tool_name"], "example-echo");
    assert.equal(line["tool_status"], "ok");
    assert.equal(line["session_id"], session);
    assert.equal(line["rpc_method"], "tools/call");
  }
  assert.ok(!h.logs.some((l) => l["msg"] === "tool call"));
});

Deno.test("parseConfig() reads MCP_ACCESS_LOG and MCP_ACCESS_LOG_SAMPLE, and refuses an unknown mode", () => {
  const parse = (env: Record<string, string>) => parseConfig({ flags: {}, env }, TEST_PROVIDERS).server;
  assert.equal(parse({}).access_log, "all");
  assert.equal(parse({}).access_log_sample, 100);
  const sampled = parse({ MCP_ACCESS_LOG: "sampled", MCP_ACCESS_LOG_SAMPLE: "10" });
  assert.equal(sampled.access_log, "sampled");
  assert.equal(sampled.access_log_sample, 10);
  assert.throws(() => parse({ MCP_ACCESS_LOG: "some" }), /access_log/);
});
