// Fair share over the real HTTP server (`serve` in process, behind its connection guard): a full
// server refuses the newcomer instead of closing another client's live session; IPv6 addresses
// of one /64 are one client; one address cannot take every connection, and /health still
// answers when the server is full; subscriptions/listen streams are capped per client and in
// all. Clients are real: the SDK client, fetch, and sockets bound to chosen loopback addresses.
import assert from "node:assert/strict";
import net from "node:net";
import { Client, StreamableHTTPClientTransport } from "../../harness/sdk_client.ts";
import { ok } from "../../harness/results.ts";
import { startHttpInProcess } from "../../harness/in_process.ts";
import { listenStream } from "./_harness.ts";

const INIT_PARAMS = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "newcomer", version: "0" },
};
const POST_HEADERS = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };

/** A real SDK session whose requests carry `X-Forwarded-For: address` (the server trusts it). */
async function sdkSession(origin: string, address: string): Promise<Client> {
  const client = new Client({ name: "victim", version: "0" }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { "X-Forwarded-For": address } },
    }),
  );
  return client;
}

/** The server's /metrics text (no token is set, so it is open). */
async function scrape(origin: string): Promise<string> {
  const res = await fetch(`${origin}/metrics`);
  assert.equal(res.status, 200);
  return await res.text();
}

Deno.test("serveHttp() at max_sessions refuses newcomers from other addresses with 503 and the initialize id; every live session stays", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { MCP_TRUST_PROXY: "true", MCP_MAX_SESSIONS: "3" },
  });
  const victims = [
    await sdkSession(server.origin, "198.51.100.1"),
    await sdkSession(server.origin, "198.51.100.1"),
    await sdkSession(server.origin, "198.51.100.2"),
  ];
  try {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.origin}/mcp`, {
        method: "POST",
        headers: { ...POST_HEADERS, "X-Forwarded-For": `203.0.113.${i + 1}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 100 + i, method: "initialize", params: INIT_PARAMS }),
      });
      const body = await res.json();
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("retry-after"), "30");
      assert.equal(body.id, 100 + i, "the refusal answers the initialize it refuses");
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /^The server is full: all 3 sessions \(MCP_MAX_SESSIONS\) are in use/);
      assert.match(body.error.message, /no one's live session is closed for a newcomer/);
    }
    for (const victim of victims) {
      ok(await victim.callTool({ name: "example-ping", arguments: {} }));
    }
    assert.match(await scrape(server.origin), /^opendata_http_share_refusals_total\{limit="sessions"\} 20$/m);
  } finally {
    for (const victim of victims) await victim.close().catch(() => {});
  }
});

Deno.test("serveHttp() counts the addresses of one IPv6 /64 as one client for the rate limit; another /64 is untouched", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { MCP_TRUST_PROXY: "true", RATE_LIMIT_ENABLED: "true", RATE_LIMIT_PER_MINUTE: "10" },
  });
  const statuses: number[] = [];
  for (let i = 1; i <= 15; i++) {
    const res = await fetch(`${server.origin}/`, {
      headers: { "X-Forwarded-For": `2001:db8::${i.toString(16)}` },
    });
    await res.body?.cancel();
    statuses.push(res.status);
  }
  assert.deepEqual(statuses, [...Array(10).fill(200), ...Array(5).fill(429)], "15 addresses, one budget");
  const other = await fetch(`${server.origin}/`, { headers: { "X-Forwarded-For": "2001:db8:0:1::1" } });
  await other.body?.cancel();
  assert.equal(other.status, 200, "the neighbouring /64 keeps its own budget");
});

/** A TCP connection to `port` from loopback address `local`, once connected. */
function connectFrom(local: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: local });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** What arrives on `socket` until it closes or `ms` pass. */
function readAll(socket: net.Socket, ms: number): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(done, ms);
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.once("close", done);
    socket.once("error", done);
  });
}

/** The head of a POST whose 1,000-byte body will never finish arriving. */
const SLOW_POST = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
  "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{";

Deno.test("serveHttp() holds max_connections_per_client against a slow-body flood from one address, and /health answers even when the server is full", async (t) => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { MCP_MAX_CONNECTIONS: "6", MCP_MAX_CONNECTIONS_PER_CLIENT: "4", MCP_BODY_TIMEOUT: "60" },
  });
  const open: net.Socket[] = [];
  try {
    await t.step("one address gets 4 connections; its next ones are refused with what to do", async () => {
      for (let i = 0; i < 4; i++) {
        const s = await connectFrom("127.0.0.2", server.port);
        open.push(s);
        s.write(SLOW_POST);
      }
      // Give the guard a moment to count them (the head is what it counts as in flight).
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 3; i++) {
        const extra = await connectFrom("127.0.0.2", server.port);
        const reply = readAll(extra, 10_000);
        extra.write(SLOW_POST);
        const text = await reply;
        extra.destroy();
        assert.match(text, /^HTTP\/1\.1 503 /, text);
        assert.match(
          text,
          /Too many connections from your address: it holds 4, the most one client may \(MCP_MAX_CONNECTIONS_PER_CLIENT\)/,
        );
      }
    });

    await t.step("another address is served meanwhile", async () => {
      // Its own HTTP client, closed after: no keep-alive connection is left to count later.
      using client = Deno.createHttpClient({});
      const res = await fetch(`${server.origin}/`, { client });
      await res.body?.cancel();
      assert.equal(res.status, 200);
      // The refusals are counted as the client's share, apart from a full server's.
      const metrics = await fetch(`${server.origin}/metrics`, { client });
      const text = await metrics.text();
      assert.match(text, /^opendata_http_connection_events_total\{event="refused_per_client"\} 3$/m);
      assert.match(text, /^opendata_http_connection_events_total\{event="refused"\} 0$/m);
    });

    await t.step(
      "with every slot held by slow bodies, /health is answered from the reserve; other requests get 503",
      async () => {
        for (let i = 0; i < 2; i++) {
          const s = await connectFrom("127.0.0.3", server.port);
          open.push(s);
          s.write(SLOW_POST);
        }
        await new Promise((r) => setTimeout(r, 200));
        for (let i = 0; i < 3; i++) {
          const health = await fetch(`${server.origin}/health`);
          const body = await health.json();
          assert.equal(health.status, 200);
          assert.equal(body.status, "ok");
        }
        // On a connection of its own (a kept-alive one from the /health probes would be reused),
        // asked again while the guard may still be counting the slow bodies' heads on a loaded
        // machine: it must come to 503, and nothing but 503 or a 200 before that is allowed.
        let root: Response | undefined;
        let text = "";
        for (const until = Date.now() + 10_000; Date.now() < until;) {
          using client = Deno.createHttpClient({});
          root = await fetch(`${server.origin}/`, { client });
          text = await root.text();
          if (root.status !== 200) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(root?.status, 503, text);
        assert.match(text, /Too many connections: the server holds its limit of 6 \(MCP_MAX_CONNECTIONS\)/);
      },
    );
  } finally {
    for (const s of open) s.destroy();
  }
});

Deno.test("serveHttp() caps subscriptions/listen streams per client (429) and in all (503), answering the listen by its id", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "conformance"],
    env: {
      MCP_TRUST_PROXY: "true",
      MCP_MAX_LISTEN_STREAMS: "3",
      MCP_MAX_LISTEN_STREAMS_PER_CLIENT: "2",
      // A stream whose client left is noticed at its next keep-alive, which frees its slot.
      MCP_KEEPALIVE_INTERVAL: "0.2",
    },
  });
  const controllers: AbortController[] = [];
  const open = async (address: string, id: number): Promise<Response> => {
    const c = new AbortController();
    controllers.push(c);
    return await listenStream(server.origin, id, { address, signal: c.signal });
  };
  try {
    const a1 = await open("198.51.100.1", 1);
    const a2 = await open("198.51.100.1", 2);
    assert.equal(a1.status, 200);
    assert.equal(a2.status, 200);
    const a3 = await open("198.51.100.1", 3);
    const refusedA = await a3.json();
    assert.equal(a3.status, 429);
    assert.equal(refusedA.id, 3);
    assert.match(
      refusedA.error.message,
      /^Too many subscriptions\/listen streams from your client: it holds 2/,
    );
    assert.match(refusedA.error.message, /One stream can carry every notification type/);
    const b1 = await open("198.51.100.2", 4);
    assert.equal(b1.status, 200, "another client still gets its stream");
    const b2 = await open("198.51.100.2", 5);
    const refusedB = await b2.json();
    assert.equal(b2.status, 503);
    assert.equal(refusedB.id, 5);
    assert.match(
      refusedB.error.message,
      /holds its most subscriptions\/listen streams \(3, MCP_MAX_LISTEN_STREAMS\)/,
    );
    // A closed stream gives its slot back.
    controllers[0]!.abort();
    await a1.body?.cancel().catch(() => {});
    let again: Response | undefined;
    for (let i = 0; i < 50; i++) {
      again = await open("198.51.100.1", 10 + i);
      if (again.status === 200) break;
      await again.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(again?.status, 200, "the freed slot is taken again");
    const scraped = await scrape(server.origin);
    assert.match(
      scraped,
      /^opendata_http_share_refusals_total\{limit="listen_streams_per_client"\} [1-9]\d*$/m,
    );
    assert.match(scraped, /^opendata_http_share_refusals_total\{limit="listen_streams"\} [1-9]\d*$/m);
  } finally {
    for (const c of controllers) c.abort();
  }
});
