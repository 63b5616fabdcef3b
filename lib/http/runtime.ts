import { systemClock } from "../clock.ts";
import type { Clock, Random } from "../clock.ts";
import { Logger } from "../log.ts";
import { USER_AGENT } from "../version.ts";
import { EndpointBreaker, MemoryBreakerStore } from "./breaker.ts";
import type { BreakerOptions, BreakerSnapshot, BreakerStore } from "./breaker.ts";
import { ResponseCache } from "./cache.ts";
import type { CacheStore } from "./cache.ts";
import type { HttpClient, HttpClientOptions, HttpRuntimeParts } from "./fetch_client.ts";
import { MemoryRateWindowStore } from "./rate_limiter.ts";
import type { RateWindowStore } from "./rate_limiter.ts";
import type { HostResolver } from "./ssrf.ts";

/** Options for {@linkcode HttpRuntime}. */
export interface HttpRuntimeOptions {
  clock?: Clock;
  random?: Random;
  logger?: Logger;
  /** Total bytes the in-memory response cache may hold. Default 64 MiB. */
  cacheMaxBytes?: number;
  /** Breaker settings for clients that give none. */
  breaker?: BreakerOptions;
  userAgent?: string;
  fetch?: typeof fetch;
  /** The response cache; default: in memory, bounded by `cacheMaxBytes`. */
  cacheStore?: CacheStore;
  /** The circuit breakers; default: in memory. */
  breakerStore?: BreakerStore;
  /** The rate-limit windows; default: in memory. */
  rateStore?: RateWindowStore;
  /** Name resolution for the SSRF guard; default: the system's (tests inject a table). */
  resolve?: HostResolver;
}

/** What one provider asks of {@linkcode HttpRuntime.client}. */
export type ClientOptions = Omit<HttpClientOptions, "runtime">;

const DEFAULT_BREAKER: BreakerOptions = { threshold: 5, cooldownMs: 60_000 };

/** The client class, once {@linkcode loadHttpClient} has loaded it. */
let clientClass: typeof HttpClient | undefined;

/**
 * Loads the HTTP client's code (fetch_client.ts and the modules it imports), which
 * {@linkcode HttpRuntime.client} needs. Listing tools makes no request, so a start does not load
 * it: the app loads it with a provider's code (lib/app.ts), tests and tools before making a client.
 */
export async function loadHttpClient(): Promise<void> {
  clientClass ??= (await import("./fetch_client.ts")).HttpClient;
}

/**
 * Process-wide HTTP state: the response cache, the rate-limit windows and the circuit breakers
 * (each behind a store interface), the clock and the logger. Providers get their clients here.
 */
export class HttpRuntime implements HttpRuntimeParts {
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly cache: CacheStore;
  readonly rateWindows: RateWindowStore;
  readonly userAgent: string;
  readonly fetch: typeof fetch;
  readonly resolve: HostResolver | undefined;
  #breakers: BreakerStore;
  #breakerDefaults: BreakerOptions;

  constructor(options: HttpRuntimeOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.logger = options.logger ?? new Logger();
    this.cache = options.cacheStore ?? new ResponseCache(options.cacheMaxBytes ?? 64 * 1024 * 1024);
    this.rateWindows = options.rateStore ?? new MemoryRateWindowStore();
    this.userAgent = options.userAgent ?? USER_AGENT;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.resolve = options.resolve;
    this.#breakers = options.breakerStore ?? new MemoryBreakerStore();
    this.#breakerDefaults = options.breaker ?? DEFAULT_BREAKER;
  }

  /** The breaker of one endpoint key (`"fred api.stlouisfed.org/fred/series"`). */
  breakerFor(key: string, options?: BreakerOptions): EndpointBreaker {
    return new EndpointBreaker(this.#breakers, key, options ?? this.#breakerDefaults);
  }

  /** A client for one provider; {@linkcode loadHttpClient} must have loaded its code. */
  client(options: ClientOptions): HttpClient {
    if (!clientClass) throw new Error("The HTTP client is not loaded: await loadHttpClient() first");
    return new clientClass({ ...options, runtime: this });
  }

  /**
   * The breakers that hold state, by endpoint key, for `/health`: endpoints whose recent calls
   * failed, with their state and last error. An endpoint that answers well is not listed.
   */
  async breakers(): Promise<Record<string, BreakerSnapshot>> {
    return await this.#breakers.snapshots(this.clock.now());
  }
}
