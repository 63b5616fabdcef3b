// Per-client session shares as real clients meet them: several SDK v1 agents on one machine share
// one client key (the address), each holding a session and its GET listen stream. Reclaiming room
// must pick the longest-quiet session past its grace, never a fresh or busy one.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "../../harness/sdk_client.ts";
import { startHttpInProcess } from "../../harness/in_process.ts";
import { disableMetrics, enableMetrics } from "../../../lib/metrics/mod.ts";
import { RECLAIM_GRACE_MS } from "../../../lib/mcp/http/_sessions.ts";
import { BASE, initializeBody, listenStream, POST_HEADERS, startHarness } from "./_harness.ts";
import type { Harness } from "./_harness.ts";

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** GET listen streams a client's fetch opened, and how many the server ended. */
interface ListenStreams {
  opened: number;
  ended: number;
  /** Resolves once the first one is open. */
  first: Promise<void>;
}

/** `fetchFn` that counts the GET listen streams it opens and notices when the server ends them. */
function watchingListenStreams(fetchFn: Fetch): { fetch: Fetch; streams: ListenStreams } {
  const { promise, resolve } = Promise.withResolvers<void>();
  const streams: ListenStreams = { opened: 0, ended: 0, first: promise };
  const watched: Fetch = async (url, init) => {
    const res = await fetchFn(url, init);
    if (init?.method !== "GET" || !res.ok || res.body === null) return res;
    streams.opened++;
    resolve();
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        flush: () => {
          streams.ended++;
        },
      }),
    );
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: watched, streams };
}

/** An SDK v1 client connected over `fetchFn`, as an agent connects; its listen stream is open. */
async function agent(
  url: string,
  fetchFn: Fetch,
  name: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; streams: ListenStreams }> {
  const { fetch, streams } = watchingListenStreams(fetchFn);
  const client = new Client({ name, version: "0" }, { capabilities: {} });
  // No retry of a listen stream the server ended: a retry runs on real timers past the test.
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch,
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1,
      maxReconnectionDelay: 1,
      reconnectionDelayGrowFactor: 1,
    },
  });
  await client.connect(transport);
  await streams.first;
  return { client, transport, streams };
}

async function ping(client: Client): Promise<unknown> {
  return (await client.callTool({ name: "example-ping", arguments: {} })).structuredContent;
}

Deno.test("serveHttp() keeps 16 SDK v1 clients from one address, each with its session and listen stream, through 20 calls each", async () => {
  await using server = await startHttpInProcess({ args: ["--providers", "example"] });
  const agents = await Promise.all(
    Array.from({ length: 16 }, (_, i) => agent(`${server.origin}/mcp`, fetch, `agent-${i}`)),
  );
  try {
    const results = await Promise.allSettled(agents.map(async ({ client }) => {
      for (let call = 0; call < 20; call++) assert.deepEqual(await ping(client), { pong: true });
    }));
    const failed = results.filter((r) => r.status === "rejected");
    assert.deepEqual(failed, [], "every call of every agent succeeds");
    for (const [i, { streams }] of agents.entries()) {
      assert.equal(streams.opened, 1, `agent ${i} opened its listen stream once`);
      assert.equal(streams.ended, 0, `agent ${i} keeps its listen stream`);
    }
    const health = await (await fetch(`${server.origin}/health`)).json();
    assert.equal(health.sessions.streamable, 16, JSON.stringify(health.sessions));
    assert.doesNotMatch(server.stderr(), /session closed to make room/);
  } finally {
    await Promise.all(agents.map(({ client }) => client.close()));
  }
});

Deno.test("SessionStore reclaims the longest-quiet sessions of 40 SDK v1 clients from one address, in order, and the reclaimed client can start again", async () => {
  const m = enableMetrics();
  try {
    await using h = await startHarness({ providers: "example" });
    const agents = [];
    for (let i = 0; i < 40; i++) {
      const a = await agent(`${BASE}/mcp`, h.fetch, `agent-${i}`);
      assert.deepEqual(await ping(a.client), { pong: true }, `agent ${i} calls after connecting`);
      agents.push(a);
      h.clock.advance(1_000);
    }
    const evicted = h.logs.filter((l) => l["msg"] === "session closed to make room for a new one");
    assert.deepEqual(
      evicted.map((l) => l["session_id"]),
      agents.slice(0, 8).map((a) => a.transport.sessionId),
      "the eight quietest, oldest first",
    );
    assert.ok(evicted.every((l) => l["reason"] === "per_client_cap" && l["initialized"] === true));
    assert.equal(m.sessionEvictions.labels("per_client_cap").value, 8);
    for (const [i, a] of agents.slice(0, 8).entries()) {
      assert.equal(a.streams.ended, 1, `agent ${i}'s listen stream was ended by the server`);
    }
    const first = agents[0]!;
    await assert.rejects(ping(first.client), (e: Error & { code?: number }) => {
      assert.equal(e.code, 404, "the status that tells a client to initialize again");
      assert.match(e.message, /Session not found: it expired or was closed; send initialize/);
      return true;
    });
    for (const [i, a] of agents.slice(8).entries()) {
      assert.deepEqual(await ping(a.client), { pong: true }, `agent ${i + 8} keeps its session`);
      assert.equal(a.streams.ended, 0);
    }
    // The 404 is the SDK v1 client's cue to start over: a new session, taking the quietest's place.
    await first.client.close();
    h.clock.advance(1_000);
    const again = await agent(`${BASE}/mcp`, h.fetch, "agent-0-again");
    agents[0] = again;
    assert.deepEqual(await ping(again.client), { pong: true });
    assert.equal(m.sessionEvictions.labels("per_client_cap").value, 9);
    await Promise.all(agents.map(({ client }) => client.close()));
  } finally {
    disableMetrics();
  }
});

/** POSTs `body` as client `ip`, in session `id` if given. */
async function post(h: Harness, body: string, id?: string, ip = "198.51.100.20"): Promise<Response> {
  const headers = { ...POST_HEADERS, ...(id ? { "Mcp-Session-Id": id } : {}) };
  return await h.call(new Request(`${BASE}/mcp`, { method: "POST", headers, body }), ip);
}

/** Sends `initialize` only; returns the new session's id. */
async function initialize(h: Harness): Promise<string> {
  const res = await post(h, initializeBody());
  await res.text();
  assert.equal(res.status, 200);
  return res.headers.get("mcp-session-id")!;
}

async function initialized(h: Harness, id: string): Promise<number> {
  const res = await post(h, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), id);
  await res.body?.cancel();
  return res.status;
}

async function pingStatus(h: Harness, id: string): Promise<number> {
  const res = await post(h, JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }), id);
  await res.body?.cancel();
  return res.status;
}

Deno.test("SessionStore never reclaims a session between its initialize and notifications/initialized, nor within the grace period", async () => {
  await using h = await startHarness({ providers: "example", server: { max_sessions_per_client: 4 } });
  const old = [await initialize(h), await initialize(h)];
  for (const id of old) assert.equal(await initialized(h, id), 202);
  h.clock.advance(60_000);
  // Four clients connect at once: each sends initialize before any sends initialized.
  const fresh = [await initialize(h), await initialize(h), await initialize(h), await initialize(h)];
  assert.deepEqual(
    await Promise.all(old.map((id) => pingStatus(h, id))),
    [404, 404],
    "the old ones made room",
  );
  const refused = await post(h, initializeBody(5));
  assert.equal(refused.status, 429, "every session left is within its grace");
  const body = await refused.json();
  assert.equal(body.id, 5);
  assert.match(body.error.message, /opened less than 5 s ago \(MCP_SESSION_RECLAIM_GRACE\)/);
  for (const id of fresh) assert.equal(await initialized(h, id), 202, "each fresh session completes");
  for (const id of fresh) {
    assert.equal(await pingStatus(h, id), 200);
    h.clock.advance(1);
  }
  h.clock.advance(RECLAIM_GRACE_MS);
  assert.equal(await pingStatus(h, fresh[0]!), 200, "the first is used again");
  await initialize(h);
  assert.equal(await pingStatus(h, fresh[1]!), 404, "past the grace, the quietest makes room");
  for (const id of [fresh[0]!, fresh[2]!, fresh[3]!]) assert.equal(await pingStatus(h, id), 200);
});

Deno.test("SessionStore lets nine SDK v1 clients connecting at once from a busy address all connect", async () => {
  await using h = await startHarness({ providers: "example", server: { max_sessions_per_client: 10 } });
  const earlier = [];
  for (let i = 0; i < 8; i++) earlier.push(await agent(`${BASE}/mcp`, h.fetch, `earlier-${i}`));
  h.clock.advance(60_000);
  // At the same moment: the initializes arrive one by one, and each is answered before any
  // notifications/initialized arrives.
  const { promise: allInitialized, resolve } = Promise.withResolvers<void>();
  let waiting = 0;
  let previous: Promise<unknown> = Promise.resolve();
  const together: Fetch = async (url, init) => {
    const body = typeof init?.body === "string" ? init.body : "";
    if (body.includes('"notifications/initialized"')) {
      if (++waiting === 9) resolve();
      await allInitialized;
    }
    if (!body.includes('"initialize"')) return await h.fetch(url, init);
    const answered = previous.then(() => h.fetch(url, init));
    previous = answered.catch(() => {});
    return await answered;
  };
  const nine = await Promise.allSettled(
    Array.from({ length: 9 }, (_, i) => agent(`${BASE}/mcp`, together, `now-${i}`)),
  );
  const connected = nine.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  try {
    assert.equal(connected.length, 9, "all nine connect");
    for (const a of connected) assert.deepEqual(await ping(a.client), { pong: true });
    const evicted = h.logs.filter((l) => l["msg"] === "session closed to make room for a new one");
    assert.deepEqual(
      new Set(evicted.map((l) => l["session_id"])),
      new Set(earlier.slice(0, 7).map((a) => a.transport.sessionId)),
      "room came from the earlier, quiet sessions",
    );
  } finally {
    await Promise.all([...earlier, ...connected].map(({ client }) => client.close()));
  }
});

Deno.test("serveHttp() gives one address 32 subscriptions/listen streams at the defaults, and refuses the 33rd", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "conformance"],
    // A stream whose client left is noticed at its next keep-alive, so shutdown need not wait.
    env: { MCP_KEEPALIVE_INTERVAL: "0.2" },
  });
  const abort = new AbortController();
  const listen = (id: number): Promise<Response> => listenStream(server.origin, id, { signal: abort.signal });
  const streams: Response[] = [];
  try {
    for (let id = 1; id <= 32; id++) streams.push(await listen(id));
    assert.deepEqual(streams.map((r) => r.status), Array(32).fill(200), "16 agents, twice over");
    const over = await listen(33);
    assert.equal(over.status, 429, "the share still holds");
    await over.body?.cancel();
  } finally {
    abort.abort();
    for (const r of streams) await r.body?.cancel().catch(() => {});
  }
});
