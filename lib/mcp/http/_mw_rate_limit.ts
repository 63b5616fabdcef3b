// Middleware: the per-client rate limit (lib/mcp/http/_rate_limit.ts, shared across replicas
// with Redis), after the health check and before any route that does work.
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import type { HttpState, RequestContext } from "./_context.ts";

/** The 429 of a client over its budget, or undefined when it may go on. */
export async function rateLimited(state: HttpState, ctx: RequestContext): Promise<Response | undefined> {
  if (!state.limiter) return undefined;
  const wait = await state.limiter.take(ctx.caller.clientKey);
  if (wait <= 0) return undefined;
  ctx.fields["refused"] = "rate_limit";
  state.served?.clientRateLimitRefusals.inc(1);
  return jsonRpcError(
    429,
    SERVER_ERROR,
    `Too many requests: the limit is ${state.settings.rate_limit_per_minute} per minute per client; retry after ${wait} s`,
    { headers: { "Retry-After": String(wait) } },
  );
}
