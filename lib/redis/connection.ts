// One connection to Redis (or Valkey) for the state replicas share. It fails fast: commands are
// never queued while the connection is down (`disableOfflineQueue`), every command has a
// deadline, and callers fall back to their local stores on any failure. An outage is logged once
// (a warning when it starts, one line when it ends) however many calls meet it; the client
// reconnects meanwhile with exponential backoff and jitter.
import { createHash } from "node:crypto";
import { createClient, ErrorReply, RESP_TYPES } from "@redis/client";
import type { Random } from "../clock.ts";
import { ConfigError } from "../errors.ts";
import type { Logger } from "../log.ts";

/** Options for {@linkcode RedisConnection.connect}. */
export interface RedisConnectOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://` for TLS. */
  url: string;
  /** Start of every key this server writes, so deployments can share one Redis. */
  prefix: string;
  /** Deadline of the first connection and of every command, in milliseconds. */
  timeoutMs: number;
  /** Longest wait between reconnection attempts, in milliseconds. */
  retryMaxMs: number;
  logger: Logger;
  random?: Random;
  /** Whether the process may connect to `host` (`host:port`); default: yes. */
  isNetAllowed?: (host: string) => boolean;
}

/** Thrown by {@linkcode RedisConnection} when Redis cannot answer now (down, slow or refusing). */
export class RedisUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RedisUnavailableError";
  }
}

/** A Lua script run by its SHA-1 digest (EVALSHA), loaded on first use. */
export interface RedisScript {
  readonly lua: string;
  readonly sha: string;
}

/** Makes a {@linkcode RedisScript}. */
export function redisScript(lua: string): RedisScript {
  return { lua, sha: createHash("sha1").update(lua).digest("hex") };
}

/** A command argument: text or bytes. */
export type RedisArg = string | Uint8Array;

type Client = ReturnType<typeof makeClient>;

function makeClient(
  options: RedisConnectOptions,
  reconnect: (retries: number, cause: Error) => number | Error,
) {
  return createClient({
    url: options.url,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.timeoutMs },
    socket: { connectTimeout: options.timeoutMs, reconnectStrategy: reconnect },
  });
}
type Listener = (message: string) => void;

/** What `REDIS_URL` names, checked before any connection is made. */
export function parseRedisUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      "server.redis_url",
      `REDIS_URL is not a valid URL: expected redis://host:port (or rediss:// for TLS), got "${
        redactUrl(url)
      }"`,
    );
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new ConfigError(
      "server.redis_url",
      `REDIS_URL must start with redis:// or rediss://, got "${parsed.protocol}//"`,
    );
  }
  if (parsed.hostname === "") {
    throw new ConfigError("server.redis_url", `REDIS_URL names no host: "${redactUrl(url)}"`);
  }
  return parsed;
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}

/** The shared connection; see the module comment. */
export class RedisConnection {
  readonly prefix: string;
  #client: Client;
  #o: RedisConnectOptions;
  #started = false;
  #up = true;
  #closed = false;
  #subscriber: Client | undefined;
  #subscribed = new Map<string, Set<Listener>>();
  #downSince = 0;
  #probeAt = 0;

  private constructor(client: Client, options: RedisConnectOptions) {
    this.#client = client;
    this.#o = options;
    this.prefix = options.prefix;
  }

  /**
   * Connects and checks the server answers, or throws a {@linkcode ConfigError} naming
   * `REDIS_URL` and the fix: a server that cannot be reached at start is a configuration error.
   */
  static async connect(options: RedisConnectOptions): Promise<RedisConnection> {
    const url = parseRedisUrl(options.url);
    const port = url.port || "6379";
    const host = `${url.hostname}:${port}`;
    if (options.isNetAllowed && !options.isNetAllowed(host)) {
      throw new ConfigError(
        "server.redis_url",
        `The host "${url.hostname}" of REDIS_URL is outside this process's network allowlist. ` +
          `Add it to "permissions.default.net" in deno.json (deno task start, deno task compile), ` +
          `or run with a flag that replaces that list, e.g. deno run -P --allow-net=${url.hostname},<the list> main.ts`,
      );
    }
    const state = { started: false, backoff: (_retries: number): number => 0 };
    // Before start-up has succeeded there is no retrying: the error goes to the operator.
    const client = makeClient(
      options,
      (retries, cause) => state.started ? state.backoff(retries) : new Error(cause.message),
    );
    const conn = new RedisConnection(client, options);
    state.backoff = (retries) => conn.#backoff(retries);
    client.on("error", (e: Error) => conn.#lost(e));
    client.on("ready", () => conn.#back());
    try {
      await client.connect();
      await client.ping();
    } catch (e) {
      await client.destroy?.();
      const reason = e instanceof Error ? e.message : String(e);
      throw new ConfigError(
        "server.redis_url",
        `Cannot reach Redis at REDIS_URL "${redactUrl(options.url)}" (${reason}). ` +
          "Start Redis (or Valkey) there, fix REDIS_URL (server.redis_url), " +
          "or unset it to keep all state in this process",
      );
    }
    conn.#started = true;
    state.started = true;
    conn.#up = true;
    return conn;
  }

  /** Whether the last contact with Redis worked. */
  get up(): boolean {
    return this.#up && this.#client.isReady;
  }

  /** A key in this deployment's namespace. */
  key(...parts: string[]): string {
    return `${this.prefix}${parts.join(":")}`;
  }

  /** Sends one command; throws {@linkcode RedisUnavailableError} when Redis cannot answer. */
  async command<T = unknown>(args: readonly RedisArg[]): Promise<T> {
    return await this.#send<T>(this.#client, args);
  }

  /** Sends one command whose bulk replies come back as bytes. */
  async commandBytes<T = unknown>(args: readonly RedisArg[]): Promise<T> {
    return await this.#send<T>(this.#client, args, { [RESP_TYPES.BLOB_STRING]: Buffer });
  }

  /** Runs a script by digest, loading it the first time (or after Redis restarted empty). */
  async script<T = unknown>(
    script: RedisScript,
    keys: readonly string[],
    args: readonly RedisArg[],
  ): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.command<T>(["EVALSHA", script.sha, ...tail]);
    } catch (e) {
      if (!(e instanceof Error) || !/NOSCRIPT/.test(e.message)) throw e;
      return await this.command<T>(["EVAL", script.lua, ...tail]);
    }
  }

  /** Publishes `message` on `channel` (under the prefix); false when Redis cannot take it. */
  async publish(channel: string, message: string): Promise<boolean> {
    try {
      await this.command(["PUBLISH", this.key(channel), message]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Calls `listener` with every message on `channel` (under the prefix), over a second
   * connection of its own; returns the function that stops listening. Messages sent while the
   * connection is down are lost: callers poll as well.
   */
  async subscribe(channel: string, listener: Listener): Promise<() => void> {
    const name = this.key(channel);
    let listeners = this.#subscribed.get(name);
    if (!listeners) {
      listeners = new Set();
      this.#subscribed.set(name, listeners);
      const set = listeners;
      try {
        const sub = await this.#sub();
        await sub.subscribe(name, (message: string) => {
          for (const l of [...set]) l(message);
        });
      } catch {
        // Down now: the subscriber resubscribes by itself once it reconnects.
      }
    }
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const client of [this.#subscriber, this.#client]) {
      try {
        if (client?.isOpen) await client.close();
      } catch {
        client?.destroy();
      }
    }
  }

  async #sub(): Promise<Client> {
    if (this.#subscriber) return this.#subscriber;
    const sub = this.#client.duplicate();
    sub.on("error", () => {});
    this.#subscriber = sub;
    await sub.connect();
    return sub;
  }

  async #send<T>(client: Client, args: readonly RedisArg[], typeMapping?: object): Promise<T> {
    if (this.#closed || !client.isReady) {
      this.#lost(new Error("the connection is down"));
      throw new RedisUnavailableError("Redis is out of reach");
    }
    // Connected but not answering (overloaded, paused): while that lasts, one command probes at
    // a time and the rest fail at once instead of each waiting out the deadline.
    if (!this.#up) {
      const now = Date.now();
      if (now < this.#probeAt) throw new RedisUnavailableError("Redis is out of reach");
      this.#probeAt = now + Math.min(1000, this.#o.retryMaxMs);
    }
    try {
      const reply = await client.sendCommand(
        args.map((a) => typeof a === "string" ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength)),
        typeMapping ? { typeMapping } : undefined,
      );
      if (!this.#up) this.#back();
      return reply as T;
    } catch (e) {
      // A reply error (NOSCRIPT, a wrong type) is Redis answering: the connection is fine.
      if (e instanceof ErrorReply) throw e;
      this.#lost(e);
      throw new RedisUnavailableError(
        `Redis did not answer: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
  }

  #backoff(retries: number): number {
    const base = Math.min(this.#o.retryMaxMs, 100 * 2 ** Math.min(retries, 16));
    return Math.max(50, Math.round(base * (0.5 + (this.#o.random ?? Math.random)() / 2)));
  }

  #lost(e: unknown): void {
    if (!this.#started || this.#closed || !this.#up) return;
    this.#up = false;
    this.#downSince = Date.now();
    this.#o.logger.warn(
      "Redis is out of reach: serving from local fallbacks (cache misses, per-replica rate limits and breakers) and reconnecting with backoff",
      { redis: redactUrl(this.#o.url), error: e instanceof Error ? e.message : String(e) },
    );
  }

  #back(): void {
    if (!this.#started || this.#up || this.#closed) return;
    this.#up = true;
    this.#o.logger.info("Redis is reachable again: shared state resumes", {
      redis: redactUrl(this.#o.url),
      down_ms: Date.now() - this.#downSince,
    });
  }
}
