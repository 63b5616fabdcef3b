// Middleware: CORS. A preflight is answered here; every answer gets the CORS headers its Origin
// earns (lib/mcp/http/_security.ts says which) and the request id.
import { allowOf } from "./_requests.ts";
import { corsHeaders, preflightHeaders } from "./_security.ts";
import { finishResponse } from "./_streams.ts";
import type { HttpState, RequestContext } from "./_context.ts";

/** The answer to a CORS preflight (or a plain OPTIONS: the methods the path allows). */
export function preflight(state: HttpState, ctx: RequestContext): Response {
  const cors = corsHeaders(ctx.req.headers.get("origin"), state.settings.cors_origins);
  return new Response(null, {
    status: 204,
    headers: Object.keys(cors).length ? preflightHeaders() : { "Allow": allowOf(ctx.path) },
  });
}

/** `res` with the request id and the CORS headers (a copy when its headers cannot change). */
export function decorated(state: HttpState, ctx: RequestContext, res: Response): Response {
  const origin = ctx.req.headers.get("origin");
  const cors = origin === null ? undefined : corsHeaders(origin, state.settings.cors_origins);
  try {
    res.headers.set("X-Request-Id", ctx.requestId);
    if (cors) { for (const k in cors) res.headers.set(k, cors[k]!); }
    return res;
  } catch {
    return finishResponse(res, { "X-Request-Id": ctx.requestId, ...cors });
  }
}
