// Tasks that wait for input, across replicas (docs/MCP.md, "Tasks"): what a task waits for lives
// with the replica running it, so the replica a `tasks/get` or `tasks/update` reaches asks that
// one, by request and reply over Redis pub/sub. Each replica listens on a channel named after it
// for requests, and on another for the replies to its own. PUBLISH says how many listened, so a
// replica that is gone is known at once; one that listens but does not answer is waited for
// `timeoutMs`. With the replicas' shared key (MCP_REQUEST_STATE_KEY) both ways are signed, so
// whoever can write to Redis can neither answer a user's input request (a deletion's
// confirmation) nor show a request of their own.
import type { TaskRelay, TaskRelayMiss, TaskRelayReply, TaskRelayRequest } from "../mcp/tasks/types.ts";
import { messageSignatureValid, signMessage } from "../output/job_signing.ts";
import type { RedisConnection } from "./connection.ts";

const REQUESTS = "task-relay";
const REPLIES = "task-relay-reply";
/** What signatures are made under, apart from every other signed message. */
const LABEL = "opendata-mcp task relay v1";
/** Oldest a message may be when it arrives (a replayed one is refused after this; skew included). */
const MAX_AGE_MS = 60_000;
/** Most request ids remembered to refuse a replay (those of the last minute, unless more). */
const MAX_SEEN = 10_000;

/** One message on the relay's channels. */
interface Envelope {
  id: string;
  from: string;
  to: string;
  at: number;
  body: unknown;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The request in a message's body, or undefined when it is not one. */
function relayRequest(body: unknown): TaskRelayRequest | undefined {
  if (!isObject(body)) return undefined;
  const { op, taskId, owner, responses } = body;
  if (typeof taskId !== "string" || taskId.length > 200 || typeof owner !== "string") return undefined;
  if (op === "get") return { op, taskId, owner };
  if (op === "update" && isObject(responses)) return { op, taskId, owner, responses };
  return undefined;
}

/** The reply in a message's body, or undefined when it is not one. */
function relayReply(body: unknown): TaskRelayReply | undefined {
  if (!isObject(body) || typeof body["found"] !== "boolean" || !isObject(body["pending"])) return undefined;
  const pending = body["pending"];
  if (!Object.values(pending).every(isObject)) return undefined;
  return { found: body["found"], pending: pending as TaskRelayReply["pending"] };
}

/** {@linkcode TaskRelay} on Redis pub/sub; see the module comment. */
export class RedisTaskRelay implements TaskRelay {
  readonly replica: string;
  readonly timeoutMs: number;
  #conn: RedisConnection;
  #key: CryptoKey | undefined;
  #asked = new Map<string, { to: string; done: (reply: TaskRelayReply) => void }>();
  #replies: Promise<unknown> | undefined;
  #serving: Promise<unknown> | undefined;
  /** Ids of the requests served lately, by arrival time: a request heard again is a replay. */
  #seen = new Map<string, number>();
  #handled: Promise<void> = Promise.resolve();
  /** The wall clock messages are stamped and aged by (replicas' clocks agree within a minute). */
  #now: () => number;

  constructor(
    conn: RedisConnection,
    replica: string,
    options: { timeoutMs: number; signingKey?: CryptoKey | undefined; now?: () => number },
  ) {
    this.#now = options.now ?? Date.now;
    this.#conn = conn;
    this.replica = replica;
    this.timeoutMs = options.timeoutMs;
    this.#key = options.signingKey;
  }

  async ask(to: string, request: TaskRelayRequest): Promise<TaskRelayReply | TaskRelayMiss> {
    this.#replies ??= this.#conn.subscribe(`${REPLIES}:${this.replica}`, (raw) => void this.#replied(raw));
    await this.#replies;
    const id = crypto.randomUUID();
    const text = await this.#seal({ id, from: this.replica, to, at: this.#now(), body: request });
    const { promise, resolve } = Promise.withResolvers<TaskRelayReply | TaskRelayMiss>();
    const timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    this.#asked.set(id, { to, done: resolve });
    try {
      const heard = await this.#conn.command<number>(["PUBLISH", this.#conn.key(`${REQUESTS}:${to}`), text]);
      if (Number(heard) === 0) resolve("gone");
    } catch {
      resolve("unavailable");
    }
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
      this.#asked.delete(id);
    }
  }

  async serve(handler: (request: TaskRelayRequest) => TaskRelayReply): Promise<void> {
    this.#serving ??= this.#conn.subscribe(
      `${REQUESTS}:${this.replica}`,
      // One at a time, in the order heard: a replay is always met after its original.
      (raw) => void (this.#handled = this.#handled.then(() => this.#request(raw, handler)).catch(() => {})),
    );
    await this.#serving;
  }

  async #request(raw: string, handler: (request: TaskRelayRequest) => TaskRelayReply): Promise<void> {
    const m = await this.#open(raw);
    const request = m ? relayRequest(m.body) : undefined;
    if (!m || !request || !this.#first(m.id)) return;
    const text = await this.#seal({
      id: m.id,
      from: this.replica,
      to: m.from,
      at: this.#now(),
      body: handler(request),
    });
    await this.#conn.publish(`${REPLIES}:${m.from}`, text);
  }

  /** Whether request `id` is heard for the first time (a signed one may be sent again by a Redis reader). */
  #first(id: string): boolean {
    const now = this.#now();
    for (const [old, at] of this.#seen) {
      if (now - at <= MAX_AGE_MS && this.#seen.size < MAX_SEEN) break;
      this.#seen.delete(old);
    }
    if (this.#seen.has(id)) return false;
    this.#seen.set(id, now);
    return true;
  }

  async #replied(raw: string): Promise<void> {
    const m = await this.#open(raw);
    const asked = m ? this.#asked.get(m.id) : undefined;
    // Only the replica asked answers: a reply from another is not taken.
    if (!m || !asked || asked.to !== m.from) return;
    const reply = relayReply(m.body);
    if (reply) asked.done(reply);
  }

  async #seal(envelope: Envelope): Promise<string> {
    const sig = this.#key ? await signMessage(this.#key, LABEL, envelope) : undefined;
    return JSON.stringify(sig ? { ...envelope, sig } : envelope);
  }

  /** The message in `raw` when it is for this replica, fresh and (with a key) signed; else undefined. */
  async #open(raw: string): Promise<Envelope | undefined> {
    let m: Json;
    try {
      m = JSON.parse(raw);
    } catch {
      return undefined;
    }
    if (!isObject(m)) return undefined;
    const { id, from, to, at, body, sig } = m;
    if (typeof id !== "string" || typeof from !== "string" || to !== this.replica) return undefined;
    if (typeof at !== "number" || Math.abs(this.#now() - at) > MAX_AGE_MS) return undefined;
    const envelope: Envelope = { id, from, to, at, body };
    if (
      this.#key &&
      !await messageSignatureValid(this.#key, typeof sig === "string" ? sig : undefined, LABEL, envelope)
    ) {
      return undefined;
    }
    return envelope;
  }
}
