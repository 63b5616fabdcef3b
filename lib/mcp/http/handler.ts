// The MCP HTTP endpoint: one fetch handler for Streamable HTTP (sessions, stateless, and the
// 2026-07-28 era request by request), the legacy SSE transport, /health, /metrics and OAuth
// discovery, composed of small steps (docs/ARCHITECTURE.md, "HTTP"):
//
// - the handler's state, made once, and each request's context: _context.ts
// - middleware: admission (draining, URL and header sizes, Host/Origin) _mw_admission.ts, CORS
//   _mw_cors.ts, the rate limit _mw_rate_limit.ts, credentials and toolsets _mw_auth.ts, the
//   body _mw_body.ts
// - routes: Streamable HTTP _route_streamable.ts (sessions _route_sessions.ts), 2026-07-28
//   _route_modern.ts, legacy SSE _route_sse.ts, pages and metadata _route_pages.ts, metrics
//   _route_metrics.ts
// - one access line per request: _access_log.ts
import type { ServedApp } from "../served_app.ts";
import { bindExchange } from "../../http/request_scope.ts";
import { INTERNAL_ERROR, jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import { clientKey } from "./_client_key.ts";
import { clientIp, decodeURIComponentSafe, forwardedRequest, methodIs, notFound } from "./_requests.ts";
import type { ConnectionInfo } from "./_requests.ts";
import { createState, drained, ownerOf, RequestContext } from "./_context.ts";
import type { HttpHandlerOptions, HttpState } from "./_context.ts";
import { createAdmission } from "./_mw_admission.ts";
import { decorated, preflight } from "./_mw_cors.ts";
import { rateLimited } from "./_mw_rate_limit.ts";
import { authenticate, requestToolsets } from "./_mw_auth.ts";
import { streamableRoute } from "./_route_streamable.ts";
import { sessionResumer } from "./_route_sessions.ts";
import { createModernRoute } from "./_route_modern.ts";
import type { ModernRoute } from "./_route_modern.ts";
import { openSse, sseMessage } from "./_route_sse.ts";
import { healthPage, isMetadataPath, metadataPage, rootPage } from "./_route_pages.ts";
import { createMetricsRoute } from "./_route_metrics.ts";

export type { ConnectionInfo } from "./_requests.ts";
export type { Caller, HttpHandlerOptions } from "./_context.ts";
export { MAX_HEADER_BYTES, MAX_URL_LENGTH } from "./_mw_admission.ts";
export { MAX_SSE_BACKLOG_BYTES } from "./_route_sse.ts";

/** The request handler, plus the controls `serveHttp` and tests need. */
export interface HttpHandler {
  (req: Request, info?: ConnectionInfo): Promise<Response>;
  /** Closes the sessions idle for longer than `session_idle_timeout` now; returns how many. */
  sweep(): number;
  /** Open sessions per transport. */
  sessions(): { streamable: number; sse: number };
  /**
   * Graceful stop: refuses new requests, waits up to `graceMs` for calls in flight, then closes
   * every session and stream.
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Resolves once the server can check credentials: with OAuth, when the authorization server's
   * metadata has been read. Rejects with a {@linkcode ConfigError} saying what to fix.
   */
  ready(): Promise<void>;
}

const MCP_PATHS = new Set(["/mcp", "/sse", "/message"]);
/** Paths counted by name in `opendata_http_requests_total` (others count as `other`). */
const KNOWN_PATHS = new Set(["/mcp", "/sse", "/message", "/health", "/metrics", "/"]);

/**
 * The toolsets `/mcp/<toolsets>` names, or undefined: one segment only, never a dot-name
 * (`/mcp/.well-known/...` is discovery a client tries, not toolsets: 404).
 */
function toolsetsInPath(path: string): string | undefined {
  const segment = path.startsWith("/mcp/") ? path.slice(5) : undefined;
  return segment !== undefined && !segment.includes("/") && !segment.startsWith(".")
    ? decodeURIComponentSafe(segment)
    : undefined;
}

/**
 * The HTTP server as one function: Streamable HTTP at `/mcp` (stateful or stateless), the legacy
 * SSE transport at `/sse` + `/message`, `/health` and `/`, with the Host/Origin checks, CORS,
 * per-IP rate limits, the bearer token, body caps and a request id on every response.
 */
export function createHttpHandler(app: ServedApp, options: HttpHandlerOptions): HttpHandler {
  const state = createState(app, options);
  state.resumer = sessionResumer(state);
  const settings = state.settings;
  const idleMs = settings.session_idle_timeout * 1000;
  const stopSweep = settings.stateless
    ? () => {}
    : state.every(Math.max(10, Math.min(idleMs / 2, 60_000)), () => state.store.sweep());
  const modern = createModernRoute(state);
  const route = createRouter(state, modern);

  const handler = (async (req: Request, info?: ConnectionInfo): Promise<Response> => {
    const started = performance.now();
    const requestId = crypto.randomUUID();
    const ip = clientIp(req, info, settings.trust_proxy);
    const url = URL.parse(info?.url ?? req.url);
    if (url === null) {
      // Deno builds the URL from the Host header, so a Host that is not a host name (with an
      // optional port) lands here: the client's mistake, not a server failure.
      state.access.write(
        { request_id: requestId, method: req.method, client_ip: ip, refused: "host" },
        400,
        performance.now() - started,
      );
      return jsonRpcError(400, SERVER_ERROR, "Bad Request: the Host header is not a valid host name", {
        headers: { "X-Request-Id": requestId },
      });
    }
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname;
    // The bearer token is one secret shared by every caller: it names no one, so per-client
    // limits follow the address (an authentication that names a user passes it as principal).
    const client = clientKey(ip, { ipv6Prefix: settings.client_ipv6_prefix });
    const ctx = new RequestContext({ req, url, path, requestId, ip, client }, info, started, state);
    let res: Response;
    try {
      res = await route(ctx);
    } catch (e) {
      ctx.log().error("request failed unexpectedly", { error: e instanceof Error ? e.message : String(e) });
      res = jsonRpcError(
        500,
        INTERNAL_ERROR,
        `Internal error: the failure was logged with request id ${requestId}`,
      );
    }
    res = decorated(state, ctx, res);
    finish(state, ctx, res);
    return res;
  }) as HttpHandler;

  handler.ready = async () => {
    if (state.oauth) await state.oauth.discover();
  };
  handler.sweep = () => state.store.sweep();
  handler.sessions = () => state.store.counts();
  handler.close = async (graceMs = 10_000) => {
    if (state.closing) return;
    state.closing = true;
    stopSweep();
    await drain(state, graceMs);
    await state.store.closeAll();
    await modern.close().catch(() => {});
    const stragglers = [...state.statelessOpen];
    state.statelessOpen.clear();
    await Promise.all(stragglers.map((server) => server.close().catch(() => {})));
    // Last: a POST into a live session may still start a body deadline while draining.
    state.bodyDeadlines?.stop();
  };
  return handler;
}

/** The route of each request: the middleware in order, then the route its path names. */
function createRouter(state: HttpState, modern: ModernRoute): (ctx: RequestContext) => Promise<Response> {
  const admission = createAdmission(state);
  const metricsRoute = state.served ? createMetricsRoute(state) : undefined;
  return async (ctx) => {
    const { req } = ctx;
    const refused = admission(ctx);
    if (refused) return refused;
    if (req.method === "OPTIONS") return preflight(state, ctx);
    if (ctx.path === "/health") return methodIs(req, ["GET", "HEAD"]) ?? await healthPage(state, req);
    // Each step that may wait is only awaited when it is on: an await costs every request a turn.
    const limited = state.limiter ? await rateLimited(state, ctx) : undefined;
    if (limited) return limited;
    if (ctx.path === "/metrics" && metricsRoute) return await metricsRoute(ctx);
    if (ctx.path === "/") return methodIs(req, ["GET", "HEAD"]) ?? rootPage(state);
    if (isMetadataPath(ctx.path)) return await metadataPage(state, ctx);
    // `/mcp/<toolsets>` is /mcp listing those toolsets (e.g. /mcp/fred-data,wikipedia).
    const pathToolsets = toolsetsInPath(ctx.path);
    if (pathToolsets !== undefined) ctx.path = "/mcp";
    if (!MCP_PATHS.has(ctx.path)) return notFound(ctx.path);
    const unauthorized = state.oauth || state.auth ? await authenticate(state, ctx) : undefined;
    if (unauthorized) return unauthorized;
    const unknown = requestToolsets(state, ctx, pathToolsets);
    if (unknown) return unknown;
    ctx.owner = ownerOf(state, ctx.caller);
    const forwarded = forwardedRequest(req, ctx.url.href, ctx.headers);
    // What runs on the request's behalf (its server, its tool calls) finds its context by it.
    bindExchange(forwarded, ctx);
    if (ctx.path === "/mcp") return await streamableRoute(state, ctx, forwarded, modern);
    if (ctx.path === "/sse") return methodIs(req, ["GET"]) ?? await openSse(state, ctx);
    return methodIs(req, ["POST"]) ?? await sseMessage(state, ctx, forwarded);
  };
}

/** The request's access line and metrics, once its response has been sent (or at once). */
function finish(state: HttpState, ctx: RequestContext, res: Response): void {
  const { req, url, fields } = ctx;
  // A URL without a query has no session id in it (and costs no URLSearchParams).
  const sessionId = res.headers.get("mcp-session-id") ?? req.headers.get("mcp-session-id") ??
    (url.search === "" ? null : url.searchParams.get("session_id") ?? url.searchParams.get("sessionId"));
  if (sessionId) fields["session_id"] = sessionId;
  const path = ctx.path;
  state.served?.httpRequests.inc(
    1,
    KNOWN_PATHS.has(path) ? path : path.startsWith("/mcp/") ? "/mcp" : "other",
    String(res.status),
  );
  // Waits for the response's end, so a tool call answered on its stream is on the line.
  ctx.afterSent(() => {
    ctx.logged = true;
    state.access.write(fields, res.status, performance.now() - ctx.started);
  });
}

/** Waits up to `graceMs` for the calls in flight to finish. */
async function drain(state: HttpState, graceMs: number): Promise<void> {
  if (drained(state)) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    new Promise<void>((resolve) => state.drainWaiters.add(resolve)),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!drained(state)) {
    state.logger.warn("closing with calls still in flight after the grace period", { grace_ms: graceMs });
  }
}
