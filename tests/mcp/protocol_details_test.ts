// Protocol details a red-team review found, each against the real server over the real
// transports (in process; its exit code is what run() resolves to): batches answered element by
// element, a second initialize refused with its own id, a malformed progressToken as -32602,
// opendata_call's string arguments held to the depth limit, stdio's era fixed by the first
// request, and calls in flight answered after the client closes stdin.
import assert from "node:assert/strict";
import { errorOf } from "../harness/results.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { serveInProcess, startHttpInProcess, startInProcess } from "../harness/in_process.ts";

const HEADERS = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
const INIT = (id: number | string, version = "2025-03-26") => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "0" } },
});
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Every JSON-RPC message of an HTTP answer: a JSON body (one or an array) or SSE events. */
async function messagesOf(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
  }
  const body = JSON.parse(text);
  return Array.isArray(body) ? body : [body];
}

/** Runs the stdio server on `input` lines, closing stdin after them; its answers and exit code. */
async function stdioRun(
  input: unknown[],
  configYaml?: string,
  args = ["--providers", "example"],
): Promise<{ out: Record<string, unknown>[]; code: number }> {
  await using server = serveInProcess({ args, ...(configYaml === undefined ? {} : { configYaml }) });
  await server.transport.sendRaw(input.map((m) => `${JSON.stringify(m)}\n`).join(""));
  await server.transport.close();
  const code = await server.exited;
  return { out: server.transport.stdoutLines.map((l) => JSON.parse(l)), code };
}

const byId = (out: Record<string, unknown>[], id: unknown) => out.find((m) => m["id"] === id);
const codeOf = (m: Record<string, unknown> | undefined) =>
  (m?.["error"] as { code?: number } | undefined)?.code;

Deno.test("HTTP answers each element of a batch and refuses a second initialize with its own id", async () => {
  await using server = await startHttpInProcess({ args: ["--providers", "example"] });
  const url = `${server.origin}/mcp`;
  const init = await fetch(url, { method: "POST", headers: HEADERS, body: JSON.stringify(INIT(1)) });
  const session = init.headers.get("mcp-session-id")!;
  await init.body?.cancel();
  assert.ok(session, "a session was opened");
  const inSession = { ...HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-03-26" };
  await (await fetch(url, {
    method: "POST",
    headers: inSession,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  })).body?.cancel();

  const again = await fetch(url, { method: "POST", headers: inSession, body: JSON.stringify(INIT(7)) });
  const [refused] = await messagesOf(again);
  assert.equal(again.status, 400);
  assert.equal(refused!["id"], 7, "the answer carries the request's id");
  assert.equal(codeOf(refused), -32600);

  const batch = await fetch(url, {
    method: "POST",
    headers: inSession,
    body: JSON.stringify([
      { jsonrpc: "2.0", id: 11, method: "ping" },
      { jsonrpc: "1.0", id: 12, method: "ping" },
      { jsonrpc: "2.0", id: 13, method: "ping", params: { _meta: { progressToken: { a: 1 } } } },
    ]),
  });
  const answers = await messagesOf(batch);
  assert.deepEqual(byId(answers, 11)?.["result"], {}, JSON.stringify(answers));
  assert.equal(codeOf(byId(answers, 12)), -32600);
  assert.equal(codeOf(byId(answers, 13)), -32602);
  assert.match(JSON.stringify(byId(answers, 13)), /progressToken/);

  const onlyBad = await fetch(url, {
    method: "POST",
    headers: inSession,
    body: JSON.stringify([{ jsonrpc: "1.0", id: 21, method: "ping" }, { jsonrpc: "2.0", id: 22 }]),
  });
  assert.equal(onlyBad.status, 400);
  assert.deepEqual((await messagesOf(onlyBad)).map((m) => [m["id"], codeOf(m)]), [[21, -32600], [
    22,
    -32600,
  ]]);

  const token = await fetch(url, {
    method: "POST",
    headers: inSession,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 31,
      method: "tools/call",
      params: { name: "example-ping", arguments: {}, _meta: { progressToken: { nested: true } } },
    }),
  });
  const [tokenAnswer] = await messagesOf(token);
  assert.equal(codeOf(tokenAnswer), -32602, JSON.stringify(tokenAnswer));
  assert.equal(tokenAnswer!["id"], 31);
});

Deno.test("opendata_call holds arguments sent as a string to the depth limit", async () => {
  await using s = await startInProcess({ args: ["--providers", "example"] });
  const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
  const e = errorOf(
    await s.client.callTool({ name: "opendata_call", arguments: { tool: "example-echo", arguments: deep } }),
  );
  assert.equal(e["error_type"], "VALIDATION_ERROR");
  assert.equal(e["field"], "arguments");
  assert.match(String(e["message"]), /more than 61 levels deep/);
  const shallow = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "example-echo", arguments: JSON.stringify({ a: { b: 1 } }) },
  });
  assert.deepEqual(shallow.structuredContent, { echo: { a: { b: 1 } } });
});

Deno.test("stdio: the first request fixes the era, and a second initialize is refused", async () => {
  const legacy = await stdioRun([
    INIT(1, "2025-06-18"),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    INIT(2, "2025-06-18"),
    { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: MODERN_META } },
    { jsonrpc: "2.0", id: 4, method: "ping" },
  ]);
  assert.ok(byId(legacy.out, 1)?.["result"], "the first initialize succeeds");
  assert.equal(codeOf(byId(legacy.out, 2)), -32600);
  assert.equal(codeOf(byId(legacy.out, 3)), -32600, "no 2026 request on a 2025 session");
  assert.deepEqual(byId(legacy.out, 4)?.["result"], {}, "the session goes on");

  const modern = await stdioRun([
    // A server/discover probe fixes nothing (tests/mcp/eras_test.ts); a 2026 request does.
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: MODERN_META } },
    INIT(2, "2025-06-18"),
    { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} },
    { jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: MODERN_META } },
  ]);
  assert.ok(byId(modern.out, 1)?.["result"], JSON.stringify(modern.out).slice(0, 300));
  assert.equal(codeOf(byId(modern.out, 2)), -32022, "initialize after a 2026 request");
  assert.equal(codeOf(byId(modern.out, 3)), -32022, "a request without the envelope");
  assert.ok((byId(modern.out, 4)?.["result"] as { tools?: unknown[] })?.tools?.length);
});

Deno.test("stdio: an unanswered server/discover probe does not refuse the initialize that follows it", async () => {
  // @ai-sdk/mcp probes with server/discover, gives up after 1 s and sends initialize on the same
  // pipe; a server slower than that to start reads both at once.
  const { out } = await stdioRun([
    { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: MODERN_META } },
    INIT(2, "2025-11-25"),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "example-ping", arguments: {} } },
  ]);
  const init = byId(out, 2);
  assert.equal(init?.["error"], undefined, JSON.stringify(init));
  assert.equal((init?.["result"] as { protocolVersion?: string }).protocolVersion, "2025-11-25");
  assert.deepEqual((byId(out, 3)?.["result"] as { structuredContent?: unknown }).structuredContent, {
    pong: true,
  });
});

Deno.test("stdio answers a call still in flight when the client closes stdin, then exits 0", async () => {
  await using fake = FakeUpstream.start([{
    path: "/fred/series",
    reply: { delayMs: 300, json: { seriess: [{ id: "SLOW", title: "Slow series" }] } },
  }]);
  const config =
    `providers:\n  fred:\n    base_url: "${fake.origin}"\n    api_key: "0123456789abcdef0fedcba987654321"\n` +
    "    cache_ttl: 0\n    rate_limit_per_minute: 0\n    rate_limit_per_second: 0\n";
  const { out, code } = await stdioRun(
    [
      INIT(1, "2025-06-18"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "fred_series", arguments: { operation: "get", series_id: "SLOW" } },
      },
    ],
    config,
    ["--providers", "fred"],
  );
  assert.equal(code, 0);
  const answer = byId(out, 2)?.["result"] as { isError?: boolean; structuredContent?: unknown } | undefined;
  assert.ok(answer, `the call was answered: ${JSON.stringify(out).slice(0, 300)}`);
  assert.notEqual(answer.isError, true);
  assert.equal(fake.requestsTo("/fred/series").length, 1);
});
