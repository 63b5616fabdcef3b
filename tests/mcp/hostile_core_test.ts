// Red-team findings against the core (docs/SECURITY.md), each reproduced against the real server (in
// process; a spawned one where the client closes the process's stdout): deep nesting, duplicate
// in-flight ids, a client that stops reading stdout, non-URL resource URIs, and an HTTP/1.1
// request without a Host header. Every request gets an answer; nothing hangs.
import assert from "node:assert/strict";
import { childEnv, entryOf, removeHome, scratchHome, startArgs } from "../harness/spawn.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { startHttpInProcess, startInProcess } from "../harness/in_process.ts";

/** The server these tests spawn: the sources' main.ts. */
const MAIN = entryOf({});

/** A tools/call whose arguments nest `depth` objects (or arrays) deep. */
function deepCall(id: number, depth: number, kind: "object" | "array"): string {
  const open = kind === "object" ? '{"a":'.repeat(depth) : "[".repeat(depth);
  const close = kind === "object" ? "}".repeat(depth) : "]".repeat(depth);
  const args = kind === "object" ? `${open}1${close}` : `{"a":${open}1${close}}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"example-echo","arguments":${args}}}`;
}

/** Polls `check` every 10 ms for up to `ms`; the bound is a guard against hangs, not a wait. */
async function until<T>(check: () => T | undefined, ms = 10_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (performance.now() > end) throw new Error(`nothing arrived within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("stdio answers deeply nested arguments with -32600 at once and keeps serving", async () => {
  await using s = await startInProcess({ args: ["--providers", "example"] });
  await s.transport.sendRaw(`${deepCall(101, 6000, "object")}\n${deepCall(102, 20_000, "array")}\n`);
  const replies = await until(() => {
    const got = s.transport.stdoutLines.map((l) => JSON.parse(l)).filter((m) => m.id === 101 || m.id === 102);
    return got.length === 2 ? got : undefined;
  });
  for (const reply of replies) {
    assert.equal(reply.error?.code, -32600, JSON.stringify(reply).slice(0, 200));
    assert.match(reply.error.message, /nests objects and arrays more than 64 levels deep/);
  }
  const after = await s.client.callTool({ name: "example-echo", arguments: { still: "here" } });
  assert.deepEqual(after.structuredContent, { echo: { still: "here" } });
});

Deno.test("HTTP answers deeply nested arguments with -32600 instead of an empty stream", async () => {
  await using server = await startHttpInProcess({ args: ["--providers", "example", "--stateless"] });
  for (const [depth, kind] of [[6000, "object"], [20_000, "array"]] as const) {
    const res = await fetch(`${server.origin}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" },
      body: deepCall(7, depth, kind),
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.code, -32600);
    assert.equal(body.id, 7);
  }
});

Deno.test("tools/call keeps structuredContent within the character limit for maps of many small entries", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example"],
    env: { MCP_CHARACTER_LIMIT: "5000" },
  });
  await s.client.listTools(); // The client then checks each result against the tool's output schema.
  const cases: Record<string, Record<string, unknown>> = {
    "many keys": Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])),
    "many short lists": Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, [1, 2]])),
    "a long string": { pad: "x".repeat(200_000) },
  };
  for (const [label, args] of Object.entries(cases)) {
    const r = await s.client.callTool({ name: "example-echo", arguments: args });
    assert.equal(r.isError, undefined, label);
    const size = JSON.stringify(r.structuredContent).length;
    assert.ok(size <= 5000, `${label}: structuredContent has ${size} characters`);
    const blocks = (r.content as { text: string }[]).map((b) => b.text);
    const text = blocks.join("");
    assert.ok(text.length <= 5000, `${label}: text has ${text.length} characters`);
    assert.match(text, /structuredContent was shortened to fit the 5000-character limit/, label);
    // The echo's text is its structured content as JSON: it stays that, the note comes apart.
    assert.deepEqual(JSON.parse(blocks[0]!), r.structuredContent, label);
  }
});

Deno.test("stdio refuses a request id already in flight and still answers both requests", async () => {
  await using fake = FakeUpstream.start([{
    path: "/api/v3/wds",
    reply: { json: { total: 0, documents: {} }, delayMs: 400 },
  }]);
  await using s = await startInProcess({
    args: ["--providers", "worldbank"],
    configYaml: `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n`,
  });
  const call =
    '{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"worldbank_search_documents","arguments":{"query":"x"}}}';
  await s.transport.sendRaw(`${call}\n${call}\n`);
  const replies = await until(() => {
    const got = s.transport.stdoutLines.map((l) => JSON.parse(l)).filter((m) => m.id === "dup");
    return got.length === 2 ? got : undefined;
  });
  assert.equal(replies.filter((r) => r.error?.code === -32600).length, 1, "the newcomer is refused");
  assert.equal(replies.filter((r) => r.result).length, 1, "the first request is answered");
  assert.match(
    replies.find((r) => r.error)!.error.message,
    /already in use by a request still being answered/,
  );
});

Deno.test("HTTP: 20 concurrent POSTs reusing one id in a session all get an answer", async () => {
  await using fake = FakeUpstream.start([{
    path: "/api/v3/wds",
    reply: { json: { total: 0, documents: {} }, delayMs: 300 },
  }]);
  await using server = await startHttpInProcess({
    args: ["--providers", "worldbank"],
    configYaml: `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n`,
    env: { MCP_SESSION_IDLE_TIMEOUT: "5" },
  });
  const headers = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
  const init = await fetch(`${server.origin}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "dup", version: "0" } },
    }),
  });
  const session = init.headers.get("mcp-session-id")!;
  await init.body?.cancel();
  const withSession = { ...headers, "Mcp-Session-Id": session };
  await (await fetch(`${server.origin}/mcp`, {
    method: "POST",
    headers: withSession,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  })).body?.cancel();
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "worldbank_search_documents", arguments: { query: "x" } },
  });
  const answers = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const controller = AbortSignal.timeout(15_000);
      const res = await fetch(`${server.origin}/mcp`, {
        method: "POST",
        headers: withSession,
        body,
        signal: controller,
      });
      return { status: res.status, text: await res.text() };
    }),
  );
  const answered = answers.filter((a) => a.text.includes('"result"'));
  const refused = answers.filter((a) => a.status === 400 && a.text.includes("already in use"));
  assert.ok(answered.length >= 1, "at least one call ran");
  assert.equal(answered.length + refused.length, 20, JSON.stringify(answers.map((a) => a.status)));
  // The session is not left busy: it can be closed at once.
  const closed = await fetch(`${server.origin}/mcp`, { method: "DELETE", headers: withSession });
  assert.equal(closed.status, 200);
});

Deno.test("stdio: a client that stops reading ends the session quietly, exit 0, no stack trace", async () => {
  const home = scratchHome();
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...startArgs(home), MAIN, "--providers", "example"],
      env: childEnv(home),
      clearEnv: true,
      cwd: home,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "epipe", version: "0" },
      },
    });
    await writer.write(new TextEncoder().encode(`${init}\n`));
    // Stop reading: close our end of the server's stdout, then ask for more answers.
    await child.stdout.cancel();
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "example-echo", arguments: { pad: "x".repeat(20_000) } },
    });
    for (let i = 0; i < 50; i++) {
      try {
        await writer.write(new TextEncoder().encode(`${big.replace('"id":1', `"id":${i + 1}`)}\n`));
      } catch {
        break; // The server went away: what this test waits for.
      }
    }
    await writer.close().catch(() => {});
    const out = await child.output().catch(() => undefined);
    const status = await child.status;
    const stderr = new TextDecoder().decode(out?.stderr ?? new Uint8Array());
    assert.equal(status.code, 0, stderr);
    assert.doesNotMatch(stderr, /Uncaught|EPIPE.*\n\s+at |MaxListenersExceeded/);
    // One line says why the session ended; nothing else is logged as an error.
    assert.equal(stderr.match(/stdout closed by the client; ending the session/g)?.length, 1, stderr);
    assert.doesNotMatch(stderr, /"level":"error"/, stderr);
  } finally {
    removeHome(home);
  }
});

Deno.test("resources/read with a URI that is not a URL answers -32602", async () => {
  await using s = await startInProcess({ args: ["--providers", "boj"] });
  for (const uri of ["", "x", "../../etc/passwd"]) {
    await assert.rejects(
      () => s.client.readResource({ uri }),
      (e: Error & { code?: number }) => e.code === -32602,
      uri,
    );
  }
});

Deno.test("an HTTP/1.1 request without a Host header gets 400", async () => {
  await using server = await startHttpInProcess({ args: ["--providers", "example"] });
  using conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await conn.write(new TextEncoder().encode("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"));
  const buf = new Uint8Array(4096);
  let text = "";
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  assert.match(text, /^HTTP\/1\.1 400 /, text);
  assert.match(text, /a Host header is required/);
});
