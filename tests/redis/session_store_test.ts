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

async function connect(url: string): Promise<RedisConnection> {
  return await RedisConnection.connect({
    url,
    prefix: "t:",
    timeoutMs: 1000,
    retryMaxMs: 200,
    logger: new Logger(),
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
  const a = await connect(redis.url);
  const b = await connect(redis.url);
  const sa = new RedisSessionStore(a, "a", { ttlMs: 60_000, refreshMs: 0, resyncMs: 50 });
  const sb = new RedisSessionStore(b, "b", { ttlMs: 60_000 });
  try {
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

    sa.setLevel(record.id, "error");
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
  } finally {
    sa.close();
    sb.close();
    await a.close();
    await b.close();
  }
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
