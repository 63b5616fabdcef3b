// The shared HTTP client's stores on Redis: the response cache, the sliding-window rate limits
// and the circuit breakers, each behind the interface its in-memory twin implements
// (lib/http/stores.ts). Windows and breakers are read and changed by one Lua script per
// operation, so replicas never interleave inside one decision, and they keep time by Redis's
// clock (TIME), so replicas whose clocks differ still share one window. Any Redis failure falls
// back to the local store of this process: a cache miss, a per-replica limiter that keeps the
// configured budget, a per-replica breaker.
import { createHash } from "node:crypto";
import type {
  BreakerGate,
  BreakerOptions,
  BreakerSnapshot,
  BreakerStore,
  LastFailure,
} from "../http/breaker.ts";
import { MemoryBreakerStore } from "../http/breaker.ts";
import type { CacheEntry, CacheStore } from "../http/cache.ts";
import { MemoryRateWindowStore } from "../http/rate_limiter.ts";
import type { RateLimit, RateWindowStore, Reservation } from "../http/rate_limiter.ts";
import type { RedisConnection } from "./connection.ts";
import { redisScript } from "./connection.ts";
import type { ClientLimiter } from "../mcp/served_app.ts";

/** SHA-256 of `text`, hex: how request keys (which may hold an API key) are named in Redis. */
export function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// ---------------------------------------------------------------------------------------------
// Response cache

/** Options for {@linkcode RedisCacheStore}. */
export interface RedisCacheOptions {
  /** Largest body stored; bigger answers are not shared (they stay uncached). */
  maxEntryBytes: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Cached answers in Redis, one key per request with Redis's own expiry. The key is a SHA-256 of
 * the request (its URL may carry an API key, which must not be stored); the value is a one-line
 * JSON head and the body's bytes.
 */
export class RedisCacheStore implements CacheStore {
  #conn: RedisConnection;
  #o: RedisCacheOptions;

  constructor(conn: RedisConnection, options: RedisCacheOptions) {
    this.#conn = conn;
    this.#o = options;
  }

  async get(key: string, now: number): Promise<CacheEntry | undefined> {
    let raw: Uint8Array | null;
    try {
      raw = await this.#conn.commandBytes<Uint8Array | null>(["GET", this.#key(key)]);
    } catch {
      return undefined;
    }
    if (!raw) return undefined;
    const cut = raw.indexOf(0x0a);
    if (cut < 0) return undefined;
    try {
      const head = cacheHead(JSON.parse(decoder.decode(raw.subarray(0, cut))));
      // A head that is not one of ours is a miss: the answer is fetched again.
      if (!head || head.expiresAt <= now) return undefined;
      return { ...head, body: raw.slice(cut + 1) };
    } catch {
      return undefined;
    }
  }

  async set(key: string, entry: CacheEntry): Promise<void> {
    if (entry.body.byteLength > this.#o.maxEntryBytes) return;
    const ttl = Math.ceil(entry.expiresAt - entry.storedAt);
    if (ttl <= 0) return;
    const { body: _body, ...head } = entry;
    const headBytes = encoder.encode(`${JSON.stringify(head)}\n`);
    const value = new Uint8Array(headBytes.byteLength + entry.body.byteLength);
    value.set(headBytes, 0);
    value.set(entry.body, headBytes.byteLength);
    try {
      await this.#conn.command(["SET", this.#key(key), value, "PX", String(ttl)]);
    } catch {
      // Not shared this time: the next caller fetches it again.
    }
  }

  #key(key: string): string {
    return this.#conn.key("cache", digest(key));
  }
}

/** A cache entry's head read back from Redis, or undefined when a field is missing or wrong. */
function cacheHead(value: unknown): Omit<CacheEntry, "body"> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { status, contentType, storedAt, expiresAt } = value as Record<string, unknown>;
  if (!Number.isInteger(status) || (status as number) < 100 || (status as number) > 599) return undefined;
  if (typeof contentType !== "string" || contentType.length > 1000) return undefined;
  if (!Number.isFinite(storedAt) || !Number.isFinite(expiresAt)) return undefined;
  return {
    status: status as number,
    contentType,
    storedAt: storedAt as number,
    expiresAt: expiresAt as number,
  };
}

// ---------------------------------------------------------------------------------------------
// Rate windows

const RESERVE = redisScript(`${NOW_MS}
local maxWait = tonumber(ARGV[1])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local at = now
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then at = math.max(at, tonumber(last[2])) end
local count = redis.call('ZCARD', KEYS[1])
for i = 4, #ARGV, 2 do
  local requests = tonumber(ARGV[i])
  local per = tonumber(ARGV[i + 1])
  if count >= requests then
    local nth = redis.call('ZRANGE', KEYS[1], count - requests, count - requests, 'WITHSCORES')
    at = math.max(at, tonumber(nth[2]) + per)
  end
end
if at - now > maxWait then return {at - now, 0} end
redis.call('ZADD', KEYS[1], at, ARGV[2])
redis.call('PEXPIRE', KEYS[1], at - now + window + 1000)
return {at - now, 1}`);

/**
 * Sliding-window logs in Redis: a sorted set of request start times per budget, reserved by one
 * script, so all replicas together keep each limit (FRED's 120 a minute holds across them).
 */
export class RedisRateWindowStore implements RateWindowStore {
  #conn: RedisConnection;
  #local: MemoryRateWindowStore;
  #replica: string;
  #seq = 0;
  /** Members of reservations a caller may still give back, by `key at`. */
  #members = new Map<string, string>();

  constructor(conn: RedisConnection, replica: string, local = new MemoryRateWindowStore()) {
    this.#conn = conn;
    this.#replica = replica;
    this.#local = local;
  }

  async reserve(
    key: string,
    limits: readonly RateLimit[],
    now: number,
    latest: number,
  ): Promise<Reservation> {
    const windowMs = Math.max(0, ...limits.map((l) => l.perMs));
    const member = `${this.#replica}:${++this.#seq}`;
    let reply: [number, number];
    try {
      reply = await this.#conn.script<[number, number]>(RESERVE, [this.#conn.key("rate", key)], [
        String(Math.max(-1, latest - now)),
        member,
        String(windowMs),
        ...limits.flatMap((l) => [String(l.requests), String(l.perMs)]),
      ]);
    } catch {
      // Redis out of reach: this replica alone keeps the configured budget meanwhile.
      return this.#local.reserve(key, limits, now, latest);
    }
    const at = now + Number(reply[0]);
    const reserved = Number(reply[1]) === 1;
    if (reserved && at > now) {
      this.#members.set(`${key} ${at}`, member);
      if (this.#members.size > 1000) this.#members.delete(this.#members.keys().next().value!);
    }
    return { at, reserved };
  }

  async cancel(key: string, at: number): Promise<void> {
    const member = this.#members.get(`${key} ${at}`);
    if (member === undefined) {
      this.#local.cancel(key, at);
      return;
    }
    this.#members.delete(`${key} ${at}`);
    try {
      await this.#conn.command(["ZREM", this.#conn.key("rate", key), member]);
    } catch {
      // The slot stays counted until it leaves the window: the budget errs on the safe side.
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Circuit breakers

// Fields: s state (closed, open, half_open), f consecutive failures, o opened at, tr trial
// since, l the last failure (JSON). The logic is CircuitBreaker's (lib/http/breaker.ts).
const ACQUIRE = redisScript(`${NOW_MS}
local h = redis.call('HMGET', KEYS[1], 's', 'f', 'o', 'tr', 'l')
if not h[1] then return {0, ''} end
local cooldown = tonumber(ARGV[1])
local s = h[1]
local opened = tonumber(h[3] or '0')
if s == 'open' and now - opened >= cooldown then s = 'half_open' end
if s == 'closed' then return {0, ''} end
if s == 'half_open' then
  if h[4] and now - tonumber(h[4]) < cooldown then
    return {math.max(1, cooldown - (now - tonumber(h[4]))), h[5] or ''}
  end
  redis.call('HSET', KEYS[1], 's', 'half_open', 'tr', now)
  return {0, '', 1}
end
return {opened + cooldown - now, h[5] or ''}`);

const FAILURE = redisScript(`${NOW_MS}
local h = redis.call('HMGET', KEYS[1], 's', 'f')
local s = h[1] or 'closed'
local f = tonumber(h[2] or '0') + 1
redis.call('HDEL', KEYS[1], 'tr')
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'l', ARGV[3]) end
redis.call('HSET', KEYS[1], 'f', f, 'c', ARGV[1])
local opened = 0
if s == 'half_open' or f >= tonumber(ARGV[2]) then
  if s ~= 'open' then opened = 1 end
  redis.call('HSET', KEYS[1], 's', 'open', 'o', now)
elseif not h[1] then
  redis.call('HSET', KEYS[1], 's', 'closed')
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[5])
return opened`);

const RELEASE = redisScript(`local h = redis.call('HMGET', KEYS[1], 's', 'f')
redis.call('HDEL', KEYS[1], 'tr')
if h[1] == 'closed' and tonumber(h[2] or '0') == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], ARGV[1])
end
return 1`);

/** How long a breaker nobody touches is kept beyond its cooldown. */
const BREAKER_IDLE_MS = 3_600_000;

/** Circuit breakers in Redis, one hash per endpoint key, shared by every replica. */
export class RedisBreakerStore implements BreakerStore {
  #conn: RedisConnection;
  #local: MemoryBreakerStore;

  constructor(conn: RedisConnection, local = new MemoryBreakerStore()) {
    this.#conn = conn;
    this.#local = local;
  }

  async acquire(key: string, options: BreakerOptions, now: number): Promise<BreakerGate> {
    try {
      const [wait, last, trial] = await this.#conn.script<[number, string, number?]>(ACQUIRE, [
        this.#key(key),
      ], [
        String(options.cooldownMs),
      ]);
      const waitMs = Number(wait);
      const failure = parseLast(last);
      if (waitMs > 0) return failure ? { waitMs, last: failure } : { waitMs };
      return Number(trial) === 1 ? { waitMs, trial: true } : { waitMs };
    } catch {
      return this.#local.acquire(key, options, now);
    }
  }

  async success(key: string): Promise<void> {
    this.#local.success(key);
    try {
      await this.#conn.command(["DEL", this.#key(key)]);
      await this.#conn.command(["SREM", this.#conn.key("breakers"), key]);
    } catch {
      // The shared breaker learns of the next failure or success.
    }
  }

  async failure(key: string, options: BreakerOptions, now: number, last?: LastFailure): Promise<boolean> {
    try {
      const opened = await this.#conn.script<number>(FAILURE, [this.#key(key), this.#conn.key("breakers")], [
        String(options.cooldownMs),
        String(options.threshold),
        last ? JSON.stringify(last) : "",
        String(options.cooldownMs + BREAKER_IDLE_MS),
        key,
      ]);
      return Number(opened) === 1;
    } catch {
      return this.#local.failure(key, options, now, last);
    }
  }

  async release(key: string): Promise<void> {
    this.#local.release(key);
    try {
      await this.#conn.script(RELEASE, [this.#key(key), this.#conn.key("breakers")], [key]);
    } catch {
      // A trial slot left taken frees itself after one cooldown.
    }
  }

  async snapshots(now: number): Promise<Record<string, BreakerSnapshot>> {
    try {
      const keys = await this.#conn.command<string[]>(["SMEMBERS", this.#conn.key("breakers")]);
      const [sec, micro] = await this.#conn.command<[string, string]>(["TIME"]);
      const redisNow = Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
      const out: Record<string, BreakerSnapshot> = {};
      for (const key of keys.slice(0, 1000)) {
        // A member of the set is read back from Redis too: only a key of the shape this server
        // writes ("<provider> <host/path family>") is reported on /health.
        if (!BREAKER_KEY.test(key)) continue;
        const [s, f, o, c, l] = await this.#conn.command<(string | null)[]>([
          "HMGET",
          this.#key(key),
          "s",
          "f",
          "o",
          "c",
          "l",
        ]);
        if (s === null || s === undefined) {
          await this.#conn.command(["SREM", this.#conn.key("breakers"), key]);
          continue;
        }
        const reopensAt = count(o) + count(c);
        out[key] = snapshotOf(s, count(f), reopensAt, parseLast(l ?? ""), redisNow);
      }
      return out;
    } catch {
      return this.#local.snapshots(now);
    }
  }

  #key(key: string): string {
    return this.#conn.key("breaker", key);
  }
}

/** What a breaker key looks like: a provider id, a space, a host and path family (printable, no spaces). */
const BREAKER_KEY = /^[a-z0-9_-]{1,64} [\x21-\x7e]{1,300}$/;

/** A whole number read back from Redis, else 0 (a forged or broken field). */
function count(text: string | null | undefined): number {
  const n = Number(text ?? 0);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** A breaker's snapshot as CircuitBreaker.snapshot() words it (an open one past its cooldown is half-open). */
function snapshotOf(
  stored: string,
  failures: number,
  reopensAt: number,
  last: LastFailure | undefined,
  now: number,
): BreakerSnapshot {
  const state = stored === "open" && now >= reopensAt
    ? "half_open"
    : stored === "open" || stored === "half_open"
    ? stored
    : "closed";
  const snap: BreakerSnapshot = { state, consecutive_failures: failures };
  if (state === "open") snap.retry_in_s = Math.ceil((reopensAt - now) / 1000);
  if (last) {
    snap.last_error = {
      error_type: last.errorType,
      ...(last.status === undefined ? {} : { status: last.status }),
      ...(last.messageId === undefined ? {} : { message_id: last.messageId }),
    };
  }
  return snap;
}

function parseLast(text: string): LastFailure | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Record<string, unknown> | null;
    const { errorType, status, messageId } = value ?? {};
    // Read back from Redis: only a well-formed record is reported on /health.
    if (typeof errorType !== "string" || errorType.length > 100) return undefined;
    if (status !== undefined && !Number.isInteger(status)) return undefined;
    if (messageId !== undefined && (typeof messageId !== "string" || messageId.length > 100)) {
      return undefined;
    }
    return {
      errorType,
      ...(status === undefined ? {} : { status: status as number }),
      ...(messageId === undefined ? {} : { messageId: messageId as string }),
    };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Per-client HTTP rate limit

const TAKE = redisScript(`${NOW_MS}
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[1], 't', 'l')
local tokens = capacity
if h[1] then tokens = math.min(capacity, tonumber(h[1]) + math.max(0, now - tonumber(h[2])) * rate) end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.max(1, math.ceil((1 - tokens) / rate / 1000)) end
redis.call('HSET', KEYS[1], 't', string.format('%.6f', tokens), 'l', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate) + 1000)
return wait`);

export type { ClientLimiter } from "../mcp/served_app.ts";

/**
 * The per-IP HTTP rate limit as one token bucket per client in Redis, so a client spread over
 * replicas by the load balancer gets the configured rate in all, not per replica. Falls back to
 * `local` (this replica's buckets) while Redis is out of reach.
 */
export class RedisClientLimiter implements ClientLimiter {
  #conn: RedisConnection;
  #perMinute: number;
  #local: ClientLimiter;

  constructor(conn: RedisConnection, perMinute: number, local: ClientLimiter) {
    this.#conn = conn;
    this.#perMinute = perMinute;
    this.#local = local;
  }

  async take(client: string): Promise<number> {
    try {
      const wait = await this.#conn.script<number>(
        TAKE,
        [this.#conn.key("ip", digest(client).slice(0, 32))],
        [
          String(this.#perMinute),
          String(this.#perMinute / 60_000),
        ],
      );
      return Number(wait);
    } catch {
      return await this.#local.take(client);
    }
  }
}
