// What rebuilding a shared session relies on in the SDK (lib/mcp/http/shared_sessions.ts): a
// fresh transport whose id generator returns the stored id, sent the stored initialize, holds
// that id, accepts the session's next requests, and its server reports the client's
// capabilities, identity, protocol version and log level. An SDK upgrade that breaks any of this
// fails here, not behind a load balancer.
import assert from "node:assert/strict";
import { McpServer, WebStandardStreamableHTTPServerTransport } from "../../../lib/mcp/sdk.ts";
import {
  forwardAnswers,
  levelRequest,
  levelSet,
  onBusMessage,
  ownRequestIds,
  postedShared,
  recordOf,
  replayedInitialize,
  replayRequest,
  sentElsewhere,
  sessionRestorer,
} from "../../../lib/mcp/http/shared_sessions.ts";
import type {
  SessionBusMessage,
  SessionRecord,
  SharedCopy,
  SharedSessionStore,
} from "../../../lib/mcp/http/shared_sessions.ts";
import type { JSONRPCMessage } from "../../../lib/mcp/sdk.ts";
import { SessionStore } from "../../../lib/mcp/http/_sessions.ts";
import type { Session } from "../../../lib/mcp/http/_sessions.ts";
import { FakeClock } from "../../../lib/clock.ts";
import { Logger } from "../../../lib/log.ts";
import { BASE, initializeBody, POST_HEADERS, startHarness } from "./_harness.ts";

const URL_ = "http://127.0.0.1/mcp";

const record: SessionRecord = {
  id: "5b0c1c4e-0000-4000-8000-000000000001",
  protocolVersion: "2025-06-18",
  capabilities: { elicitation: { form: {} }, roots: { listChanged: true } },
  clientInfo: { name: "claude-ai", version: "0.1.0" },
  logLevel: "error",
  toolsets: ["core"],
};

Deno.test("replayedInitialize() rebuilds a session below the SDK: id, client identity, version and log level", async () => {
  const server = new McpServer({ name: "t", version: "0" }, { capabilities: { logging: {}, tools: {} } });
  server.registerTool("noop", { description: "noop" }, async (ctx) => {
    await ctx.mcpReq.log("info", "quiet please");
    await ctx.mcpReq.log("error", "loud enough");
    return { content: [] };
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => record.id });
  await server.connect(transport);
  const init = replayedInitialize(record);
  const res = await transport.handleRequest(replayRequest(URL_, init), { parsedBody: init });
  assert.equal(res.status, 200);
  assert.match(await res.text(), /"protocolVersion":"2025-06-18"/);
  assert.equal(transport.sessionId, record.id);
  assert.deepEqual(server.server.getClientCapabilities(), record.capabilities);
  assert.deepEqual(server.server.getClientVersion(), record.clientInfo);
  assert.equal(server.server.getNegotiatedProtocolVersion(), record.protocolVersion);

  const level = levelRequest(record.logLevel!);
  const set = await transport.handleRequest(replayRequest(URL_, level, record.id), { parsedBody: level });
  await set.text();

  // The session's next request, as its client sends it, is served without a new initialize.
  const list = { jsonrpc: "2.0", id: 7, method: "tools/list" } as JSONRPCMessage;
  const next = await transport.handleRequest(replayRequest(URL_, list, record.id), { parsedBody: list });
  assert.equal(next.status, 200);
  assert.match(await next.text(), /"name":"noop"/);
  const call = {
    jsonrpc: "2.0",
    id: 8,
    method: "tools/call",
    params: { name: "noop", arguments: {} },
  } as JSONRPCMessage;
  const logged =
    await (await transport.handleRequest(replayRequest(URL_, call, record.id), { parsedBody: call }))
      .text();
  assert.match(logged, /loud enough/);
  assert.doesNotMatch(logged, /quiet please/, "the stored log level holds");
  await server.close();
});

/** A shared store that only records what is published. */
function publishing(): { store: SharedSessionStore; sent: SessionBusMessage[] } {
  const sent: SessionBusMessage[] = [];
  const store: SharedSessionStore = {
    put: () => Promise.resolve(),
    hold: () => {},
    setLevel: () => Promise.resolve(),
    touch: () => {},
    get: () => Promise.resolve(undefined),
    remove: () => Promise.resolve(),
    forget: () => {},
    publish: (m) => {
      sent.push(m);
      return Promise.resolve();
    },
    heard: () => Promise.resolve(),
    subscribe: () => () => {},
  };
  return { store, sent };
}

function copy(standalone: boolean): SharedCopy {
  return {
    id: "s1",
    outgoing: new Set(),
    standalone,
    transport: { send: () => Promise.resolve(), handleRequest: () => Promise.resolve(new Response(null)) },
    close: () => Promise.resolve(),
  };
}

Deno.test("sentElsewhere() and forwardAnswers() route a session's messages to the replica that holds their stream", () => {
  const { store, sent } = publishing();
  const here = copy(false);
  const ask = { jsonrpc: "2.0", id: 3, method: "elicitation/create", params: {} } as JSONRPCMessage;
  assert.equal(sentElsewhere(store, here, ask, 9), false, "a request on a POST stream stays");
  assert.ok(here.outgoing.has(3), "and its answer is awaited here");
  const note = { jsonrpc: "2.0", method: "notifications/tools/list_changed" } as JSONRPCMessage;
  assert.equal(sentElsewhere(store, here, note, undefined), true, "no GET stream here: sent on");
  assert.equal(sentElsewhere(store, copy(true), note, undefined), false, "the GET stream is here");
  assert.deepEqual(sent, [{ type: "notify", id: "s1", message: note }]);

  sent.length = 0;
  const mine = { jsonrpc: "2.0", id: 3, result: { action: "accept" } } as JSONRPCMessage;
  const theirs = { jsonrpc: "2.0", id: 4, result: { action: "accept" } } as JSONRPCMessage;
  assert.equal(forwardAnswers(store, here, [mine]), false, "an answer awaited here is served here");
  assert.equal(forwardAnswers(store, here, [theirs]), true, "one awaited elsewhere goes there");
  assert.deepEqual(sent, [{ type: "response", id: "s1", message: theirs }]);

  const roots = { jsonrpc: "2.0", id: 5, method: "roots/list" } as JSONRPCMessage;
  assert.equal(
    sentElsewhere(store, here, roots, undefined),
    true,
    "a request of no call goes to the GET stream",
  );
  assert.ok(here.outgoing.has(5), "its answer is still awaited here");
  const cancelled = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } };
  sentElsewhere(store, here, cancelled as JSONRPCMessage, undefined);
  assert.ok(!here.outgoing.has(5), "a request given up is no longer awaited");
});

Deno.test("onBusMessage() sends another replica's request on the GET stream held here, awaited there", async () => {
  const out: JSONRPCMessage[] = [];
  const holder: SharedCopy = {
    ...copy(true),
    transport: {
      send: (m) => {
        // The handler's send hook notes every request as awaited here.
        if ("id" in m && "method" in m) holder.outgoing.add(m.id as number);
        out.push(m);
        return Promise.resolve();
      },
      handleRequest: () => Promise.resolve(new Response(null)),
    },
  };
  const roots = { jsonrpc: "2.0", id: 5, method: "roots/list" } as JSONRPCMessage;
  await onBusMessage({ type: "notify", id: "s1", message: roots }, holder, () => Promise.resolve());
  assert.deepEqual(out, [roots]);
  assert.ok(!holder.outgoing.has(5), "the answer goes back to the replica that asked");
  await onBusMessage({ type: "notify", id: "s1", message: roots }, copy(false), () => Promise.resolve());
  assert.equal(out.length, 1, "a replica without the GET stream sends nothing");
});

Deno.test("a log level heard from another replica applies before this copy's next request", async () => {
  // The client was answered once the level was published: its next request, wherever it lands,
  // must see that level. Here the bus message is heard, its replay into the copy is slow, and the
  // request has to wait for it.
  let listener: ((m: SessionBusMessage) => void) | undefined;
  let heardDone!: () => void;
  const heard = new Promise<void>((r) => heardDone = r);
  const store: SharedSessionStore = {
    ...publishing().store,
    heard: () => heard,
    subscribe: (l) => {
      listener = l;
      return () => {};
    },
  };
  let finishReplay!: () => void;
  const replayed: JSONRPCMessage[] = [];
  const held: SharedCopy = {
    ...copy(false),
    transport: {
      send: () => Promise.resolve(),
      handleRequest: async (_req, options) => {
        replayed.push(options?.parsedBody as JSONRPCMessage);
        await new Promise<void>((r) => finishReplay = r);
        return new Response(null);
      },
    },
  };
  sessionRestorer({
    shared: store,
    logger: new Logger({ write: () => {} }),
    held: (id) => id === held.id ? held : undefined,
    open: () => Promise.resolve(new Response(null)),
  });
  const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } } as JSONRPCMessage;
  const order: string[] = [];
  const posted = postedShared(store, held, [call]).then((forwarded) => {
    assert.equal(forwarded, false, "the call is this replica's to answer");
    order.push("call dispatched");
  });
  await Promise.resolve();
  listener!({ type: "level", id: held.id, level: "error" });
  heardDone();
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(order.length, 0, "the call waits while the level is being applied");
  assert.equal((replayed[0] as { params?: { level?: string } }).params?.level, "error");
  order.push("level applied");
  finishReplay();
  await posted;
  assert.deepEqual(order, ["level applied", "call dispatched"]);
  assert.equal(held.leveling, undefined, "nothing is left waiting once applied");
});

Deno.test("a copy rebuilt while the client set its level elsewhere ends at that level", async () => {
  // The record was read before the level was set, and the level's message came before the copy was
  // held here (so no one here heard it): the rebuild reads the record again once it holds the copy.
  const first: SessionRecord = { ...record, logLevel: "info" };
  const reads = [first, { ...record, logLevel: "error" }];
  const held: SharedCopy[] = [];
  const levels: string[] = [];
  const kept: SessionRecord[] = [];
  const store: SharedSessionStore = {
    ...publishing().store,
    get: () => Promise.resolve(reads.shift()),
    hold: (r) => void kept.push(r),
  };
  const restorer = sessionRestorer({
    shared: store,
    logger: new Logger({ write: () => {} }),
    held: (id) => held.find((c) => c.id === id),
    open: () => {
      held.push({
        ...copy(false),
        id: record.id,
        transport: {
          send: () => Promise.resolve(),
          handleRequest: (_req, options) => {
            const m = options?.parsedBody as { method?: string; params?: { level?: string } };
            if (m.method === "logging/setLevel") levels.push(m.params!.level!);
            return Promise.resolve(new Response(null));
          },
        },
      });
      return Promise.resolve(new Response(null));
    },
  });
  const restoring = restorer.restore(record.id, URL_, new Logger({ write: () => {} }), { clientKey: "k" });
  // The session's other requests here wait for this: its copy is found before it has its level.
  assert.ok(restorer.rebuilding(record.id), "the rebuild is under way");
  const rebuilt = await restoring;
  assert.equal(restorer.rebuilding(record.id), undefined, "and over");
  assert.equal((rebuilt as SharedCopy).id, record.id);
  assert.deepEqual(levels, ["error"], "the level read last is the one applied");
  assert.equal(kept.at(-1)?.logLevel, "error", "the record kept here is the newer one");
});

Deno.test("recordOf() and levelSet() read what a session's record keeps from its messages", () => {
  const init = replayedInitialize(record);
  assert.deepEqual(recordOf("x", [init], { toolsets: new Set(["core"]), owner: "ip:1" }), {
    id: "x",
    protocolVersion: record.protocolVersion,
    capabilities: record.capabilities,
    clientInfo: record.clientInfo,
    toolsets: ["core"],
    owner: "ip:1",
  });
  assert.equal(levelSet([init, levelRequest("warning")]), "warning");
  assert.equal(levelSet([init]), undefined);
});

Deno.test("SessionStore.add() keeps a rebuilt session past the init timeout: its client went on elsewhere", () => {
  const clock = new FakeClock();
  const store = new SessionStore(10, 3_600_000, clock, new Logger({ write: () => {} }), {
    initTimeoutMs: 1_000,
  });
  const closed: string[] = [];
  const session = (id: string): Session => ({
    id,
    kind: "streamable",
    lastActive: clock.now(),
    busy: () => false,
    close: () => Promise.resolve(void closed.push(id)),
  });
  for (let i = 0; i < 2; i++) assert.equal(store.reserve(), undefined);
  store.add(session("fresh"));
  store.add(session("rebuilt"), true);
  clock.advance(2_000);
  assert.equal(store.sweep(), 1);
  assert.deepEqual(closed, ["fresh"], "only the session whose client never went on past initialize");
});

Deno.test("ownRequestIds() gives each copy of a session its own ids for requests to the client", async () => {
  const idsOf = async (own: boolean): Promise<unknown> => {
    const server = new McpServer({ name: "t", version: "0" }, { capabilities: {} });
    if (own) assert.equal(ownRequestIds(server), true, "the SDK's request id counter is where it was");
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => record.id });
    await server.connect(transport);
    const init = replayedInitialize(record);
    await (await transport.handleRequest(replayRequest(URL_, init), { parsedBody: init })).text();
    const sent: JSONRPCMessage[] = [];
    transport.send = (m) => Promise.resolve(void sent.push(m));
    const asked = server.server.ping().catch(() => {});
    await server.close();
    await asked;
    const request = sent.find((m) => "method" in m && m.method === "ping");
    assert.ok(request && "id" in request, "the server asked the client");
    return request.id;
  };
  // Without it every copy numbers from 0: two replicas' requests to one client would share ids.
  assert.equal(await idsOf(false), await idsOf(false));
  const ids = await Promise.all([idsOf(true), idsOf(true), idsOf(true)]);
  assert.equal(new Set(ids).size, 3, `ids ${ids.join(", ")}`);
  for (const id of ids) assert.ok(Number.isSafeInteger(id) && (id as number) >= 0, `id ${id}`);
});

Deno.test("initialize is answered only once the session's record is in the shared store", async () => {
  // The client's next request may reach another replica at once: answered before the record was
  // written, it found no session there (and a level set meanwhile could be overwritten by it).
  const puts: SessionRecord[] = [];
  let written!: () => void;
  const writing = new Promise<void>((resolve) => written = resolve);
  const store: SharedSessionStore = {
    ...publishing().store,
    put: async (r) => {
      puts.push(r);
      await writing;
    },
  };
  await using h = await startHarness({
    providers: "example",
    shared: { replica: "r1", connection: { up: true }, clientLimiter: (_, local) => local, sessions: store },
  });
  let answered = false;
  const answer = h.fetch(`${BASE}/mcp`, { method: "POST", headers: POST_HEADERS, body: initializeBody() })
    .then((res) => {
      answered = true;
      return res;
    });
  for (let i = 0; i < 50 && puts.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(puts.length, 1, "the record is being written");
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(answered, false, "not answered while the record is being written");
  written();
  const res = await answer;
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("mcp-session-id"), puts[0]!.id);
  await res.body?.cancel();
});
