// The shared session records and the listen-event bus against a real redis-server: two
// connections stand for two replicas.
import assert from "node:assert/strict";
import { Logger } from "../../lib/log.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { digest, RedisSessionStore } from "../../lib/redis/session_store.ts";
import { RedisServerEventBus } from "../../lib/redis/event_bus.ts";
import type { SessionBusMessage, SessionRecord } from "../../lib/mcp/http/shared_sessions.ts";
import type { ServerEvent } from "../../lib/mcp/sdk.ts";
import { startRedis } from "./_redis_server.ts";
import { recipeSigningKey, sessionSigningKey, signText } from "../../lib/output/job_signing.ts";
import { until as poll } from "../harness/until.ts";

async function connect(url: string): Promise<RedisConnection> {
  return await RedisConnection.connect({
    url,
    prefix: "t:",
    timeoutMs: 1000,
    retryMaxMs: 200,
    logger: new Logger(),
  });
}

/** Two replicas' session stores, each on a connection of its own, closed at the end of the scope. */
async function twoReplicas(url: string, optionsA: StoreOptions, optionsB: StoreOptions) {
  const a = await connect(url);
  const b = await connect(url);
  const sa = new RedisSessionStore(a, "a", optionsA);
  const sb = new RedisSessionStore(b, "b", optionsB);
  return {
    a,
    b,
    sa,
    sb,
    async [Symbol.asyncDispose]() {
      sa.close();
      sb.close();
      await a.close();
      await b.close();
    },
  };
}

type StoreOptions = ConstructorParameters<typeof RedisSessionStore>[2];

const until = (what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<true> =>
  poll(what, check, ms);

const record: SessionRecord = {
  id: "0d6f7a52-1111-4000-8000-000000000000",
  protocolVersion: "2025-11-25",
  capabilities: { sampling: {} },
  clientInfo: { name: "c", version: "1" },
  toolsets: ["core"],
  owner: "ip:127.0.0.1",
};

Deno.test("RedisSessionStore shares records between replicas, expires them, and writes them back after a flush", async () => {
  await using redis = await startRedis();
  await using replicas = await twoReplicas(redis.url, { ttlMs: 60_000, refreshMs: 0, resyncMs: 50 }, {
    ttlMs: 60_000,
  });
  const { sa, sb } = replicas;
  await sa.put(record);
  assert.deepEqual(await sb.get(record.id), record, "the other replica reads it");
  assert.match(
    await redis.command("PTTL", `t:session:{${digest(record.id)}}`),
    /^:(5\d|60)\d{3}\r\n$/,
    "it expires",
  );

  const stored = await redis.command("KEYS", "*");
  assert.ok(!stored.includes(record.id), "Redis never sees a session id, only its digest");
  assert.ok(!(await redis.command("GET", `t:session:{${digest(record.id)}}`)).includes(record.id));

  await sa.setLevel(record.id, "error");
  await until(
    "the level stored",
    async () => (await sb.get(record.id) as SessionRecord).logLevel === "error",
  );

  await redis.command(
    "SET",
    `t:session:{${digest("forged")}}`,
    JSON.stringify({ ...record, id: digest("other") }),
  );
  assert.equal(await sb.get("forged"), undefined, "a record under another id is not taken");
  await redis.command("SET", `t:session:{${digest("junk")}}`, "{not json");
  assert.equal(await sb.get("junk"), undefined);

  await redis.command("FLUSHALL");
  await until("the record written back", async () => (await sb.get(record.id)) !== undefined);

  // b rebuilt the session too (a replica that holds no copy has nothing to hear).
  await sb.put(record);
  const heard: SessionBusMessage[] = [];
  sb.subscribe((m) => heard.push(m));
  sa.subscribe((m) => heard.push({ ...m, id: `echo:${m.id}` }));
  await until(
    "both replicas subscribed",
    async () => /:2\r\n$/.test(await redis.command("PUBSUB", "NUMSUB", "t:sessions")),
  );
  await sa.remove(record.id);
  await until("the close heard", () => heard.length > 0);
  assert.deepEqual(heard, [{ type: "closed", id: record.id }], "heard by the other, not echoed");
  assert.equal(await sb.get(record.id), undefined, "removed");

  await redis.stop();
  assert.equal(await sb.get(record.id), "unavailable", "a store that cannot answer says so");
});

Deno.test("RedisServerEventBus delivers a listen event to this replica at once and to the others through Redis", async () => {
  await using redis = await startRedis();
  const a = await connect(redis.url);
  const b = await connect(redis.url);
  try {
    const ba = new RedisServerEventBus(a, "a");
    const bb = new RedisServerEventBus(b, "b");
    const onA: ServerEvent[] = [];
    const onB: ServerEvent[] = [];
    ba.subscribe((e) => onA.push(e));
    const stop = bb.subscribe((e) => onB.push(e));
    await Promise.all([ba.ready(), bb.ready()]);
    const x: ServerEvent = { kind: "resource_updated", uri: "opendata://x" };
    const t: ServerEvent = { kind: "tools_list_changed" };
    const p: ServerEvent = { kind: "prompts_list_changed" };
    ba.publish(x);
    assert.deepEqual(onA, [x], "at once, here");
    await until("the other replica hears it", () => onB.length === 1);
    bb.publish(t);
    await until("back on the first", () => onA.length === 2);
    assert.deepEqual(onB, [x, t], "its own event at once");
    // One channel keeps its order: had b heard its own event back, it would come before this one.
    ba.publish(p);
    await until("the third event", () => onB.length >= 3);
    assert.deepEqual(onB, [x, t, p], "never echoed to its publisher");
    const later: ServerEvent[] = [];
    bb.subscribe((e) => later.push(e));
    stop();
    ba.publish(t);
    await until("the remaining listener hears it", () => later.length === 1);
    assert.deepEqual(onB, [x, t, p], "an unsubscribed listener hears nothing");
  } finally {
    await a.close();
    await b.close();
  }
});

/** A logger that keeps its lines. */
function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: new Logger({ level: "debug", write: (l) => lines.push(l) }), lines };
}

Deno.test("RedisSessionStore with a signing key reads back signed records and refuses edited, copied or unsigned ones", async () => {
  await using redis = await startRedis();
  const signingKey = await sessionSigningKey("k".repeat(40));
  const { logger, lines } = recordingLogger();
  await using replicas = await twoReplicas(redis.url, { ttlMs: 60_000, signingKey }, {
    ttlMs: 60_000,
    signingKey,
    logger,
  });
  const { a, sa, sb } = replicas;
  const keyOf = (id: string): string => `t:session:{${digest(id)}}`;
  const stored = async (id: string): Promise<Record<string, unknown>> =>
    JSON.parse(await a.command<string>(["GET", keyOf(id)]));
  const forge = async (id: string, value: Record<string, unknown>): Promise<void> =>
    void await a.command(["SET", keyOf(id), JSON.stringify(value)]);
  const alice = { ...record, principal: "alice@example.org" };
  await sa.put(alice);
  assert.match(String((await stored(alice.id))["sig"]), /^[0-9a-f]{64}$/, "written signed");
  assert.deepEqual(await sb.get(alice.id), alice, "the other replica reads it, without the signature");

  await sa.setLevel(alice.id, "error");
  await until("the new level stored", async () => (await stored(alice.id))["logLevel"] === "error");
  assert.deepEqual(await sb.get(alice.id), { ...alice, logLevel: "error" }, "the level's record is signed");

  const signed = await stored(alice.id);
  const edits: Record<string, unknown>[] = [
    { owner: "ip:10.0.0.9" },
    { principal: "mallory@example.org" },
    { principal: undefined },
    { toolsets: ["core", "fred"] },
    { protocolVersion: "2025-06-18" },
    { clientInfo: { name: "other", version: "1" } },
    { capabilities: {} },
    { logLevel: "debug" },
    { extra: "field" },
  ];
  for (const edit of edits) {
    await forge(alice.id, { ...signed, ...edit });
    assert.equal(await sb.get(alice.id), undefined, `edited in Redis: ${JSON.stringify(edit)}`);
  }

  // A session id of the forger's choosing, with another record's fields and signature.
  const chosen = "0d6f7a52-2222-4000-8000-000000000000";
  await forge(chosen, { ...signed, id: digest(chosen) });
  assert.equal(await sb.get(chosen), undefined, "a signature copied from another record");
  const { sig: _sig, ...unsigned } = signed;
  await forge(chosen, unsigned);
  assert.equal(await sb.get(chosen), undefined, "an unsigned record");
  const otherKey = await sessionSigningKey("o".repeat(40));
  const elsewhere = new RedisSessionStore(a, "c", { ttlMs: 60_000, signingKey: otherKey });
  await elsewhere.put({ ...alice, id: chosen });
  elsewhere.forget(chosen);
  assert.equal(await sb.get(chosen), undefined, "a record signed with another key");
  // Nor does a job recipe's key sign sessions.
  const recipeKey = await recipeSigningKey("k".repeat(40));
  await forge(chosen, { ...unsigned, id: digest(chosen), sig: await signText(recipeKey, "x") });
  assert.equal(await sb.get(chosen), undefined, "a signature of another use");

  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 20_000; i++) deep = { d: deep };
  await forge(chosen, { ...signed, id: digest(chosen), capabilities: deep });
  assert.equal(await sb.get(chosen), undefined, "a record too deep to check");

  const refusals = lines.filter((l) => l.includes("session record in Redis refused"));
  assert.equal(refusals.length, 2, `one warning per record, not per read: ${refusals.join("\n")}`);
  assert.match(refusals[0]!, /not signed with the replicas' shared key \(MCP_REQUEST_STATE_KEY\)/);
  assert.ok(refusals.every((l) => !l.includes(alice.id) && !l.includes(chosen)), "no session id logged");
  assert.ok(refusals.some((l) => l.includes(digest(chosen))), "the record's key is named");

  await sa.put(alice);
  assert.deepEqual(await sb.get(alice.id), alice, "written again, it is read again");

  // Signing awaits: a session removed meanwhile must not come back with the late write.
  const brief = { ...record, id: "0d6f7a52-3333-4000-8000-000000000000" };
  const putting = sa.put(brief);
  await sa.remove(brief.id);
  await putting;
  assert.equal(await a.command<number>(["EXISTS", keyOf(brief.id)]), 0, "removed while signed");
});

Deno.test("RedisSessionStore without a signing key accepts unsigned records and drops signatures", async () => {
  await using redis = await startRedis();
  const a = await connect(redis.url);
  const plain = new RedisSessionStore(a, "b", { ttlMs: 60_000 });
  const key = `t:session:{${digest(record.id)}}`;
  try {
    await redis.command("SET", key, JSON.stringify({ ...record, id: digest(record.id) }));
    assert.deepEqual(await plain.get(record.id), record, "unsigned, as before");
    // A replica with the key wrote it (during a rollout that sets the key, say).
    const sig = await signText(await sessionSigningKey("k".repeat(40)), "any");
    await redis.command("SET", key, JSON.stringify({ ...record, id: digest(record.id), sig }));
    assert.deepEqual(await plain.get(record.id), record, "a signed one, read without its signature");
    await redis.command("SET", key, JSON.stringify({ ...record, id: digest(record.id), sig: 7 }));
    assert.equal(await plain.get(record.id), undefined, "a signature that is not a string is malformed");
    await plain.put({ ...record, logLevel: "info" });
    assert.ok(!(await a.command<string>(["GET", key])).includes('"sig"'), "written unsigned");
  } finally {
    plain.close();
    await a.close();
  }
});

Deno.test("RedisSessionStore with a signing key refuses bus messages unsigned, forged, edited or stale", async () => {
  await using redis = await startRedis();
  const spy = await connect(redis.url);
  let now = 1_000_000;
  const key = await sessionSigningKey("k".repeat(40));
  await using replicas = await twoReplicas(redis.url, { ttlMs: 60_000, signingKey: key, now: () => now }, {
    ttlMs: 60_000,
    signingKey: key,
    now: () => now,
  });
  const { a, sa, sb } = replicas;
  const other = new RedisSessionStore(a, "c", {
    ttlMs: 60_000,
    signingKey: await sessionSigningKey("x".repeat(40)),
    now: () => now,
  });
  const wire: string[] = [];
  const heard: SessionBusMessage[] = [];
  try {
    await sb.put(record);
    sb.subscribe((m) => heard.push(m));
    await spy.subscribe("sessions", (raw) => wire.push(raw));
    await until(
      "both listening",
      async () => /:2\r\n$/.test(await redis.command("PUBSUB", "NUMSUB", "t:sessions")),
    );
    // A marker sent after each attempt: messages are delivered in order, so once it is heard the
    // attempt before it was judged.
    let marks = 0;
    const judged = async (): Promise<SessionBusMessage[]> => {
      const level = `mark${++marks}`;
      sa.publish({ type: "level", id: record.id, level });
      await until(level, () => heard.some((m) => m.type === "level" && m.level === level));
      return heard.splice(0).filter((m) => !(m.type === "level" && m.level.startsWith("mark")));
    };
    const answer = { jsonrpc: "2.0", id: 7, result: { action: "accept", content: { confirm: true } } };
    const forged = { from: "mallory", at: now, type: "response", id: digest(record.id), message: answer };
    await redis.command("PUBLISH", "t:sessions", JSON.stringify(forged));
    assert.deepEqual(await judged(), [], "an unsigned message is refused");

    other.publish({ type: "response", id: record.id, message: answer as never });
    assert.deepEqual(await judged(), [], "a message signed with another key is refused");

    wire.length = 0;
    sa.publish({ type: "response", id: record.id, message: answer as never });
    assert.deepEqual(
      await judged(),
      [{ type: "response", id: record.id, message: answer }],
      "a signed one is heard",
    );
    const genuine = JSON.parse(wire[0]!);
    assert.equal(genuine.from, "a");
    assert.match(genuine.sig, /^[0-9a-f]{64}$/);

    const edited = { ...genuine, message: { ...answer, id: 8 } };
    await redis.command("PUBLISH", "t:sessions", JSON.stringify(edited));
    assert.deepEqual(await judged(), [], "an edited message is refused");

    now += 61_000;
    await redis.command("PUBLISH", "t:sessions", JSON.stringify(genuine));
    assert.deepEqual(await judged(), [], "a message older than a minute is refused");
  } finally {
    other.close();
    await spy.close();
  }
});

Deno.test("RedisSessionStore.remove() ends the session on a replica that missed the close", async () => {
  await using redis = await startRedis();
  const { logger, lines } = recordingLogger();
  await using replicas = await twoReplicas(redis.url, { ttlMs: 60_000, refreshMs: 0, resyncMs: 50, logger }, {
    ttlMs: 60_000,
    refreshMs: 0,
  });
  const { sa, sb } = replicas;
  const heard: SessionBusMessage[] = [];
  await sa.put(record);
  await sb.put(record);
  sb.subscribe((m) => heard.push(m));
  // b stops listening: it misses the close, as a replica does when pub/sub drops it.
  sb.close();
  await sa.remove(record.id);
  const key = `t:session:{${digest(record.id)}}`;
  sb.touch(record.id);
  await until("b's copy closed", () => heard.length > 0);
  assert.deepEqual(heard, [{ type: "closed", id: record.id }]);
  assert.equal(await redis.command("EXISTS", key), ":0\r\n", "the record was not written back");
  assert.equal(await sb.get(record.id), undefined, "no replica rebuilds it");

  heard.length = 0;
  await sb.put(record);
  assert.deepEqual(heard, [{ type: "closed", id: record.id }], "a copy written again is closed too");
  assert.equal(await redis.command("EXISTS", key), ":0\r\n");

  // A DELETE while Redis is away: this replica refuses the session at once, Redis learns it later.
  const other = { ...record, id: "0d6f7a52-2222-4000-8000-000000000000" };
  await sa.put(other);
  await redis.stop();
  await sa.remove(other.id);
  assert.ok(lines.some((l) => l.includes("session deleted here but not in Redis")), lines.join("\n"));
  assert.ok(!lines.some((l) => l.includes(other.id)), "the log never names the session id");
  assert.equal(await sa.get(other.id), undefined);
  await redis.restart();
  await until(
    "the tombstone written once Redis is back",
    async () => (await redis.command("EXISTS", `t:session-ended:{${digest(other.id)}}`)) === ":1\r\n",
  );
  // A record written back by a replica that still held a copy: no replica serves it.
  await redis.command(
    "SET",
    `t:session:{${digest(other.id)}}`,
    JSON.stringify({ ...other, id: digest(other.id) }),
  );
  await until("b reconnected", async () => (await sb.get(record.id)) !== "unavailable");
  assert.equal(await sb.get(other.id), undefined, "the other replicas refuse it too");
});

Deno.test("RedisSessionStore.hold() keeps a rebuilt copy's record unwritten, refreshed on first use, following levels", async () => {
  await using redis = await startRedis();
  await using replicas = await twoReplicas(redis.url, { ttlMs: 60_000, refreshMs: 5_000, resyncMs: 50 }, {
    ttlMs: 60_000,
    refreshMs: 5_000,
    resyncMs: 50,
  });
  const { sa, sb } = replicas;
  const key = `t:session:{${digest(record.id)}}`;
  await sa.put(record);
  // b rebuilt the session from an older read while a set a level: holding must not write it back.
  sb.hold({ ...record, logLevel: "debug" });
  await sa.setLevel(record.id, "error");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await sa.get(record.id) as SessionRecord).logLevel, "error", "the newer level stays");
  // The record near its end: the held copy's first use refreshes it, though it was held just now.
  await redis.command("PEXPIRE", key, "2000");
  sb.touch(record.id);
  await until(
    "the expiry refreshed",
    async () => Number(/:(\d+)/.exec(await redis.command("PTTL", key))![1]) > 50_000,
  );
  // A level set elsewhere reaches the record held here: rewritten after a flush, it has that level.
  sb.subscribe(() => {});
  await until(
    "b subscribed",
    async () => /:1\r\n$/.test(await redis.command("PUBSUB", "NUMSUB", "t:sessions")),
  );
  await sa.setLevel(record.id, "warning");
  await new Promise((r) => setTimeout(r, 100));
  sa.forget(record.id);
  await redis.command("FLUSHALL");
  await until("b wrote its record back", async () => (await sa.get(record.id)) !== undefined);
  assert.equal((await sa.get(record.id) as SessionRecord).logLevel, "warning");
});
