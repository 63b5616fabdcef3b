// The 2025-11-25 sessions in Redis: one JSON record per session under `session:{<id>}` (the id
// in braces is a Redis Cluster hash tag: every key of a session hashes to one slot), expiring
// after the idle timeout unless refreshed, and one pub/sub channel for what replicas tell each
// other about sessions (closed, log level, answers and notifications for a stream held by
// another replica). A session id is a credential (it is all a client shows to use its session),
// so Redis never sees one: keys, records and bus messages name a session by the SHA-256 of its
// id, and a replica learns the id from the request that names it. The OAuth principal is the
// user's id, which the replica checks callers against.
//
// Expiry is refreshed cheaply: at most once every `refreshMs` per session (a PEXPIRE, or the
// whole record when it is gone). A Redis that restarts empty loses every record; each replica
// notices within a second (its marker key is gone) and writes back the records of the sessions
// it holds, so sessions come back without their clients doing anything.
//
// A DELETE leaves a tombstone under the session's digest (as long as a record lives) with the
// record's removal, and no record is written where a tombstone is: a replica that missed the
// `closed` message (pub/sub is at most once) and still holds a copy would otherwise write the
// record back on its next refresh. It closes its copy instead, and no replica rebuilds the session.
//
// A record says whose a session is (OAuth principal, client key), so whoever can write to Redis
// could otherwise write one for a session id of their choosing and use it as someone else. With
// a signing key (derived from MCP_REQUEST_STATE_KEY, lib/output/job_signing.ts) every record is
// written with an HMAC over all its fields, the id's digest included, and a record whose
// signature does not hold is not used: its session is not found (docs/SECURITY.md, "Records read
// back from Redis"). The same key signs what replicas tell each other on the bus, with the
// sender and the time, so whoever can publish on Redis can neither answer a user's elicitation
// nor end or steer a session: with a key, an unsigned, wrongly signed or stale message is dropped.
import { createHash } from "node:crypto";
import type { Logger } from "../log.ts";
import {
  canonical,
  messageSignatureValid,
  signMessage,
  signText,
  textSignatureValid,
} from "../output/job_signing.ts";
import type { SessionBusMessage, SessionRecord, SharedSessionStore } from "../mcp/http/shared_sessions.ts";
import { redisScript } from "./connection.ts";
import type { RedisConnection } from "./connection.ts";

const CHANNEL = "sessions";
/** What bus messages are signed under, apart from records and every other signed message. */
const BUS_LABEL = "opendata-mcp shared session bus v1";
/**
 * Writes a session's record (KEYS[1]) unless its tombstone (KEYS[2]) is there: 1 written (or
 * kept), 0 ended. ARGV[3] "NX" writes it only where Redis has none (a record lost, written back).
 */
const WRITE = redisScript(`if redis.call("EXISTS", KEYS[2]) == 1 then return 0 end
if ARGV[3] == "NX" then redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX")
else redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2]) end
return 1`);
/** Ends a session for every replica: its tombstone (KEYS[2]) for as long as a record lives, no record. */
const REMOVE = redisScript(`redis.call("SET", KEYS[2], "1", "PX", ARGV[1])
redis.call("DEL", KEYS[1])
return 1`);
/** Oldest a bus message may be when it arrives (a replayed one is refused after this; skew included). */
const MAX_AGE_MS = 60_000;

/** Options for {@linkcode RedisSessionStore}. */
export interface RedisSessionStoreOptions {
  /** Milliseconds a session lives without activity (the idle timeout). */
  ttlMs: number;
  /** Least milliseconds between two refreshes of one session's expiry. Default: min(5 s, ttl / 4). */
  refreshMs?: number;
  /** Milliseconds between checks that Redis still holds this replica's records. Default 1000. */
  resyncMs?: number;
  /**
   * The key records are signed and checked with (`sessionSigningKey`); without it records are
   * written unsigned and read back from their checked fields only.
   */
  signingKey?: CryptoKey;
  logger?: Logger;
  /** The wall clock bus messages are stamped and aged by (replicas' clocks agree within a minute). */
  now?: () => number;
}

/** {@linkcode SharedSessionStore} on Redis; see the module comment. */
export class RedisSessionStore implements SharedSessionStore {
  #conn: RedisConnection;
  #replica: string;
  #o: Required<Omit<RedisSessionStoreOptions, "logger" | "signingKey" | "now">> & {
    logger?: Logger;
    signingKey?: CryptoKey;
  };
  /** The records of the sessions this replica holds, and when each was last written. */
  #held = new Map<string, { record: SessionRecord; written: number }>();
  /** The ids of the held sessions, by their digest (what Redis and the bus name them by). */
  #byDigest = new Map<string, string>();
  #listeners = new Set<(m: SessionBusMessage) => void>();
  #unsubscribe: (() => void) | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Digests of the refused records already logged (each once per process, not per request). */
  #reported = new Set<string>();
  /** Sessions deleted here while Redis could not be reached, until when to retry (their record's life). */
  #unremoved = new Map<string, number>();
  #now: () => number;
  /** Publishes in order: signing awaits, and a level must not arrive after the session's close. */
  #sending: Promise<void> = Promise.resolve();
  /** Delivers in the order heard: checking a signature awaits. */
  #delivering: Promise<void> = Promise.resolve();

  constructor(conn: RedisConnection, replica: string, options: RedisSessionStoreOptions) {
    this.#conn = conn;
    this.#replica = replica;
    this.#now = options.now ?? Date.now;
    this.#o = {
      ttlMs: options.ttlMs,
      refreshMs: options.refreshMs ?? Math.max(1, Math.min(5_000, Math.floor(options.ttlMs / 4))),
      resyncMs: options.resyncMs ?? 1_000,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.signingKey ? { signingKey: options.signingKey } : {}),
    };
  }

  async put(record: SessionRecord): Promise<void> {
    this.#held.set(record.id, { record, written: Date.now() });
    this.#byDigest.set(digest(record.id), record.id);
    this.#startResync();
    try {
      await this.#write(record);
    } catch (e) {
      this.#o.logger?.debug("session record not written", { session_id: record.id, error: String(e) });
    }
  }

  async setLevel(id: string, level: string): Promise<void> {
    const held = this.#held.get(id);
    if (!held) return;
    held.record = { ...held.record, logLevel: level };
    held.written = Date.now();
    // Stored before published: a replica that missed the message (its copy was being rebuilt)
    // reads the level again once it holds the copy. Both settle before the client is answered.
    await this.#write(held.record).catch(() => {});
    await this.publish({ type: "level", id, level });
  }

  hold(record: SessionRecord): void {
    // Never written here: the copy's first activity refreshes the record's expiry.
    this.#held.set(record.id, { record, written: 0 });
    this.#byDigest.set(digest(record.id), record.id);
    this.#startResync();
  }

  touch(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    const now = Date.now();
    if (now - held.written < this.#o.refreshMs) return;
    held.written = now;
    const key = this.#key(id);
    void this.#conn.command<number>(["PEXPIRE", key, String(this.#o.ttlMs)])
      .then((n) => n === 1 ? undefined : this.#write(held.record, true))
      .catch(() => {});
  }

  async get(id: string): Promise<SessionRecord | undefined | "unavailable"> {
    // Deleted here while Redis was away: ended, whatever Redis still holds.
    if (this.#unremoved.has(id)) return undefined;
    let raw: string | null;
    let ended: string | null;
    try {
      // One slot (the hash tag): the record and its tombstone in one read.
      [raw, ended] = await this.#conn.command<[string | null, string | null]>([
        "MGET",
        this.#key(id),
        this.#tombstone(id),
      ]);
    } catch {
      return "unavailable";
    }
    if (raw === null || ended !== null) return undefined;
    const named = digest(id);
    const stored = parseRecord(raw, named);
    const key = this.#o.signingKey;
    if (stored && (!key || await signedBy(key, stored))) {
      const { sig: _sig, ...record } = stored;
      return { ...record, id };
    }
    this.#refused(
      named,
      stored
        ? "session record in Redis refused: it is not signed with the replicas' shared key (MCP_REQUEST_STATE_KEY)"
        : "session record in Redis refused: it is not a valid record",
    );
    return undefined;
  }

  /** Logs a refused record once per process; by its key, never the session id (a credential). */
  #refused(named: string, message: string): void {
    if (this.#reported.has(named)) return;
    if (this.#reported.size >= 1000) this.#reported.clear();
    this.#reported.add(named);
    this.#o.logger?.warn(message, { record: this.#conn.key("session", `{${named}}`) });
  }

  async remove(id: string): Promise<void> {
    this.forget(id);
    void this.publish({ type: "closed", id });
    try {
      await this.#end(id);
    } catch (e) {
      // Retried on every resync tick while its record may live; until then this replica refuses it.
      this.#unremoved.set(id, Date.now() + this.#o.ttlMs);
      this.#startResync();
      this.#o.logger?.warn(
        "session deleted here but not in Redis, which cannot be reached: other replicas holding it " +
          "keep serving it until Redis is back or its record expires",
        { record: this.#key(id), error: String(e) },
      );
    }
  }

  async #end(id: string): Promise<void> {
    await this.#conn.script(REMOVE, [this.#key(id), this.#tombstone(id)], [String(this.#o.ttlMs)]);
  }

  /** A held copy's session was ended by a DELETE elsewhere (its tombstone): close the copy here. */
  #ended(id: string): void {
    if (!this.#held.has(id)) return;
    this.forget(id);
    this.#emit({ type: "closed", id });
  }

  #emit(message: SessionBusMessage): void {
    for (const l of [...this.#listeners]) {
      try {
        l(message);
      } catch (e) {
        this.#o.logger?.debug("session bus listener failed", { error: String(e) });
      }
    }
  }

  forget(id: string): void {
    this.#held.delete(id);
    this.#byDigest.delete(digest(id));
  }

  publish(message: SessionBusMessage): Promise<void> {
    const envelope = { ...message, id: digest(message.id), from: this.#replica, at: this.#now() };
    const key = this.#o.signingKey;
    this.#sending = this.#sending.then(async () => {
      const sig = key ? await signMessage(key, BUS_LABEL, envelope) : undefined;
      await this.#conn.publish(CHANNEL, JSON.stringify(sig ? { ...envelope, sig } : envelope));
    }).catch(() => {});
    return this.#sending;
  }

  heard(): Promise<void> {
    return this.#delivering;
  }

  subscribe(listener: (message: SessionBusMessage) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#unsubscribe) {
      const stop = this.#conn.subscribe(CHANNEL, (raw) => {
        this.#delivering = this.#delivering.then(() => this.#deliver(raw)).catch(() => {});
      });
      this.#unsubscribe = () => void stop.then((f) => f());
    }
    return () => this.#listeners.delete(listener);
  }

  /** Stops the resync timer and the subscription. */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  async #deliver(raw: string): Promise<void> {
    let m: (SessionBusMessage & { from?: unknown; at?: unknown; sig?: unknown }) | undefined;
    try {
      m = JSON.parse(raw);
    } catch {
      return;
    }
    if (!m || typeof m !== "object" || m.from === this.#replica || typeof m.id !== "string") return;
    // Only sessions held here concern this replica, and only they have a known id.
    if (!this.#byDigest.has(m.id)) return;
    const { sig, ...envelope } = m;
    const key = this.#o.signingKey;
    if (key) {
      if (typeof envelope.at !== "number" || Math.abs(this.#now() - envelope.at) > MAX_AGE_MS) return;
      if (!await messageSignatureValid(key, typeof sig === "string" ? sig : undefined, BUS_LABEL, envelope)) {
        this.#refused(m.id, "session bus message refused: it is not signed with the replicas' shared key");
        return;
      }
    }
    // Looked up again: the session may have closed here while the signature was checked.
    const id = this.#byDigest.get(m.id);
    if (id === undefined) return;
    const { from: _from, at: _at, ...rest } = envelope;
    const message = { ...rest, id } as SessionBusMessage;
    // The record kept here follows, or a rewrite after Redis lost it would bring back the old level.
    const held = this.#held.get(id);
    if (message.type === "level" && held && typeof message.level === "string") {
      held.record = { ...held.record, logLevel: message.level };
    }
    this.#emit(message);
  }

  #key(id: string): string {
    return this.#conn.key("session", `{${digest(id)}}`);
  }

  /** The key whose presence says session `id` was deleted. */
  #tombstone(id: string): string {
    return this.#conn.key("session-ended", `{${digest(id)}}`);
  }

  /**
   * Writes `record` (with `ifAbsent`, only where Redis holds no record of the session: writing
   * back a lost one); closes the copy here instead when the session was ended (a tombstone).
   */
  async #write(record: SessionRecord, ifAbsent = false): Promise<void> {
    const stored: StoredRecord = { ...record, id: digest(record.id) };
    const key = this.#o.signingKey;
    if (key) {
      stored.sig = await signText(key, signedText(stored));
      // Signing awaits: a newer write of the session (a log level) or its removal may have come
      // meanwhile, and this older record must not land after it.
      if (this.#held.get(record.id)?.record !== record) return;
    }
    const written = await this.#conn.script<number>(
      WRITE,
      [this.#key(record.id), this.#tombstone(record.id)],
      [JSON.stringify(stored), String(this.#o.ttlMs), ifAbsent ? "NX" : ""],
    );
    if (Number(written) === 0) this.#ended(record.id);
  }

  /** Ends in Redis the sessions deleted here while it could not be reached. */
  async #retryRemoves(): Promise<void> {
    const now = Date.now();
    for (const [id, until] of [...this.#unremoved]) {
      if (now > until) {
        this.#unremoved.delete(id);
        continue;
      }
      await this.#end(id).then(() => {
        this.#unremoved.delete(id);
        void this.publish({ type: "closed", id });
      }, () => {});
    }
  }

  #startResync(): void {
    if (this.#timer !== undefined) return;
    const timer = setInterval(() => void this.#resync(), this.#o.resyncMs);
    Deno.unrefTimer(timer as unknown as number);
    this.#timer = timer;
  }

  /** Writes back every held record when Redis lost them (restarted empty, flushed). */
  async #resync(): Promise<void> {
    if (!this.#conn.up) return;
    await this.#retryRemoves();
    if (this.#held.size === 0) return;
    const marker = this.#conn.key("sessions-held", this.#replica);
    try {
      if (await this.#conn.command<number>(["EXISTS", marker]) === 1) return;
      // Only what Redis lost: a record another replica wrote since (a newer level) stays.
      await Promise.all([...this.#held.values()].map((h) => this.#write(h.record, true)));
      await this.#conn.command(["SET", marker, "1", "PX", String(Math.max(this.#o.ttlMs, 60_000))]);
      this.#o.logger?.info("session records written to Redis", { sessions: this.#held.size });
    } catch {
      // Down: the next tick tries again.
    }
  }
}

/** How Redis names session `id`: the hex SHA-256 of the id. */
export function digest(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}

/** A record as Redis holds it: named by the id's digest, with its signature when signed. */
type StoredRecord = SessionRecord & { sig?: string };

/**
 * What a record's signature covers: every field but the signature, the id's digest included, so
 * an edited field, an added one, or a signature copied from another record fails.
 */
function signedText(stored: StoredRecord): string {
  const { sig: _sig, ...fields } = stored;
  return `session ${canonical(fields)}`;
}

/** Whether `stored` carries a valid signature; false too when its text cannot be made (too deep). */
async function signedBy(key: CryptoKey, stored: StoredRecord): Promise<boolean> {
  let text: string;
  try {
    text = signedText(stored);
  } catch {
    return false;
  }
  return await textSignatureValid(key, stored.sig, text);
}

/**
 * The record read from Redis under `named` (the session id's digest), checked field by field;
 * undefined when it is not one.
 */
function parseRecord(raw: string, named: string): StoredRecord | undefined {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const object = (x: unknown): x is Record<string, unknown> =>
    typeof x === "object" && x !== null && !Array.isArray(x);
  const optionalString = (x: unknown): boolean => x === undefined || typeof x === "string";
  if (
    !object(v) || v["id"] !== named || typeof v["protocolVersion"] !== "string" ||
    !object(v["capabilities"]) ||
    !object(v["clientInfo"]) || !Array.isArray(v["toolsets"]) ||
    !v["toolsets"].every((t) => typeof t === "string") || !optionalString(v["logLevel"]) ||
    !optionalString(v["owner"]) || !optionalString(v["principal"]) || !optionalString(v["sig"])
  ) return undefined;
  return v as unknown as StoredRecord;
}
