// Session exhaustion: a flood of idle sessions must not lock new clients out.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "../../harness/sdk_client.ts";
import { RECLAIM_GRACE_MS } from "../../../lib/mcp/http/_sessions.ts";
import { BASE, initializeBody, openSession, POST_HEADERS, postMcp, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";
import { startHttpInProcess } from "../../harness/in_process.ts";

const PING = JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" });

/** Sends only `initialize` (never `notifications/initialized`); returns the session id. */
async function halfOpen(h: Harness, ip?: string): Promise<string> {
  const res = await h.call(
    new Request(`${BASE}/mcp`, { method: "POST", headers: POST_HEADERS, body: initializeBody() }),
    ip,
  );
  await res.text();
  assert.equal(res.status, 200);
  return res.headers.get("mcp-session-id")!;
}

async function pingStatus(h: Harness, id: string): Promise<number> {
  const res = await postMcp(h, PING, { "Mcp-Session-Id": id });
  await res.body?.cancel();
  return res.status;
}

Deno.test("SessionStore at max_sessions closes another client's session that never completed initialization, after its grace", async () => {
  await using h = await startHarness({ server: { max_sessions: 2 } });
  const established = await openSession(h);
  h.clock.advance(1_000);
  const half = await halfOpen(h);
  const newcomer = () =>
    h.call(
      new Request(`${BASE}/mcp`, { method: "POST", headers: POST_HEADERS, body: initializeBody(3) }),
      "203.0.113.50",
    );
  const early = await newcomer();
  await early.text();
  assert.equal(early.status, 503, "within its grace an unfinished session is not taken");
  h.clock.advance(RECLAIM_GRACE_MS);
  const fresh = await newcomer();
  assert.equal(fresh.status, 200, "the new client gets a session");
  await fresh.text();
  assert.equal(await pingStatus(h, half), 404, "the unfinished one made room");
  assert.equal(await pingStatus(h, established), 200, "the initialized one, though older, stays");
  const evicted = h.logs.find((l) => l["msg"] === "session closed to make room for a new one");
  assert.equal(evicted?.["session_id"], half);
  assert.equal(evicted?.["reason"], "max_sessions");
  assert.equal(evicted?.["initialized"], false);
});

Deno.test("SessionStore at max_sessions refuses a newcomer while every session was active within session_reclaim_idle, then takes the oldest idle one", async () => {
  await using h = await startHarness({ server: { max_sessions: 2, session_reclaim_idle: 60 } });
  const older = await openSession(h);
  const newer = await openSession(h);
  h.clock.advance(30_000);
  const refused = await h.call(
    new Request(`${BASE}/mcp`, { method: "POST", headers: POST_HEADERS, body: initializeBody(5) }),
    "203.0.113.50",
  );
  assert.equal(refused.status, 503);
  const body = await refused.json();
  assert.equal(body.id, 5, "the refusal answers the initialize by its id");
  assert.equal(body.error.code, -32000);
  assert.match(body.error.message, /The server is full: all 2 sessions \(MCP_MAX_SESSIONS\)/);
  assert.equal(refused.headers.get("retry-after"), "30");
  assert.equal(await pingStatus(h, older), 200, "the live sessions are untouched");
  assert.equal(await pingStatus(h, newer), 200);
  h.clock.advance(40_000);
  assert.equal(await pingStatus(h, older), 200, "the older session is used again");
  h.clock.advance(30_000);
  // newer idle 70 s (> 60), older 30 s: newer goes.
  await openSession(h);
  assert.equal(await pingStatus(h, newer), 404, "the one idle past session_reclaim_idle made room");
  assert.equal(await pingStatus(h, older), 200);
});

Deno.test("SessionStore holds max_sessions_per_client by closing that client's own idle sessions", async () => {
  await using h = await startHarness({ server: { max_sessions: 10, max_sessions_per_client: 2 } });
  const victim = await halfOpen(h, "198.51.100.7");
  const flood: string[] = [];
  for (let i = 0; i < 6; i++) {
    h.clock.advance(RECLAIM_GRACE_MS);
    flood.push(await halfOpen(h, "203.0.113.9"));
  }
  assert.deepEqual(h.handler.sessions(), { streamable: 3, sse: 0 }, "the flooding client holds 2");
  assert.equal(await pingStatus(h, victim), 200, "another client's session is untouched");
  assert.equal(await pingStatus(h, flood[0]!), 404);
  assert.equal(await pingStatus(h, flood[5]!), 200);
  const evicted = h.logs.filter((l) => l["msg"] === "session closed to make room for a new one");
  assert.ok(evicted.every((l) => l["reason"] === "per_client_cap"));
});

Deno.test("SessionStore.sweep() closes sessions that did not complete initialization within session_init_timeout", async () => {
  await using h = await startHarness({ server: { session_init_timeout: 5, session_idle_timeout: 600 } });
  const half = await halfOpen(h);
  const done = await openSession(h);
  h.clock.advance(4_000);
  assert.equal(h.handler.sweep(), 0, "not yet");
  h.clock.advance(2_000);
  assert.equal(h.handler.sweep(), 1);
  assert.equal(await pingStatus(h, half), 404);
  assert.equal(await pingStatus(h, done), 200);
  assert.ok(h.logs.some((l) => l["msg"] === "session expired before initialization completed"));
});

Deno.test("serve over HTTP: after a flood of idle sessions from one client, a new client still gets one", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    // The flood comes from this test's own address, on the real clock: no grace, or the flood's
    // own sessions, all younger than it, could not make room for the late-comer.
    env: { MCP_MAX_SESSIONS: "10", MCP_SESSION_RECLAIM_GRACE: "0" },
  });
  const post = async (body: string, session?: string): Promise<Response> =>
    await fetch(`${server.origin}/mcp`, {
      method: "POST",
      headers: { ...POST_HEADERS, ...(session ? { "Mcp-Session-Id": session } : {}) },
      body,
    });
  // Ten sessions that only initialize, then ten that complete initialization and go quiet.
  for (const finish of [false, true]) {
    for (let i = 0; i < 10; i++) {
      const res = await post(initializeBody(i));
      await res.text();
      assert.equal(res.status, 200, `flood session ${i}`);
      if (finish) {
        const id = res.headers.get("mcp-session-id")!;
        const done = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), id);
        await done.body?.cancel();
      }
    }
    const client = new Client({ name: "late-comer", version: "0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    const pong = await client.callTool({ name: "example-ping", arguments: {} });
    assert.deepEqual(pong.structuredContent, { pong: true });
    await client.close();
    const health = await (await fetch(`${server.origin}/health`)).json();
    assert.ok(health.sessions.streamable <= 10, JSON.stringify(health.sessions));
  }
  await server.logged(/"msg":"session closed to make room for a new one"/);
});
