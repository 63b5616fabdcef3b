// The FRED (and any other) background jobs in Redis: one JSON record per job, an index of the
// jobs still running (watched by every replica's takeover scan), an index per owner (for the
// job list), a lease per running job (`SET NX PX`, renewed by the replica that runs it) and a
// cancel flag. Changes and cancel requests are announced on one pub/sub channel. Owners are
// stored as hashes, never as raw session ids; job records hold no secrets (see
// StartJobOptions.resume).
import type { Logger } from "../log.ts";
import type { JobRecord, LeaseState, SharedJobStore } from "../output/jobs.ts";
import { parseJobRecord } from "../output/jobs.ts";
import type { RedisConnection } from "./connection.ts";
import { redisScript } from "./connection.ts";

// KEYS: record, active index, owner index. ARGV: json, ttl ms, active (1/0), id, created at,
// most jobs kept per owner.
const SAVE = redisScript(`redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
else
  redis.call('ZREM', KEYS[2], ARGV[4])
end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[6]) + 1))
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1`);

// KEYS: lease, cancel flag. ARGV: replica, ms.
const LEASE = redisScript(`local holder = redis.call('GET', KEYS[1])
local held = 0
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  held = 1
end
return {held, redis.call('EXISTS', KEYS[2])}`);

// KEYS: lease. ARGV: replica.
const RELEASE = redisScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);

// KEYS: active index. ARGV: lease key prefix, id prefix. Single-instance Redis (or Valkey):
// the lease keys are derived inside the script, which Redis Cluster would refuse.
const ORPHANS = redisScript(`local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, 999)) do
  if string.sub(id, 1, #ARGV[2]) == ARGV[2] and redis.call('EXISTS', ARGV[1] .. id) == 0 then
    table.insert(out, id)
  end
end
return out`);

const CHANNEL = "jobs";

/** {@linkcode SharedJobStore} on Redis; see the module comment. */
export class RedisJobStore implements SharedJobStore {
  readonly replica: string;
  #conn: RedisConnection;

  #logger: Logger | undefined;
  /** Ids of broken records already logged (each is logged once per process, not per listing). */
  #reported = new Set<string>();

  constructor(conn: RedisConnection, replica: string, logger?: Logger) {
    this.#conn = conn;
    this.replica = replica;
    this.#logger = logger;
  }

  /** The record in `text`, or undefined (logged) when it is not a valid record of job `id`. */
  #read(text: string, id: string): JobRecord | undefined {
    const parsed = parseJobRecord(text, id);
    if (!("problem" in parsed)) return parsed;
    if (!this.#reported.has(id)) {
      if (this.#reported.size >= 1000) this.#reported.clear();
      this.#reported.add(id);
      this.#logger?.warn("job record in Redis skipped: it is not a valid record", {
        job_id: id.slice(0, 200),
        problem: parsed.problem.slice(0, 300),
      });
    }
    return undefined;
  }

  async save(record: JobRecord, ttlMs: number, active: boolean): Promise<void> {
    await this.#conn.script(SAVE, [
      this.#k("job", record.id),
      this.#k("jobs", "active"),
      this.#owner(record.owner),
    ], [
      JSON.stringify(record),
      String(Math.max(1, Math.round(ttlMs))),
      active ? "1" : "0",
      record.id,
      String(record.createdAt),
      "1000",
    ]);
  }

  async load(id: string): Promise<JobRecord | undefined> {
    const text = await this.#conn.command<string | null>(["GET", this.#k("job", id)]);
    // A broken record is treated as gone: the job is not found, a takeover forgets it.
    return text ? this.#read(text, id) : undefined;
  }

  async list(owner: string, max: number): Promise<JobRecord[]> {
    const index = this.#owner(owner);
    const ids = await this.#conn.command<string[]>(["ZRANGE", index, "0", String(max - 1), "REV"]);
    if (ids.length === 0) return [];
    const texts = await this.#conn.command<(string | null)[]>([
      "MGET",
      ...ids.map((id) => this.#k("job", id)),
    ]);
    const out: JobRecord[] = [];
    const gone: string[] = [];
    texts.forEach((text, i) => {
      if (!text) gone.push(ids[i]!);
      else {
        // Skipped, never breaking the listing: the owner's other jobs are listed.
        const record = this.#read(text, ids[i]!);
        if (record && record.owner === owner) out.push(record);
      }
    });
    // Records expire by themselves; their index entries are dropped when met.
    if (gone.length > 0) await this.#conn.command(["ZREM", index, ...gone]).catch(() => {});
    return out;
  }

  async lease(id: string, ms: number): Promise<LeaseState> {
    const [held, cancel] = await this.#conn.script<[number, number]>(
      LEASE,
      [this.#k("lease", id), this.#k("cancel", id)],
      [this.replica, String(Math.max(1, Math.round(ms)))],
    );
    return { held: Number(held) === 1, cancel: Number(cancel) === 1 };
  }

  async claim(id: string, ms: number): Promise<boolean> {
    const reply = await this.#conn.command<string | null>([
      "SET",
      this.#k("lease", id),
      this.replica,
      "NX",
      "PX",
      String(Math.max(1, Math.round(ms))),
    ]);
    return reply === "OK";
  }

  async release(id: string): Promise<void> {
    await this.#conn.script(RELEASE, [this.#k("lease", id)], [this.replica]);
  }

  async orphans(idPrefix: string): Promise<string[]> {
    return await this.#conn.script<string[]>(ORPHANS, [this.#k("jobs", "active")], [
      this.#k("lease", ""),
      idPrefix,
    ]);
  }

  async forget(id: string): Promise<void> {
    await this.#conn.command(["ZREM", this.#k("jobs", "active"), id]);
  }

  async requestCancel(id: string, ttlMs: number): Promise<void> {
    await this.#conn.command([
      "SET",
      this.#k("cancel", id),
      "1",
      "PX",
      String(Math.max(1, Math.round(ttlMs))),
    ]);
    await this.#conn.publish(CHANNEL, `cancel ${id}`);
  }

  async changed(id: string): Promise<void> {
    await this.#conn.publish(CHANNEL, `changed ${id}`);
  }

  async subscribe(listener: (event: "changed" | "cancel", id: string) => void): Promise<() => void> {
    return await this.#conn.subscribe(CHANNEL, (message) => {
      const [event, id] = message.split(" ");
      if ((event === "changed" || event === "cancel") && id) listener(event, id);
    });
  }

  #k(...parts: string[]): string {
    return this.#conn.key(...parts);
  }

  #owner(owner: string): string {
    return this.#k("jobs", "owner", owner === "" ? "-" : owner);
  }
}
