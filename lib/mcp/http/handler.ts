// The MCP HTTP endpoint: one fetch handler for Streamable HTTP (sessions, stateless, and the
// 2026-07-28 era request by request), the legacy SSE transport, /health, /metrics and OAuth
// discovery. Longer than the 500 lines the house keeps to, on purpose: createHttpHandler() is one
// closure over the handler's live state (sessions, listen streams, rate limits, calls in flight,
// shutdown) that every route reads and changes; split into modules, each would need that state
// handed over piece by piece. The parts that stand alone are beside it: JSON-RPC reading
// (_jsonrpc.ts), sessions (_sessions.ts), Host/Origin/CORS/bearer checks (_security.ts), the
// per-client rate limit (_rate_limit.ts), request helpers (_requests.ts) and OAuth (oauth.ts).
import type { ServedApp } from "../served_app.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { CONTACT_URL } from "../../version.ts";
import {
  classifyInboundRequest,
  createMcpHandler,
  isInitializeRequest,
  isJSONRPCRequest,
  WebStandardStreamableHTTPServerTransport,
} from "../sdk.ts";
import type { JSONRPCMessage, McpHttpHandler, McpServer } from "../sdk.ts";
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  jsonRpcError,
  readJsonRpc,
  SERVER_ERROR,
  SESSION_NOT_FOUND,
  withBatchErrors,
} from "./_jsonrpc.ts";
import type { JsonRpcErrorMessage, ReadResult } from "./_jsonrpc.ts";
import type { LegacySseTransport } from "./_legacy_sse.ts";
import { clientKey } from "./_client_key.ts";
import { IpRateLimiter } from "./_rate_limit.ts";
import { BearerAuth, corsHeaders, hostRefusal, originRefusal, preflightHeaders } from "./_security.ts";
import type { OAuthResourceServer, Principal } from "./oauth.ts";
import { ownerHash } from "../../output/owner_hash.ts";
import type { AccessPolicy } from "./_security.ts";
import { SessionStore } from "./_sessions.ts";
import { tooManySessions } from "./_session_refusal.ts";
import { holdingStream, postedShared, recordOf, sentElsewhere, sessionRestorer } from "./shared_sessions.ts";
import type { SessionRecord, SharedCopy } from "./shared_sessions.ts";
import { parseToolsetList, UnknownToolsetError } from "../toolsets.ts";
import type { Session } from "./_sessions.ts";
import { finishResponse, SSE_HEADERS } from "./_streams.ts";
import { metrics } from "../../metrics/mod.ts";
import {
  allowOf,
  CLIENT_HEADER,
  clientIp,
  decodeURIComponentSafe,
  givenOAuth,
  GUARD_STAMP_HEADER,
  isJson,
  methodIs,
  notFound,
  oauthOf,
  OWNER_HEADER,
  plain,
  TOOLSETS_HEADER,
  withRequestId,
} from "./_requests.ts";
import type { ConnectionInfo } from "./_requests.ts";

export { GUARD_STAMP_HEADER, withRequestId } from "./_requests.ts";
export type { ConnectionInfo } from "./_requests.ts";

/** Longest request URL accepted, in characters. */
export const MAX_URL_LENGTH = 8 * 1024;
/** Most bytes of request header names and values together. */
export const MAX_HEADER_BYTES = 32 * 1024;
/** Bytes queued for a legacy SSE client that does not read before its session is dropped. */
export const MAX_SSE_BACKLOG_BYTES = 8 * 1024 * 1024;

/** Options for {@linkcode createHttpHandler}. */
export interface HttpHandlerOptions {
  logger: Logger;
  /** Time for idle expiry, rate limits and uptime; default the app's clock. */
  clock?: Clock;
  /**
   * Runs `fn` every `ms` milliseconds until the returned function is called. Default
   * `setInterval`; tests pass a hand-driven one instead of waiting.
   */
  every?: (ms: number, fn: () => void) => () => void;
  /** Whether the process may connect to `host` (the `--allow-net` check of the OAuth issuer). */
  isNetAllowed?: (host: string) => boolean;
  /** The OAuth resource server to use instead of one built from `oauth_issuer` (tests). */
  oauth?: OAuthResourceServer;
}

/** What a request is allowed as, after the credentials check. */
export interface Caller {
  /** The authenticated user (OAuth), when there is one. */
  principal?: Principal;
  /**
   * Whom per-client limits count this request against: the OAuth principal's id when there is
   * one (many users may share an address behind a proxy), else the client address.
   */
  clientKey: string;
}

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

interface StreamableSession extends Session, SharedCopy {
  kind: "streamable";
  transport: WebStandardStreamableHTTPServerTransport;
  inflight: number;
  /** The logger of the DELETE request that ends the session, so its log line has the request id. */
  closedBy?: Logger;
  /** The open POST stream of each request not answered yet, by request id. */
  calls: Map<RequestId, PostCalls>;
}

type RequestId = string | number;

/** The requests of one POST whose answers go out on its stream. */
interface PostCalls {
  waiting: Set<RequestId>;
  /** Whether the client cancelled one of them: the SDK never answers it, so never ends the stream. */
  cancelled: boolean;
}

/**
 * Marks request `id` answered (or cancelled by the client); ends its POST stream once all of
 * that POST's requests are settled and one was cancelled, since the SDK then would not.
 */
function settle(session: StreamableSession, id: RequestId, cancelled: boolean): void {
  const post = session.calls.get(id);
  if (!post) return;
  session.calls.delete(id);
  post.waiting.delete(id);
  if (cancelled) post.cancelled = true;
  // The SDK ends a POST's stream once every request on it is answered; a cancelled one never is.
  if (post.cancelled && post.waiting.size === 0) session.transport.closeSSEStream(id);
}

/**
 * `res`, with `onDone` called once it has been sent, has failed, or the client went away. Where
 * the HTTP server says when a response is done (`completed`) the response goes on as it is;
 * otherwise its body is followed to its end ({@linkcode finishResponse}).
 */
function whenSent(res: Response, onDone: () => void, completed: Promise<void> | undefined): Response {
  if (!completed) return finishResponse(res, {}, onDone);
  completed.then(onDone, onDone);
  return res;
}

/** The id of a single `subscriptions/listen` request, if `body` is one. */
function listenRequestId(body: unknown): RequestId | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const m = body as { method?: unknown; id?: unknown };
  if (m.method !== "subscriptions/listen") return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}

function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  if (!("method" in message) || message.method !== "notifications/cancelled") return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

interface SseSession extends Session {
  kind: "sse";
  transport: LegacySseTransport;
}

function defaultEvery(ms: number, fn: () => void): () => void {
  const id = setInterval(fn, ms);
  return () => clearInterval(id);
}

const MCP_PATHS = new Set(["/mcp", "/sse", "/message"]);
/** Where the protected resource metadata is (RFC 9728), in root and path (`/mcp`) forms. */
const PRM_PATH = "/.well-known/oauth-protected-resource";

/**
 * The resources a token may name: legacy SSE is its own protected resource (RFC 9728: one per
 * path), so a client that starts there gets metadata naming its URL; a token for /mcp works there
 * too (one server).
 */
function accepted(base: string, legacy: boolean): string | string[] {
  return legacy ? [`${base}/sse`, `${base}/mcp`] : `${base}/mcp`;
}

/** The resource whose metadata a path under PRM_PATH serves: `/sse` for legacy SSE, else `/mcp`. */
function prmResource(path: string): "/sse" | "/mcp" {
  return path === `${PRM_PATH}/sse` ? "/sse" : "/mcp";
}

/** Whether `path` is a legacy SSE endpoint, a protected resource of its own (`/sse`). */
function isLegacyPath(path: string): boolean {
  return path === "/sse" || path === "/message";
}

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

/** The 401 of /metrics on the /mcp port when OAuth guards /mcp and no metrics token is set. */
function metricsNeedToken(realm: string): Response {
  return new Response(
    "Unauthorized: with MCP_OAUTH_ISSUER, /metrics on this port needs MCP_METRICS_TOKEN; set it and " +
      "scrape with Authorization: Bearer <that token>, or scrape the metrics_port listener\n",
    {
      status: 401,
      headers: {
        "Content-Type": "text/plain; charset=utf-8",
        "WWW-Authenticate": `Bearer realm="${realm}"`,
      },
    },
  );
}
/** Paths counted by name in `opendata_http_requests_total` (others count as `other`). */
const KNOWN_PATHS = new Set(["/mcp", "/sse", "/message", "/health", "/metrics", "/"]);

/**
 * The HTTP server as one function: Streamable HTTP at `/mcp` (stateful or stateless), the legacy
 * SSE transport at `/sse` + `/message`, `/health` and `/`, with the Host/Origin checks, CORS,
 * per-IP rate limits, the bearer token, body caps and a request id on every response.
 */
export function createHttpHandler(app: ServedApp, options: HttpHandlerOptions): HttpHandler {
  const settings = app.config.server;
  const logger = options.logger;
  const clock = options.clock ?? app.http.clock;
  const every = options.every ?? defaultEvery;
  const startedAt = clock.now();
  const idleMs = settings.session_idle_timeout * 1000;
  const keepAliveMs = Math.max(1, Math.round(settings.keepalive_interval * 1000));
  const bodyTimeoutMs = Math.round(settings.body_timeout * 1000);
  const store = new SessionStore(settings.max_sessions, idleMs, clock, logger, {
    maxPerClient: settings.max_sessions_per_client,
    reclaimIdleMs: settings.session_reclaim_idle * 1000,
    graceMs: settings.session_reclaim_grace * 1000,
    initTimeoutMs: settings.session_init_timeout * 1000,
  });
  const localLimiter = settings.rate_limit_enabled
    ? new IpRateLimiter(settings.rate_limit_per_minute, clock)
    : null;
  // With Redis the per-IP budget holds across replicas; this replica's buckets stand in meanwhile.
  const limiter = localLimiter && app.shared
    ? app.shared.clientLimiter(settings.rate_limit_per_minute, localLimiter)
    : localLimiter;
  const auth = settings.auth_token ? new BearerAuth(settings.auth_token) : null;
  const oauth = options.oauth ? givenOAuth(options.oauth) : oauthOf(app, clock, options.isNetAllowed);
  // Prometheus series (lib/metrics): served at /metrics when metrics are on, behind
  // metrics_token, else the same token as /mcp.
  const served = metrics;
  /** The scrape token's check, made with the metrics route's code on the first /metrics request. */
  let scrapeAuth: BearerAuth | null | undefined;
  if (served) served.http.sessions = () => store.counts();
  // Hook: with Redis, sessions are shared by replicas (shared_sessions.ts).
  const shared = settings.stateless ? undefined : app.shared?.sessions;
  const restorer = shared && sessionRestorer<StreamableSession, Caller>({
    shared,
    logger,
    held: (id) => store.peek(id)?.kind === "streamable" ? store.peek(id) as StreamableSession : undefined,
    open: (rec, init, req, log, caller) =>
      newSession(req, init, [], log, caller, new Set(rec.toolsets), undefined, rec),
  });
  const policy: AccessPolicy = {
    bindHost: settings.http_host,
    allowedHosts: settings.allowed_hosts,
    allowedOrigins: settings.allowed_origins,
    corsOrigins: settings.cors_origins,
  };
  const stopSweep = settings.stateless
    ? () => {}
    : every(Math.max(10, Math.min(idleMs / 2, 60_000)), () => store.sweep());
  /** Servers of stateless requests still answering, so shutdown can wait for and then end them. */
  const statelessOpen = new Set<McpServer>();
  /** 2026-07-28 exchanges still answering. */
  let modernOpen = 0;
  /** Open `subscriptions/listen` streams, by client and in all. */
  const listenOpen = new Map<string, number>();
  let listenTotal = 0;
  /**
   * Who calls when there is no session (2026-07-28 requests, stateless mode): the bearer token's
   * holder when one is required, otherwise everyone alike. Jobs and projects belong to it.
   */
  const sharedOwner = auth ? "auth:bearer" : "anonymous";
  /**
   * The owner of a request's work where there is no session: the OAuth user; else the bearer
   * token's holder or everyone alike, except with `writes: bounded`, where each client address
   * owns its own (bounded) work.
   */
  const ownerOf = (caller: Caller): string =>
    caller.principal?.id ??
      (settings.writes === "bounded" && !auth ? `client:${caller.clientKey}` : sharedOwner);
  /**
   * The owner of a session's work: the OAuth user, across their sessions; with `writes:
   * bounded` and no authentication the client address, so that opening more sessions does not
   * buy a client more room; otherwise the session itself.
   */
  const sessionOwner = (caller: Caller, id: string): string =>
    caller.principal?.id ??
      (settings.writes === "bounded" && !auth ? `client:${caller.clientKey}` : `session:${id}`);
  /** The toolsets a forwarded request carries (checked in route()); empty: the core tools only. */
  const toolsetsOf = (value: string | null | undefined): ReadonlySet<string> =>
    value === null || value === undefined ? app.defaultToolsets : new Set(value.split(",").filter(Boolean));
  // 2026-07-28 requests: the SDK's per-request entry, one fresh server per request. 2025-era
  // traffic never reaches it (this handler routes it to the session code below).
  const modern: McpHttpHandler = createMcpHandler(
    ({ requestInfo }) =>
      app.newServer({
        owner: requestInfo?.headers.get(OWNER_HEADER) ?? sharedOwner,
        client: requestInfo?.headers.get(CLIENT_HEADER) ?? "unknown",
        toolsets: toolsetsOf(requestInfo?.headers.get(TOOLSETS_HEADER)),
      }),
    {
      legacy: "reject",
      keepAliveMs,
      // The caps that answer are this handler's (per client, and all together, with a message
      // that says what to do); the SDK's own stays behind them as a backstop.
      maxSubscriptions: settings.max_listen_streams * 2,
      maxRequestBodySize: settings.max_body_bytes,
      ...(app.shared?.eventBus ? { bus: app.shared.eventBus } : {}),
      onerror: (e) => logger.debug("modern request error", { error: e.message }),
    },
  );
  const authMode = oauth ? "oauth" : auth ? "token" : "none";
  let closing = false;
  const drainWaiters = new Set<() => void>();
  const drained = (): boolean => statelessOpen.size === 0 && modernOpen === 0 && !store.busy();
  const notifyDrain = (): void => {
    // Only a shutdown waits to drain: checking every session after every request would make
    // each request's cost grow with the number of sessions.
    if (drainWaiters.size === 0 || !drained()) return;
    for (const resolve of drainWaiters) resolve();
    drainWaiters.clear();
  };

  async function handle(req: Request, info?: ConnectionInfo): Promise<Response> {
    const started = performance.now();
    const requestId = crypto.randomUUID();
    const ip = clientIp(req, info, settings.trust_proxy);
    // The bearer token is one secret shared by every caller: it names no one, so per-client
    // limits follow the address (an authentication that names a user passes it as principal).
    const client = clientKey(ip, { ipv6Prefix: settings.client_ipv6_prefix });
    const reqLogger = logger.child({ request_id: requestId });
    const href = info?.url ?? req.url;
    const url = URL.parse(href);
    if (url === null) {
      // Deno builds the URL from the Host header, so a Host that is not a host name (with an
      // optional port) lands here: the client's mistake, not a server failure.
      reqLogger.info("http request", {
        method: req.method,
        client_ip: ip,
        refused: "host",
        status: 400,
        duration_ms: Math.round(performance.now() - started),
      });
      return jsonRpcError(400, SERVER_ERROR, "Bad Request: the Host header is not a valid host name", {
        headers: { "X-Request-Id": requestId },
      });
    }
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname;
    const fields: Record<string, unknown> = { method: req.method, path, client_ip: ip };
    let res: Response;
    try {
      res = await route(req, url, path, client, requestId, reqLogger, fields, info);
    } catch (e) {
      reqLogger.error("request failed unexpectedly", { error: e instanceof Error ? e.message : String(e) });
      res = jsonRpcError(
        500,
        INTERNAL_ERROR,
        `Internal error: the failure was logged with request id ${requestId}`,
      );
    }
    const extra: Record<string, string> = {
      "X-Request-Id": requestId,
      ...corsHeaders(req.headers.get("origin"), settings.cors_origins),
    };
    try {
      for (const [k, v] of Object.entries(extra)) res.headers.set(k, v);
    } catch {
      res = finishResponse(res, extra);
    }
    const sessionId = res.headers.get("mcp-session-id") ?? req.headers.get("mcp-session-id") ??
      url.searchParams.get("session_id") ?? url.searchParams.get("sessionId");
    if (sessionId) fields["session_id"] = sessionId;
    reqLogger.info("http request", {
      ...fields,
      status: res.status,
      duration_ms: Math.round(performance.now() - started),
    });
    served?.httpRequests.inc(
      1,
      KNOWN_PATHS.has(path) ? path : path.startsWith("/mcp/") ? "/mcp" : "other",
      String(res.status),
    );
    return res;
  }

  async function route(
    req: Request,
    url: URL,
    path: string,
    client: string,
    requestId: string,
    reqLogger: Logger,
    fields: Record<string, unknown>,
    conn: ConnectionInfo | undefined,
  ): Promise<Response> {
    const refused = admission(req, url, path, fields);
    if (refused) return refused;
    if (req.method === "OPTIONS") {
      const cors = corsHeaders(req.headers.get("origin"), settings.cors_origins);
      return new Response(null, {
        status: 204,
        headers: Object.keys(cors).length ? preflightHeaders() : { "Allow": allowOf(path) },
      });
    }
    if (path === "/health") return methodIs(req, ["GET", "HEAD"]) ?? await healthPage(req);

    if (limiter) {
      const wait = await limiter.take(client);
      if (wait > 0) {
        fields["refused"] = "rate_limit";
        served?.clientRateLimitRefusals.inc(1);
        return jsonRpcError(
          429,
          SERVER_ERROR,
          `Too many requests: the limit is ${settings.rate_limit_per_minute} per minute per client; retry after ${wait} s`,
          { headers: { "Retry-After": String(wait) } },
        );
      }
    }
    if (path === "/metrics" && served) return await metricsRoute(req, served, { path, reqLogger, fields });
    if (path === "/") return methodIs(req, ["GET", "HEAD"]) ?? rootPage();
    if (path === PRM_PATH || path.startsWith(`${PRM_PATH}/`)) {
      if (!oauth) return notFound(path);
      return methodIs(req, ["GET", "HEAD"]) ?? Response.json(
        (await import("./oauth_claims.ts")).resourceMetadata(resourceOf(url, prmResource(path)), {
          issuer: oauth.issuer,
          scopes: settings.oauth_scopes,
          name: settings.name,
          docs: `${CONTACT_URL}/blob/main/docs/DEPLOYMENT.md`,
        }),
        { headers: { "Cache-Control": "public, max-age=3600" } },
      );
    }
    // `/mcp/<toolsets>` is /mcp listing those toolsets (e.g. /mcp/fred-data,wikipedia).
    const pathToolsets = toolsetsInPath(path);
    if (pathToolsets !== undefined) path = "/mcp";
    if (!MCP_PATHS.has(path)) return notFound(path);

    const caller = await authenticate(req, url, { path, client, reqLogger, fields });
    if (caller instanceof Response) return caller;
    const toolsets = requestToolsets(req, url, { path, pathToolsets, fields });
    if (toolsets instanceof Response) return toolsets;
    const forwarded = withRequestId(req, requestId, toolsets, ownerOf(caller), url.href, caller.clientKey);
    if (path === "/mcp") return await mcp(req, forwarded, reqLogger, caller, toolsets, conn);
    if (path === "/sse") return methodIs(req, ["GET"]) ?? await openSse(url, reqLogger, caller, toolsets);
    return methodIs(req, ["POST"]) ?? await sseMessage(req, forwarded, url, conn, caller);
  }

  /**
   * Refuses what no route serves: new requests while draining, an over-long URL or header block,
   * a missing or foreign Host, a foreign Origin (DNS rebinding).
   */
  function admission(
    req: Request,
    url: URL,
    path: string,
    fields: Record<string, unknown>,
  ): Response | undefined {
    // While draining, only POSTs into live sessions pass (they may carry a client's answer to
    // a call in flight); any new request among them is refused after parsing.
    if (closing && !(req.method === "POST" && (path === "/message" || req.headers.has("mcp-session-id")))) {
      return shuttingDown();
    }
    if (url.href.length > MAX_URL_LENGTH) {
      return plain(414, `The request URL is longer than ${MAX_URL_LENGTH} characters`);
    }
    let headerBytes = 0;
    for (const [k, v] of req.headers) if (k !== GUARD_STAMP_HEADER) headerBytes += k.length + v.length + 4;
    if (headerBytes > MAX_HEADER_BYTES) {
      return plain(431, `The request headers exceed ${MAX_HEADER_BYTES} bytes`);
    }
    const hostHeader = req.headers.get("host");
    if (hostHeader === null || hostHeader.trim() === "") {
      fields["refused"] = "host";
      return jsonRpcError(400, SERVER_ERROR, "Bad Request: a Host header is required (HTTP/1.1)");
    }
    const hostProblem = hostRefusal(hostHeader, policy);
    if (hostProblem) {
      fields["refused"] = "host";
      return jsonRpcError(403, SERVER_ERROR, `Forbidden: ${hostProblem}`);
    }
    const originProblem = originRefusal(req.headers.get("origin"), policy);
    if (originProblem) {
      fields["refused"] = "origin";
      return jsonRpcError(403, SERVER_ERROR, `Forbidden: ${originProblem}`);
    }
    return undefined;
  }

  /** /metrics on this port: the scrape token's check, and OAuth's tokens never taken for one. */
  async function metricsRoute(
    req: Request,
    registry: NonNullable<typeof served>,
    at: { path: string; reqLogger: Logger; fields: Record<string, unknown> },
  ): Promise<Response> {
    const { path, reqLogger, fields } = at;
    const { metricsAuth, metricsResponse } = await import("../../metrics/serve.ts");
    if (scrapeAuth === undefined) scrapeAuth = metricsAuth(settings);
    if (oauth && !scrapeAuth) {
      // /mcp takes OAuth access tokens, which are not scrape credentials: without a metrics
      // token /metrics would be the one open path of a server that requires authentication.
      fields["refused"] = "auth";
      return metricsNeedToken(settings.name);
    }
    const res = await metricsResponse(req, registry, scrapeAuth, settings.name);
    if (res.status === 401) {
      fields["refused"] = "auth";
      reqLogger.warn("unauthorized request", { path, client_ip: fields["client_ip"] });
    }
    return res;
  }

  /**
   * Who calls: the OAuth principal (its id is then the client key) or the bearer token's holder;
   * a request without valid credentials is answered 401 or 403 with the challenge.
   */
  async function authenticate(
    req: Request,
    url: URL,
    at: { path: string; client: string; reqLogger: Logger; fields: Record<string, unknown> },
  ): Promise<Caller | Response> {
    const { path, client, reqLogger, fields } = at;
    const caller: Caller = { clientKey: client };
    if (oauth) {
      const legacy = isLegacyPath(path);
      const verdict = await oauth.verify(req.headers.get("authorization"), accepted(publicBase(url), legacy));
      if (!verdict.ok) {
        fields["refused"] = "auth";
        reqLogger.warn("unauthorized request", {
          path,
          client_ip: fields["client_ip"],
          reason: verdict.error ?? "missing",
          detail: verdict.description,
        });
        return jsonRpcError(
          verdict.status,
          SERVER_ERROR,
          `${verdict.status === 401 ? "Unauthorized" : "Forbidden"}: ${verdict.description}`,
          {
            headers: {
              "WWW-Authenticate": (await import("./oauth_claims.ts")).challenge(
                verdict,
                `${publicBase(url)}${PRM_PATH}${legacy ? "/sse" : "/mcp"}`,
                settings.oauth_scopes,
              ),
            },
          },
        );
      }
      caller.principal = verdict.principal;
      caller.clientKey = clientKey("", { principal: verdict.principal.id });
      // Who it was, without naming them: the hash their files are kept under.
      fields["user"] = ownerHash(verdict.principal.id);
      if (verdict.principal.clientId) fields["oauth_client"] = verdict.principal.clientId;
    }
    if (auth) {
      const verdict = await auth.check(req.headers.get("authorization"));
      if (verdict !== "ok") {
        fields["refused"] = "auth";
        reqLogger.warn("unauthorized request", { path, client_ip: fields["client_ip"], reason: verdict });
        return jsonRpcError(
          401,
          SERVER_ERROR,
          verdict === "missing"
            ? "Unauthorized: send the header Authorization: Bearer <token>"
            : "Unauthorized: the bearer token is not valid",
          {
            headers: {
              "WWW-Authenticate": verdict === "missing"
                ? `Bearer realm="${settings.name}"`
                : `Bearer realm="${settings.name}", error="invalid_token"`,
            },
          },
        );
      }
    }
    return caller;
  }

  /**
   * Which toolsets this request's server lists: the path, else the header (or, for legacy SSE,
   * the query), else the configured default; unknown toolsets are refused.
   */
  function requestToolsets(
    req: Request,
    url: URL,
    at: { path: string; pathToolsets: string | undefined; fields: Record<string, unknown> },
  ): ReadonlySet<string> | Response {
    const { path, pathToolsets, fields } = at;
    const asked = pathToolsets ?? req.headers.get("x-mcp-toolsets") ??
      (path === "/sse" ? url.searchParams.get("toolsets") : null);
    let toolsets = app.defaultToolsets;
    if (asked !== null && asked.trim() !== "") {
      try {
        toolsets = app.catalog.resolve(parseToolsetList(asked));
      } catch (e) {
        if (!(e instanceof UnknownToolsetError)) throw e;
        fields["refused"] = "toolsets";
        return jsonRpcError(400, INVALID_PARAMS, `Invalid toolsets: ${e.message}`);
      }
    }
    return toolsets;
  }

  /** Reads a POST body within `body_timeout`, so a client that trickles it cannot pin memory. */
  async function readBody(req: Request, conn: ConnectionInfo | undefined): Promise<ReadResult> {
    const deadline = new AbortController();
    const stop = every(bodyTimeoutMs, () => deadline.abort());
    try {
      return await readJsonRpc(req, settings.max_body_bytes, {
        deadline: deadline.signal,
        deadlineS: bodyTimeoutMs / 1000,
        wholeBody: conn?.guarded === true,
      });
    } finally {
      stop();
    }
  }

  // --- Streamable HTTP ---------------------------------------------------------------------

  async function mcp(
    req: Request,
    forwarded: Request,
    reqLogger: Logger,
    caller: Caller,
    toolsets: ReadonlySet<string>,
    conn: ConnectionInfo | undefined,
  ): Promise<Response> {
    const batchErrors: JsonRpcErrorMessage[] = [];
    const res = await mcpRouted(req, forwarded, reqLogger, caller, toolsets, conn, batchErrors);
    return withBatchErrors(res, batchErrors);
  }

  async function mcpRouted(
    req: Request,
    forwarded: Request,
    reqLogger: Logger,
    caller: Caller,
    toolsets: ReadonlySet<string>,
    conn: ConnectionInfo | undefined,
    batchErrors: JsonRpcErrorMessage[],
  ): Promise<Response> {
    const allowed = settings.stateless ? ["POST"] : ["POST", "GET", "DELETE"];
    let body: unknown;
    let messages: JSONRPCMessage[] = [];
    if (req.method === "POST") {
      if (!isJson(req.headers.get("content-type"))) {
        return jsonRpcError(
          415,
          SERVER_ERROR,
          "Unsupported Media Type: Content-Type must be application/json",
        );
      }
      const read = await readBody(req, conn);
      if (!read.ok) return read.response;
      body = read.body;
      messages = read.messages;
      batchErrors.push(...read.errors);
    }
    // The era of the request: 2026-07-28 requests carry their protocol version in `_meta` (and
    // in headers), 2025-era ones do not. Malformed modern claims go to the modern path too, which
    // owns their error answers.
    const versionHeader = req.headers.get("mcp-protocol-version");
    const methodHeader = req.headers.get("mcp-method");
    const era = classifyInboundRequest({
      httpMethod: req.method,
      ...(versionHeader === null ? {} : { protocolVersionHeader: versionHeader }),
      ...(methodHeader === null ? {} : { mcpMethodHeader: methodHeader }),
      body,
    });
    if (era.kind !== "legacy") {
      if (closing && messages.some(isJSONRPCRequest)) return shuttingDown();
      return await modernRequest(forwarded, body, caller.clientKey, conn?.completed);
    }
    const bad = methodIs(req, allowed);
    if (bad) {
      if (settings.stateless) {
        return jsonRpcError(
          405,
          SERVER_ERROR,
          "Method not allowed: this server is stateless (no sessions, no standalone stream); send every request as POST /mcp",
          { headers: { "Allow": "POST, OPTIONS" } },
        );
      }
      return bad;
    }
    if (closing && messages.some(isJSONRPCRequest)) return shuttingDown();
    if (settings.stateless) {
      return await stateless(forwarded, body, toolsets, ownerOf(caller), caller.clientKey, conn?.completed);
    }

    const sessionId = req.headers.get("mcp-session-id");
    if (sessionId) {
      // Hook: a session opened on another replica (or before this one restarted).
      const session = store.get(sessionId) ??
        await restorer?.restore(sessionId, forwarded.url, reqLogger, caller);
      if (session instanceof Response) return session;
      // A session is its user's: another user's token does not reach it (nor learns it exists).
      if (!session || session.kind !== "streamable" || session.principal !== caller.principal?.id) {
        return jsonRpcError(
          404,
          SESSION_NOT_FOUND,
          "Session not found: it expired or was closed; send initialize without an Mcp-Session-Id header to start a new one",
        );
      }
      const streamable = session as StreamableSession;
      const again = messages.find((m) => isJSONRPCRequest(m) && m.method === "initialize");
      if (again && "id" in again) {
        // The SDK refuses it with `id: null`; the answer belongs to the request that asked.
        return jsonRpcError(
          400,
          INVALID_REQUEST,
          "Invalid Request: this session is already initialized; keep using it, or send initialize " +
            "without an Mcp-Session-Id header to start a new one",
          { id: again.id as string | number },
        );
      }
      if (req.method !== "DELETE") {
        return await inSession(streamable, req.method, forwarded, body, messages, conn?.completed);
      }
      streamable.closedBy = reqLogger;
      try {
        const res = await inSession(streamable, req.method, forwarded, body, messages, conn?.completed);
        if (res.ok) await shared?.remove(sessionId); // Hook: a DELETE ends it on every replica.
        return res;
      } finally {
        // A DELETE the SDK refused leaves the session open: a later close is not this request's.
        delete streamable.closedBy;
      }
    }
    if (req.method !== "POST" || !messages.some(isInitializeRequest)) {
      const init = messages.find((m) => isJSONRPCRequest(m) && m.method === "initialize");
      if (init && "id" in init) {
        // It is an initialize, only a malformed one: say so instead of asking for one.
        return jsonRpcError(
          400,
          INVALID_PARAMS,
          'Invalid params for "initialize": it needs "protocolVersion" (a string), "capabilities" (an object) ' +
            'and "clientInfo" (with "name" and "version")',
          { id: init.id as string | number },
        );
      }
      return jsonRpcError(
        400,
        SERVER_ERROR,
        "Bad Request: no Mcp-Session-Id header; start a session with an initialize request first " +
          "(or send 2026-07-28 requests, which need no session)",
      );
    }
    return await newSession(forwarded, body, messages, reqLogger, caller, toolsets, conn?.completed);
  }

  /** A 2026-07-28 request: one stateless exchange, served by the SDK's per-request entry. */
  async function modernRequest(
    forwarded: Request,
    body: unknown,
    client: string,
    completed: Promise<void> | undefined,
  ): Promise<Response> {
    const listen = listenRequestId(body);
    if (listen !== undefined) return await listenStream(forwarded, body, client, listen, completed);
    return await modernRequestUncapped(forwarded, body, completed);
  }

  async function modernRequestUncapped(
    forwarded: Request,
    body: unknown,
    completed: Promise<void> | undefined,
  ): Promise<Response> {
    const request = new Request(forwarded.url, {
      method: forwarded.method,
      headers: forwarded.headers,
      ...(forwarded.method === "POST" ? { body: JSON.stringify(body) } : {}),
    });
    modernOpen++;
    let res: Response;
    try {
      res = await modern.fetch(request, { parsedBody: body });
    } catch (e) {
      modernOpen--;
      notifyDrain();
      throw e;
    }
    return whenSent(res, () => {
      modernOpen--;
      notifyDrain();
    }, completed);
  }

  /**
   * A `subscriptions/listen` request: a stream held open until the client goes, so capped per
   * client and in all (max_listen_streams_per_client, max_listen_streams); a refusal is a
   * JSON-RPC error that says which cap and what to do.
   */
  async function listenStream(
    forwarded: Request,
    body: unknown,
    client: string,
    id: RequestId,
    completed: Promise<void> | undefined,
  ): Promise<Response> {
    const mine = listenOpen.get(client) ?? 0;
    if (mine >= settings.max_listen_streams_per_client) {
      served?.shareRefusals.inc(1, "listen_streams_per_client");
      return jsonRpcError(
        429,
        SERVER_ERROR,
        `Too many subscriptions/listen streams from your client: it holds ${mine}, the most one client may ` +
          `(MCP_MAX_LISTEN_STREAMS_PER_CLIENT). One stream can carry every notification type: close the ` +
          `ones you no longer read, then retry`,
        { id, headers: { "Retry-After": "10" } },
      );
    }
    if (listenTotal >= settings.max_listen_streams) {
      served?.shareRefusals.inc(1, "listen_streams");
      return jsonRpcError(
        503,
        SERVER_ERROR,
        `The server holds its most subscriptions/listen streams (${settings.max_listen_streams}, ` +
          `MCP_MAX_LISTEN_STREAMS): retry after the Retry-After delay, or use another instance`,
        { id, headers: { "Retry-After": "30" } },
      );
    }
    listenOpen.set(client, mine + 1);
    listenTotal++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      listenTotal--;
      const left = (listenOpen.get(client) ?? 1) - 1;
      if (left > 0) listenOpen.set(client, left);
      else listenOpen.delete(client);
    };
    try {
      const res = await modernRequestUncapped(forwarded, body, completed);
      return whenSent(res, release, completed);
    } catch (e) {
      release();
      throw e;
    }
  }

  async function inSession(
    session: StreamableSession,
    method: string,
    forwarded: Request,
    body: unknown,
    messages: JSONRPCMessage[],
    completed: Promise<void> | undefined,
  ): Promise<Response> {
    // Only messages count as activity: every SDK client holds a GET stream, quiet or not.
    if (method !== "POST") {
      const res = await session.transport.handleRequest(forwarded);
      return shared ? holdingStream(session, method, res, (f) => whenSent(res, f, completed)) : res;
    }
    session.lastActive = clock.now();
    if (shared && postedShared(shared, session, messages)) return new Response(null, { status: 202 }); // Hook
    const ids = messages.filter(isJSONRPCRequest).map((m) => m.id);
    // Two requests in flight with one id would have their answers crossed, and one would never
    // be answered: refuse the newcomer at once.
    const reused = ids.find((id, i) => session.calls.has(id) || ids.indexOf(id) !== i);
    if (reused !== undefined) {
      return jsonRpcError(
        400,
        INVALID_REQUEST,
        `Invalid Request: request id ${JSON.stringify(reused)} is already in use by a request still being ` +
          "answered in this session; use a new id for each request",
        { id: reused },
      );
    }
    const post: PostCalls = { waiting: new Set(ids), cancelled: false };
    for (const id of ids) session.calls.set(id, post);
    const forget = (): void => {
      for (const id of ids) if (session.calls.get(id) === post) session.calls.delete(id);
    };
    session.inflight++;
    let res: Response;
    try {
      res = await session.transport.handleRequest(forwarded, { parsedBody: body });
    } catch (e) {
      forget();
      session.inflight--;
      notifyDrain();
      throw e;
    }
    for (const message of messages) {
      const cancelled = cancelledRequestId(message);
      if (cancelled !== undefined) settle(session, cancelled, true);
    }
    return whenSent(res, () => {
      forget();
      session.inflight--;
      session.lastActive = clock.now();
      notifyDrain();
    }, completed);
  }

  async function newSession(
    forwarded: Request,
    body: unknown,
    messages: JSONRPCMessage[],
    reqLogger: Logger,
    caller: Caller,
    toolsets: ReadonlySet<string>,
    completed: Promise<void> | undefined,
    restoring?: SessionRecord,
  ): Promise<Response> {
    const client = caller.clientKey;
    const refused = store.reserve(client);
    if (refused) return tooManySessions(settings, messages, refused);
    // The id is chosen before the server exists, so the server knows whose work it does.
    const id = restoring?.id ?? crypto.randomUUID();
    const session: StreamableSession = {
      id: "",
      kind: "streamable",
      owner: client,
      ...(caller.principal ? { principal: caller.principal.id } : {}),
      lastActive: clock.now(),
      inflight: 0,
      calls: new Map(),
      outgoing: new Set(),
      standalone: false,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: (sid) => {
          session.id = sid;
          store.add(session, restoring !== undefined);
          // Hook: the session's record goes to the shared store.
          void shared?.put(restoring ?? recordOf(sid, messages, { ...session, toolsets }));
          const opened = restoring ? "session restored from the shared store" : "session opened";
          reqLogger.info(opened, { session_id: sid, transport: "streamable-http" });
        },
        keepAliveMs,
      }),
      busy: () => session.inflight > 0,
      close: () => server.close(),
    };
    // The session lists the toolsets its initialize asked for, for its whole life.
    // An OAuth user owns their work across sessions and replicas; otherwise the session does.
    const server = app.newServer({ owner: sessionOwner(caller, id), toolsets, client: caller.clientKey });
    session.transport.onclose = () => {
      if (!session.id) return;
      store.delete(session.id);
      shared?.forget(session.id);
      (session.closedBy ?? logger).info("session closed", {
        session_id: session.id,
        transport: "streamable-http",
      });
    };
    session.transport.onerror = (e) =>
      logger.debug("transport error", { session_id: session.id, error: e.message });
    const send = session.transport.send.bind(session.transport);
    session.transport.send = async (message, options) => {
      if (shared && sentElsewhere(shared, session, message, options?.relatedRequestId)) return;
      await send(message, options);
      if (("result" in message || "error" in message) && message.id !== undefined && message.id !== null) {
        settle(session, message.id, false);
      }
    };
    try {
      await server.connect(session.transport);
      const res = await inSession(session, "POST", forwarded, body, messages, completed);
      if (!session.id) {
        // The initialize request was refused (e.g. a wrong Accept header): nothing to keep.
        store.release(client);
        await server.close().catch(() => {});
      }
      return res;
    } catch (e) {
      if (!session.id) store.release(client);
      await server.close().catch(() => {});
      throw e;
    }
  }

  /** A 2025-era request in stateless mode: a fresh server and transport for this request only. */
  async function stateless(
    forwarded: Request,
    body: unknown,
    toolsets: ReadonlySet<string>,
    owner: string,
    client: string,
    completed: Promise<void> | undefined,
  ): Promise<Response> {
    const server = app.newServer({ owner, toolsets, client });
    // No session id generator: the SDK's stateless mode, one transport per request.
    const transport = new WebStandardStreamableHTTPServerTransport({ keepAliveMs });
    transport.onerror = (e) => logger.debug("transport error", { error: e.message });
    await server.connect(transport);
    statelessOpen.add(server);
    const done = (): void => {
      if (!statelessOpen.delete(server)) return;
      void server.close().catch(() => {});
      notifyDrain();
    };
    let res: Response;
    try {
      res = await transport.handleRequest(forwarded, { parsedBody: body });
    } catch (e) {
      done();
      throw e;
    }
    return whenSent(res, done, completed);
  }

  // --- Legacy SSE ----------------------------------------------------------------------------

  function sseUnavailable(): Response | undefined {
    if (!settings.stateless) return undefined;
    return jsonRpcError(
      404,
      SERVER_ERROR,
      "Legacy SSE is off in stateless mode (it keeps each session in memory): use POST /mcp, or run without --stateless",
    );
  }

  async function openSse(
    url: URL,
    reqLogger: Logger,
    caller: Caller,
    toolsets: ReadonlySet<string>,
  ): Promise<Response> {
    const off = sseUnavailable();
    if (off) return off;
    const { LegacySseTransport } = await import("./_legacy_sse.ts");
    const refused = store.reserve(caller.clientKey);
    if (refused) return tooManySessions(settings, [], refused);
    const id = crypto.randomUUID();
    const transport = new LegacySseTransport(id, {
      endpoint: `/message?session_id=${id}`,
      every,
      keepAliveMs,
      maxBacklogBytes: MAX_SSE_BACKLOG_BYTES,
      onSlowClient: () =>
        logger.warn("dropping a legacy SSE session whose client stopped reading", { session_id: id }),
    });
    const server = app.newServer({ owner: sessionOwner(caller, id), toolsets, client: caller.clientKey });
    const session: SseSession = {
      id,
      kind: "sse",
      lastActive: clock.now(),
      owner: caller.clientKey,
      ...(caller.principal ? { principal: caller.principal.id } : {}),
      transport,
      busy: () => transport.pending > 0,
      close: () => server.close(),
    };
    transport.onclose = () => {
      store.delete(id);
      logger.info("session closed", { session_id: id, transport: "sse" });
    };
    transport.onerror = (e) => logger.debug("transport error", { session_id: id, error: e.message });
    store.add(session);
    try {
      await server.connect(transport);
    } catch (e) {
      store.delete(id);
      throw e;
    }
    reqLogger.info("session opened", { session_id: id, transport: "sse", endpoint: url.pathname });
    return new Response(transport.stream, { headers: { ...SSE_HEADERS } });
  }

  async function sseMessage(
    req: Request,
    forwarded: Request,
    url: URL,
    conn: ConnectionInfo | undefined,
    caller: Caller,
  ): Promise<Response> {
    const off = sseUnavailable();
    if (off) return off;
    const id = url.searchParams.get("session_id") ?? url.searchParams.get("sessionId");
    if (!id) {
      return jsonRpcError(
        400,
        SERVER_ERROR,
        "Bad Request: missing the session_id query parameter; use the endpoint sent by GET /sse",
      );
    }
    const session = store.get(id);
    if (!session || session.kind !== "sse" || session.principal !== caller.principal?.id) {
      return jsonRpcError(
        404,
        SESSION_NOT_FOUND,
        "Session not found: it expired or its stream closed; open a new one with GET /sse",
      );
    }
    if (!isJson(req.headers.get("content-type"))) {
      return jsonRpcError(415, SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json");
    }
    const read = await readBody(req, conn);
    if (!read.ok) return read.response;
    if (closing && read.messages.some(isJSONRPCRequest)) return shuttingDown();
    session.lastActive = clock.now();
    const transport = (session as SseSession).transport;
    for (const message of read.messages) transport.receive(message, { request: forwarded });
    // A batch's invalid elements are answered on the stream, like its valid ones.
    for (const error of read.errors) void transport.send(error as unknown as JSONRPCMessage);
    return new Response("Accepted", { status: 202, headers: { "Content-Type": "text/plain" } });
  }

  // --- Pages -----------------------------------------------------------------------------------

  async function healthPage(req: Request): Promise<Response> {
    const body = {
      status: "ok",
      name: settings.name,
      version: settings.version,
      uptime_s: Math.round((clock.now() - startedAt) / 1000),
      stateless: settings.stateless,
      auth: authMode,
      writes: settings.writes,
      providers: app.providers.map((p) => p.id),
      sessions: { ...store.counts(), max: store.max },
      // The circuit breakers that hold state: endpoints whose recent calls failed, by
      // "provider host/path-family" (an endpoint that answers well is not listed).
      upstreams: await app.http.breakers(),
      // With REDIS_URL: whether the shared store answers now (when not, this replica serves
      // from local fallbacks), and this replica's name in job leases.
      ...(app.shared
        ? {
          shared_state: { store: "redis", reachable: app.shared.connection.up, replica: app.shared.replica },
        }
        : {}),
    };
    return req.method === "HEAD" ? new Response(null, { status: 200 }) : Response.json(body);
  }

  function rootPage(): Response {
    return Response.json({
      name: settings.name,
      version: settings.version,
      description: "MCP server giving AI agents bounded access to public open data",
      providers: app.providers.map((p) => ({ id: p.id, tools: p.tools.length })),
      tool_count: app.tools.length,
      transport: settings.stateless ? "streamable-http (stateless)" : "streamable-http + legacy sse",
      auth: authMode,
      writes: settings.writes,
      ...(oauth
        ? {
          oauth: {
            issuer: oauth.issuer,
            resource_metadata: `${PRM_PATH}/mcp`,
            ...(settings.oauth_scopes.length ? { scopes: settings.oauth_scopes } : {}),
          },
        }
        : {}),
      endpoints: {
        mcp: "/mcp",
        ...(settings.stateless ? {} : { sse: "/sse", message: "/message?session_id=<id>" }),
        health: "/health",
        ...(served ? { metrics: "/metrics" } : {}),
      },
      docs: `${CONTACT_URL}/blob/main/docs/MCP.md`,
    });
  }

  function shuttingDown(): Response {
    return jsonRpcError(
      503,
      SERVER_ERROR,
      "The server is shutting down: retry on another instance or after restart",
      {
        headers: { "Connection": "close", "Retry-After": "5" },
      },
    );
  }

  /**
   * The server's public base URL: `public_url` behind a proxy, else the URL the request reached
   * (with OAuth off loopback, `public_url` is required: see oauthOf).
   */
  function publicBase(url: URL): string {
    if (settings.public_url) return settings.public_url.replace(/\/+$/, "");
    // On loopback the Host names the host, but the port is this server's own: otherwise a token
    // another local server of the same issuer received would pass here with its port in Host.
    if (settings.http_port === 0) return url.origin;
    const own = new URL(url.origin);
    own.port = String(settings.http_port);
    return own.origin;
  }

  /** The protected resource (RFC 8707/9728) a request is for: the server's `/mcp` URL. */
  /** The protected resource a path belongs to: `/mcp` (Streamable HTTP) or `/sse` (legacy SSE). */
  function resourceOf(url: URL, endpoint: "/mcp" | "/sse" = "/mcp"): string {
    return `${publicBase(url)}${endpoint}`;
  }

  const handler = handle as HttpHandler;
  handler.ready = async () => {
    if (oauth) await oauth.discover();
  };
  handler.sweep = () => store.sweep();
  handler.sessions = () => store.counts();
  handler.close = async (graceMs = 10_000) => {
    if (closing) return;
    closing = true;
    stopSweep();
    if (!drained()) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((resolve) => drainWaiters.add(resolve)),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (!drained()) {
        logger.warn("closing with calls still in flight after the grace period", { grace_ms: graceMs });
      }
    }
    await store.closeAll();
    await modern.close().catch(() => {});
    const stragglers = [...statelessOpen];
    statelessOpen.clear();
    await Promise.all(stragglers.map((server) => server.close().catch(() => {})));
  };
  return handler;
}
