// Shared state for replicas: when `REDIS_URL` is set, the HTTP client's cache, rate windows and
// breakers, the per-IP HTTP limit and the background jobs live in Redis (or Valkey), so N
// replicas behind a load balancer act as one server. Without it nothing here is loaded and
// everything stays in the process, as before.
import type { Random } from "../clock.ts";
import type { ServerSettings } from "../config/server_settings.ts";
import type { BreakerStore } from "../http/breaker.ts";
import type { CacheStore } from "../http/cache.ts";
import type { RateWindowStore } from "../http/rate_limiter.ts";
import type { Logger } from "../log.ts";
import type { SharedJobsOptions } from "../output/jobs.ts";
import { RedisConnection } from "./connection.ts";
import {
  RedisBreakerStore,
  RedisCacheStore,
  RedisClientLimiter,
  RedisRateWindowStore,
} from "./http_stores.ts";
import type { ClientLimiter } from "./http_stores.ts";
import { RedisJobStore } from "./job_store.ts";
import { RedisSessionStore } from "./session_store.ts";
import { RedisServerEventBus } from "./event_bus.ts";
import { RedisTaskRelay } from "./task_relay.ts";
import { recipeSigningKey, sessionSigningKey } from "../output/job_signing.ts";

export { redactUrl, RedisConnection, RedisUnavailableError } from "./connection.ts";
export type { ClientLimiter } from "./http_stores.ts";

/** What the app hands to the HTTP runtime, the providers and the HTTP handler. */
export interface SharedState {
  /** This process's name in leases and logs. */
  replica: string;
  connection: RedisConnection;
  cacheStore: CacheStore;
  rateStore: RateWindowStore;
  breakerStore: BreakerStore;
  jobs: SharedJobsOptions;
  /** The per-client HTTP limit shared by all replicas, falling back to `local`. */
  clientLimiter(perMinute: number, local: ClientLimiter): ClientLimiter;
  /** The 2025-11-25 sessions every replica serves. */
  sessions: RedisSessionStore;
  /** The change events of 2026-07-28 listen streams, heard by every replica. */
  eventBus: RedisServerEventBus;
  /** Tasks waiting for input on one replica, reached from every other. */
  taskRelay: RedisTaskRelay;
  close(): Promise<void>;
}

/** Options for {@linkcode openSharedState}. */
export interface SharedStateOptions {
  logger: Logger;
  random?: Random;
  /** Whether the process may connect to `host:port` (the `--allow-net` check). */
  isNetAllowed?: (host: string) => boolean;
}

/**
 * Connects to `server.redis_url` and builds the shared stores, or resolves to undefined when
 * no URL is set. An unreachable or refused Redis is a {@linkcode ConfigError} (exit 2).
 */
export async function openSharedState(
  server: ServerSettings,
  options: SharedStateOptions,
): Promise<SharedState | undefined> {
  if (!server.redis_url) return undefined;
  const connection = await RedisConnection.connect({
    url: server.redis_url,
    prefix: server.redis_prefix,
    timeoutMs: Math.round(server.redis_timeout * 1000),
    retryMaxMs: Math.round(server.redis_retry_max * 1000),
    logger: options.logger,
    ...(options.random ? { random: options.random } : {}),
    ...(options.isNetAllowed ? { isNetAllowed: options.isNetAllowed } : {}),
  });
  const replica = `replica-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  options.logger.info("shared state in Redis", { replica, prefix: server.redis_prefix });
  if (!server.request_state_key) {
    options.logger.warn(
      "MCP_REQUEST_STATE_KEY is not set: jobs taken over from another replica are resumed from their recipe in Redis unsigned, sessions are rebuilt from unsigned records, and tasks' input is relayed between replicas unsigned, so whoever can write to Redis can have a replica run a forged recipe, use a session as another client or answer a task's input request; set the same secret (32+ characters) on every replica",
    );
  }
  const secret = server.request_state_key;
  const signingKey = secret ? await recipeSigningKey(secret) : undefined;
  const sessions = new RedisSessionStore(connection, replica, {
    ttlMs: Math.round(server.session_idle_timeout * 1000),
    ...(secret ? { signingKey: await sessionSigningKey(secret) } : {}),
    logger: options.logger,
  });
  return {
    replica,
    connection,
    cacheStore: new RedisCacheStore(connection, {
      maxEntryBytes: Math.round(server.redis_cache_entry_max_kb * 1024),
    }),
    rateStore: new RedisRateWindowStore(connection, replica),
    breakerStore: new RedisBreakerStore(connection),
    jobs: {
      store: new RedisJobStore(connection, replica, options.logger),
      leaseMs: Math.round(server.job_lease_timeout * 1000),
      takeoverIntervalMs: Math.round(server.job_takeover_interval * 1000),
      ...(signingKey ? { signingKey } : {}),
    },
    clientLimiter: (perMinute, local) => new RedisClientLimiter(connection, perMinute, local),
    sessions,
    eventBus: new RedisServerEventBus(connection, replica),
    // A relayed request is one round trip through Redis and the other replica: a command's time.
    taskRelay: new RedisTaskRelay(connection, replica, {
      timeoutMs: Math.round(server.redis_timeout * 1000),
      signingKey,
    }),
    close: async () => {
      sessions.close();
      await connection.close();
    },
  };
}
