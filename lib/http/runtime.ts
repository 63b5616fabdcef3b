import { systemClock } from "../clock.ts";
import type { Clock, Random } from "../clock.ts";
import { Logger } from "../log.ts";
import { USER_AGENT } from "../version.ts";
import { CircuitBreaker } from "./breaker.ts";
import type { BreakerOptions, BreakerSnapshot } from "./breaker.ts";
import { ResponseCache } from "./cache.ts";
import { HttpClient } from "./fetch_client.ts";
import type { HttpClientOptions, HttpRuntimeParts } from "./fetch_client.ts";

/** Options for {@linkcode HttpRuntime}. */
export interface HttpRuntimeOptions {
  clock?: Clock;
  random?: Random;
  logger?: Logger;
  /** Total bytes the shared response cache may hold. Default 64 MiB. */
  cacheMaxBytes?: number;
  /** Breaker settings for hosts whose provider gives none. */
  breaker?: BreakerOptions;
  userAgent?: string;
  fetch?: typeof fetch;
}

/** What one provider asks of {@linkcode HttpRuntime.client}. */
export type ClientOptions = Omit<HttpClientOptions, "runtime"> & { breaker?: BreakerOptions };

/**
 * Process-wide HTTP state: one breaker per upstream host, one bounded response cache, the
 * clock and the logger. Providers get their clients from here.
 */
export class HttpRuntime implements HttpRuntimeParts {
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly cache: ResponseCache;
  readonly userAgent: string;
  readonly fetch: typeof fetch;
  #breakers = new Map<string, CircuitBreaker>();
  #breakerDefaults: BreakerOptions;
  #breakerSettings = new Map<string, BreakerOptions>();

  constructor(options: HttpRuntimeOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.logger = options.logger ?? new Logger();
    this.cache = new ResponseCache(options.cacheMaxBytes ?? 64 * 1024 * 1024);
    this.userAgent = options.userAgent ?? USER_AGENT;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#breakerDefaults = options.breaker ?? { threshold: 5, cooldownMs: 60_000 };
  }

  /** The breaker guarding `host` (created on first use). */
  breakerFor(host: string): CircuitBreaker {
    let breaker = this.#breakers.get(host);
    if (!breaker) {
      breaker = new CircuitBreaker(this.#breakerSettings.get(host) ?? this.#breakerDefaults);
      this.#breakers.set(host, breaker);
    }
    return breaker;
  }

  /** A client for one provider; its breaker settings apply to its base URL's host. */
  client(options: ClientOptions): HttpClient {
    const { breaker, ...rest } = options;
    if (breaker) {
      try {
        this.#breakerSettings.set(new URL(options.baseUrl).host, breaker);
      } catch {
        // A base URL template such as https://{lang}.wikipedia.org has no single host.
      }
    }
    return new HttpClient({ ...rest, runtime: this });
  }

  /** Breaker state per host, for `/health`. */
  breakers(): Record<string, BreakerSnapshot> {
    const now = this.clock.now();
    return Object.fromEntries([...this.#breakers].map(([h, b]) => [h, b.snapshot(now)]));
  }
}
