import type { BreakerOptions } from "./breaker.ts";
import type { RateLimit } from "./rate_limiter.ts";
import { DEFAULT_RETRY_POLICY } from "./retry.ts";
import type { RetryPolicy } from "./retry.ts";

/**
 * The settings every provider block accepts, units in the names (seconds unless `_ms`). The
 * config layer reads and validates them (lib/config/provider_spec.ts); this layer consumes them.
 */
export interface CommonSettings {
  base_url: string;
  /** Deadline of one tool's upstream call, retries included, in seconds. */
  timeout: number;
  max_retries: number;
  retry_backoff_ms: number;
  /** How long successful answers are reused, in seconds (0 = no cache). */
  cache_ttl: number;
  /** Client-side limit of upstream requests per minute (0 = none). */
  rate_limit_per_minute: number;
  /** Client-side limit of upstream requests per second (0 = none). */
  rate_limit_per_second: number;
  breaker_threshold: number;
  /** Seconds an open breaker waits before a trial request. */
  breaker_cooldown: number;
  /** Largest upstream body read, in MiB. */
  max_body_mb: number;
}

/** The client options every provider derives the same way from its common settings. */
export interface SettingsClientOptions {
  baseUrl: string;
  timeoutMs: number;
  retry: RetryPolicy;
  rateLimits: RateLimit[];
  cacheTtlMs: number;
  maxBodyBytes: number;
  breaker: BreakerOptions;
}

/**
 * Turns a provider's common settings (seconds, MiB, per-minute and per-second rates) into
 * client options (milliseconds, bytes, sliding windows), so every common key takes effect the
 * same way in every provider. Spread it first and override what the provider's contract fixes
 * (docs/apis/<provider>.md), e.g. `{ ...clientSettings(s), retry: providerPolicy }`.
 */
export function clientSettings(settings: CommonSettings): SettingsClientOptions {
  return {
    baseUrl: settings.base_url,
    timeoutMs: Math.round(settings.timeout * 1000),
    retry: {
      ...DEFAULT_RETRY_POLICY,
      maxRetries: settings.max_retries,
      baseDelayMs: settings.retry_backoff_ms,
    },
    rateLimits: rateLimitsOf(settings),
    cacheTtlMs: Math.round(settings.cache_ttl * 1000),
    maxBodyBytes: Math.round(settings.max_body_mb * 1024 * 1024),
    breaker: {
      threshold: settings.breaker_threshold,
      cooldownMs: Math.round(settings.breaker_cooldown * 1000),
    },
  };
}

/**
 * The sliding windows for the per-minute and per-second limits. The per-minute limit is a window
 * of 60 s (bursts allowed up to the limit); the per-second rate paces requests evenly, one per
 * `1000 / rate` ms (2 a second = one every 500 ms), so no second ever sees more than the rate.
 */
export function rateLimitsOf(
  settings: Pick<CommonSettings, "rate_limit_per_minute" | "rate_limit_per_second">,
): RateLimit[] {
  const out: RateLimit[] = [];
  if (settings.rate_limit_per_minute > 0) {
    out.push({ requests: settings.rate_limit_per_minute, perMs: 60_000 });
  }
  const rps = settings.rate_limit_per_second;
  if (rps > 0) out.push({ requests: 1, perMs: Math.max(1, Math.round(1000 / rps)) });
  return out;
}
