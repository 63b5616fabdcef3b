// The Redis stores against a real redis-server: two connections stand for two replicas.
import assert from "node:assert/strict";
import { ConfigError } from "../../lib/errors.ts";
import { Logger } from "../../lib/log.ts";
import { RedisConnection } from "../../lib/redis/connection.ts";
import { RedisBreakerStore, RedisCacheStore, RedisRateWindowStore } from "../../lib/redis/http_stores.ts";
import { startRedis } from "./_redis_server.ts";
import { until } from "../harness/until.ts";

function capture(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  return {
    logger: new Logger({ level: "debug", write: (l) => out.push(l) }),
    lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

async function connect(url: string, logger = new Logger(), prefix = "test:"): Promise<RedisConnection> {
  return await RedisConnection.connect({ url, prefix, timeoutMs: 1000, retryMaxMs: 200, logger });
}

Deno.test("Redis stores share budgets, breakers and answers between replicas and fall back when Redis stops", async (t) => {
  await using redis = await startRedis();
  const log = capture();
  const a = await connect(redis.url, log.logger);
  const b = await connect(redis.url);
  try {
    await t.step("RedisRateWindowStore keeps one sliding window for two replicas", async () => {
      const ra = new RedisRateWindowStore(a, "a");
      const rb = new RedisRateWindowStore(b, "b");
      const limits = [{ requests: 3, perMs: 60_000 }];
      const now = Date.now();
      const verdicts = [];
      for (let i = 0; i < 6; i++) {
        const store = i % 2 === 0 ? ra : rb;
        verdicts.push((await store.reserve("fred http://x", limits, now, now)).reserved);
      }
      assert.deepEqual(verdicts, [true, true, true, false, false, false]);
      // A caller that may wait is given the slot when the first start leaves the window.
      const later = await rb.reserve("fred http://x", limits, now, now + 120_000);
      assert.equal(later.reserved, true);
      assert.ok(later.at >= now + 59_000 && later.at <= now + 61_000, `slot at +${later.at - now} ms`);
      await rb.cancel("fred http://x", later.at);
      const again = await ra.reserve("fred http://x", limits, now, now + 120_000);
      assert.ok(Math.abs(again.at - later.at) < 1000, "the cancelled slot was given back");
    });

    await t.step("RedisBreakerStore opens for every replica and closes on a success anywhere", async () => {
      const ba = new RedisBreakerStore(a);
      const bb = new RedisBreakerStore(b);
      const options = { threshold: 2, cooldownMs: 60_000 };
      const key = "fred 127.0.0.1/fred/series";
      assert.equal(
        await ba.failure(key, options, Date.now(), { errorType: "API_ERROR", status: 503 }),
        false,
      );
      assert.equal((await bb.acquire(key, options, Date.now())).waitMs, 0, "one failure keeps it closed");
      assert.equal(
        await bb.failure(key, options, Date.now(), { errorType: "API_ERROR", status: 502 }),
        true,
        "the failure that opens it says so (for the transition counter and the warn line)",
      );
      const gate = await ba.acquire(key, options, Date.now());
      assert.ok(gate.waitMs > 59_000, `open for ${gate.waitMs} ms`);
      assert.deepEqual(gate.last, { errorType: "API_ERROR", status: 502 });
      const snap = await bb.snapshots(Date.now());
      assert.equal(snap[key]?.state, "open");
      assert.equal(snap[key]?.consecutive_failures, 2);
      assert.deepEqual(snap[key]?.last_error, { error_type: "API_ERROR", status: 502 });
      await bb.success(key);
      assert.equal((await ba.acquire(key, options, Date.now())).waitMs, 0);
      assert.deepEqual(await ba.snapshots(Date.now()), {});
      // With no cooldown left, the next call is the half-open trial; its failure reopens the circuit.
      const quick = { threshold: 1, cooldownMs: 0 };
      assert.equal(await ba.failure("trial", quick, Date.now()), true);
      assert.deepEqual(await bb.acquire("trial", quick, Date.now()), { waitMs: 0, trial: true });
      assert.equal(await bb.failure("trial", quick, Date.now()), true, "a failed trial reopens it");
      await ba.success("trial");
      assert.deepEqual(await bb.acquire("trial", quick, Date.now()), { waitMs: 0 }, "closed: no trial");
    });

    await t.step(
      "RedisBreakerStore.snapshots() reports only well-formed breakers read back from Redis",
      async () => {
        const forged = '<img src=x onerror=alert(1)> "quoted"';
        for (const key of [forged, "fred 127.0.0.1/forged"]) {
          await redis.command("SADD", "test:breakers", key);
        }
        await redis.command("HSET", `test:breaker:${forged}`, "s", "open", "f", "3", "o", "1", "c", "1");
        await redis.command(
          "HSET",
          "test:breaker:fred 127.0.0.1/forged",
          "s",
          "open",
          "f",
          "NaN",
          "o",
          "x",
          "c",
          "1e400",
        );
        const snap = await new RedisBreakerStore(a).snapshots(Date.now());
        assert.deepEqual(
          Object.keys(snap),
          ["fred 127.0.0.1/forged"],
          "the key of another shape is left out",
        );
        assert.deepEqual(snap["fred 127.0.0.1/forged"], { state: "half_open", consecutive_failures: 0 });
        await redis.command("DEL", "test:breakers");
      },
    );

    await t.step("RedisCacheStore shares answers under hashed keys, with TTL and an entry cap", async () => {
      const ca = new RedisCacheStore(a, { maxEntryBytes: 64 });
      const cb = new RedisCacheStore(b, { maxEntryBytes: 64 });
      const secretKey = "GET http://127.0.0.1/fred/series?api_key=SECRETKEY123&series_id=GNPCA ";
      const now = Date.now();
      const body = new TextEncoder().encode('{"ok":true}');
      await ca.set(secretKey, {
        status: 200,
        contentType: "application/json",
        body,
        storedAt: now,
        expiresAt: now + 60_000,
      });
      const hit = await cb.get(secretKey, Date.now());
      assert.equal(hit?.status, 200);
      assert.equal(new TextDecoder().decode(hit!.body), '{"ok":true}');
      const keys = await redis.command("KEYS", "*");
      assert.doesNotMatch(keys, /SECRETKEY123/, "no request key is stored in clear");
      assert.match(keys, /test:cache:[0-9a-f]{64}/);
      const ttl = Number((await redis.command("PTTL", keys.match(/test:cache:[0-9a-f]{64}/)![0])).slice(1));
      assert.ok(ttl > 50_000 && ttl <= 60_000, `TTL ${ttl} ms`);
      await ca.set("big", {
        status: 200,
        contentType: "text/plain",
        body: new Uint8Array(65),
        storedAt: now,
        expiresAt: now + 60_000,
      });
      assert.equal(await cb.get("big", Date.now()), undefined, "an entry over the cap is not shared");
      assert.equal(await cb.get(secretKey, now + 61_000), undefined, "expired by its own clock too");
    });

    await t.step("every store falls back to local state when Redis stops, with one warning", async () => {
      await redis.stop();
      const ra = new RedisRateWindowStore(a, "a");
      const limits = [{ requests: 2, perMs: 60_000 }];
      const now = Date.now();
      const verdicts = [];
      for (let i = 0; i < 3; i++) verdicts.push((await ra.reserve("down", limits, now, now)).reserved);
      assert.deepEqual(verdicts, [true, true, false], "the local window keeps the budget");
      const cache = new RedisCacheStore(a, { maxEntryBytes: 1024 });
      assert.equal(await cache.get("anything", now), undefined, "a miss, not an error");
      const breaker = new RedisBreakerStore(a);
      const options = { threshold: 1, cooldownMs: 60_000 };
      await breaker.failure("k", options, now);
      assert.ok((await breaker.acquire("k", options, now)).waitMs > 0, "the local breaker opened");
      assert.equal(a.up, false);
      const warnings = log.lines().filter((l) =>
        l["level"] === "warn" && String(l["msg"]).startsWith("Redis is out of reach")
      );
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      await redis.restart();
      await until("the reconnection", () => a.up);
      assert.ok(log.lines().some((l) => l["msg"] === "Redis is reachable again: shared state resumes"));
      const fresh = new RedisRateWindowStore(a, "a");
      assert.equal((await fresh.reserve("back", limits, Date.now(), Date.now())).reserved, true);
      assert.match(await redis.command("KEYS", "*"), /test:rate:back/, "shared again");
    });
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("RedisConnection.connect() refuses an unreachable Redis or a host outside the allowlist with the fix", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await assert.rejects(
    () => connect(`redis://127.0.0.1:${port}`),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(e.path, "server.redis_url");
      assert.match(e.message, /Cannot reach Redis at REDIS_URL "redis:\/\/127\.0\.0\.1:\d+"/);
      assert.match(e.message, /unset it to keep all state in this process/);
      return true;
    },
  );
  await assert.rejects(
    () =>
      RedisConnection.connect({
        url: "redis://:hunter2secret@cache.internal:6380",
        prefix: "x:",
        timeoutMs: 500,
        retryMaxMs: 100,
        logger: new Logger(),
        isNetAllowed: (host) => host.startsWith("127.0.0.1"),
      }),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(
        e.message,
        /The host "cache\.internal" of REDIS_URL is outside this process's network allowlist/,
      );
      assert.match(e.message, /--allow-net=cache\.internal/);
      assert.doesNotMatch(e.message, /hunter2secret/);
      return true;
    },
  );
  await assert.rejects(
    () => connect("http://127.0.0.1:6379"),
    /REDIS_URL must start with redis:\/\/ or rediss:\/\//,
  );
});
