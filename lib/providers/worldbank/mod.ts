import { DEFAULT_RETRY_POLICY } from "../../http/retry.ts";
import type { RateLimit } from "../../http/rate_limiter.ts";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { WdsClient } from "./client.ts";
import type { WorldbankSettings } from "./config.ts";
import { createTools } from "./tools.ts";

/** Creates the World Bank documents provider: four read-only tools over the WDS search API. */
export function createProvider(context: ProviderContext<WorldbankSettings>): Provider {
  const s = context.settings;
  const rateLimits: RateLimit[] = [];
  if (s.rate_limit_per_second > 0) rateLimits.push({ requests: s.rate_limit_per_second, perMs: 1000 });
  if (s.rate_limit_per_minute > 0) rateLimits.push({ requests: s.rate_limit_per_minute, perMs: 60_000 });
  const http = context.http.client({
    provider: "worldbank",
    upstreamName: "World Bank Documents API",
    baseUrl: s.base_url,
    timeoutMs: s.timeout * 1000,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: s.max_retries, baseDelayMs: s.retry_backoff_ms },
    rateLimits,
    cacheTtlMs: s.cache_ttl * 1000,
    maxBodyBytes: Math.round(s.max_body_mb * 1024 * 1024),
    breaker: { threshold: s.breaker_threshold, cooldownMs: s.breaker_cooldown * 1000 },
  });
  return {
    id: "worldbank",
    tools: createTools({ client: new WdsClient(http, s.base_url), settings: s, clock: context.clock }),
  };
}
