// The HTTP handler's two kinds of state, typed: what lives as long as the handler (HttpState:
// settings, sessions, limits, OAuth, shutdown bookkeeping), made once by createState(), and what
// one request carries through the middleware and routes (RequestContext), passed explicitly.
import type { ServedApp } from "../served_app.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import type { ServerSettings } from "../../config/server_settings.ts";
import type { McpServer } from "../sdk.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { metrics } from "../../metrics/mod.ts";
import { IpRateLimiter } from "./_rate_limit.ts";
import { BearerAuth } from "./_security.ts";
import type { AccessPolicy } from "./_security.ts";
import { SessionStore } from "./_sessions.ts";
import type { Session } from "./_sessions.ts";
import type { ClientLimiter } from "../served_app.ts";
import { givenOAuth, oauthOf } from "./_requests.ts";
import type { ConnectionInfo, HeaderSplit, LazyOAuth } from "./_requests.ts";
import type { OAuthResourceServer, Principal } from "./oauth.ts";
import { AccessLog } from "./_access_log.ts";
import { finishResponse } from "./_streams.ts";
import { DeadlineWheel, keptEvery } from "../../deadline_wheel.ts";
import type { ExchangeScope } from "../../http/request_scope.ts";
import type { SharedSessionStore } from "./shared_sessions.ts";

/** Rebuilds a shared session on this replica: the session, a refusal to answer, or none. */
export interface SessionResumer {
  restore(
    id: string,
    url: string,
    reqLogger: Logger,
    asker: Caller & { requestId: string; ip: string },
  ): Promise<Session | Response | undefined>;
  /** The rebuild of session `id` under way on this replica, if any. */
  rebuilding(id: string): Promise<unknown> | undefined;
}

/** Options for `createHttpHandler`. */
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

/**
 * One request as the middleware and routes see it; each step fills in what it learns. It is also
 * the request's {@linkcode ExchangeScope}: the code that runs on its behalf reads whose work it is
 * from it, and a tool call leaves its outcome on the access line.
 */
export class RequestContext implements ExchangeScope {
  readonly req: Request;
  readonly url: URL;
  /** The path, trailing slashes dropped; `/mcp/<toolsets>` is `/mcp` once the toolsets are read. */
  path: string;
  readonly requestId: string;
  readonly conn: ConnectionInfo | undefined;
  /** When the request arrived (performance.now()). */
  readonly started: number;
  /** Who calls; the client address's key until authenticated. */
  caller: Caller;
  /** The toolsets its server lists, once checked. */
  toolsets: ReadonlySet<string>;
  /** Whose work its calls do where there is no session. */
  owner: string;
  /** A POST's body as parsed (never serialised again) and its JSON-RPC messages. */
  body: unknown = undefined;
  messages: JSONRPCMessage[] = [];
  /** The fields of the request's access line (method, path, refusals, user, tool call …). */
  readonly fields: Record<string, unknown>;
  /** Whether the access line has been written (a later tool call writes its own). */
  logged = false;
  /** The request's headers as they go on past the handler (filled in by the admission step). */
  readonly headers: HeaderSplit = { kept: [], drops: false };
  /** Responses of this request still being sent (see {@linkcode whenSent}). */
  #sending = 0;
  /** Called once nothing is being sent any more (the access line, when it waited). */
  #onSent: (() => void) | undefined;
  #logger: Logger | undefined;
  #parent: Logger;

  constructor(
    at: { req: Request; url: URL; path: string; requestId: string; ip: string; client: string },
    conn: ConnectionInfo | undefined,
    started: number,
    state: HttpState,
  ) {
    this.req = at.req;
    this.url = at.url;
    this.path = at.path;
    this.requestId = at.requestId;
    this.conn = conn;
    this.started = started;
    this.caller = { clientKey: at.client };
    this.toolsets = state.app.defaultToolsets;
    this.owner = state.sharedOwner;
    this.fields = { request_id: at.requestId, method: at.req.method, path: at.path, client_ip: at.ip };
    this.#parent = state.logger;
  }

  /** {@linkcode ExchangeScope.client} */
  get client(): string {
    return this.caller.clientKey;
  }

  /** The logger of this request's other lines (made on first use: most requests have none). */
  log(): Logger {
    return this.#logger ??= this.#parent.child({ request_id: this.requestId });
  }

  /**
   * `res`, with `onDone` called once it has been sent, has failed, or the client went away. Where
   * the HTTP server says when a response is done (`completed`) the response goes on as it is;
   * otherwise its body is followed to its end ({@linkcode finishResponse}).
   */
  whenSent(res: Response, onDone: () => void): Response {
    this.#sending++;
    const done = (): void => {
      onDone();
      if (--this.#sending === 0 && this.#onSent) this.#onSent();
    };
    const completed = this.conn?.completed;
    if (!completed) return finishResponse(res, {}, done);
    completed.then(done, done);
    return res;
  }

  /** Runs `fn` once every response of this request has been sent: now, or when the last one is. */
  afterSent(fn: () => void): void {
    if (this.#sending === 0) fn();
    else this.#onSent = fn;
  }

  /** {@linkcode ExchangeScope.noteCall} */
  noteCall(fields: Record<string, unknown>): boolean {
    if (this.logged || "tool_name" in this.fields) return false;
    Object.assign(this.fields, fields);
    return true;
  }
}

/** Everything the handler keeps for as long as it lives, made once by {@linkcode createState}. */
export interface HttpState {
  app: ServedApp;
  settings: ServerSettings;
  logger: Logger;
  clock: Clock;
  every: (ms: number, fn: () => void) => () => void;
  startedAt: number;
  keepAliveMs: number;
  bodyTimeoutMs: number;
  /**
   * Starts a POST body's deadline (`body_timeout`); the returned function cancels it. On one
   * shared timer, or on `every` when the handler was given one (tests drive it).
   */
  bodyDeadline: (fn: () => void) => () => void;
  /** The shared timer of the body deadlines, stopped when the handler closes. */
  bodyDeadlines: DeadlineWheel | undefined;
  store: SessionStore;
  /** With Redis, the 2025-11-25 sessions every replica serves (shared_sessions.ts). */
  shared: SharedSessionStore | undefined;
  /** With Redis, rebuilds here a session another replica opened (set by the handler). */
  resumer?: SessionResumer | undefined;
  limiter: IpRateLimiter | ClientLimiter | null;
  auth: BearerAuth | null;
  oauth: LazyOAuth | null;
  served: typeof metrics;
  policy: AccessPolicy;
  authMode: "oauth" | "token" | "none";
  access: AccessLog;
  /** Who calls where there is no session and no one is named: the bearer token's holder or everyone. */
  sharedOwner: string;
  /** Servers of stateless 2025-era requests still answering. */
  statelessOpen: Set<McpServer>;
  /** 2026-07-28 exchanges still answering. */
  modernOpen: number;
  /** Open `subscriptions/listen` streams, by client and in all. */
  listenOpen: Map<string, number>;
  listenTotal: number;
  closing: boolean;
  /** Resolvers of a shutdown waiting for the calls in flight. */
  drainWaiters: Set<() => void>;
}

/** The handler's state for `app`'s settings. */
export function createState(app: ServedApp, options: HttpHandlerOptions): HttpState {
  const settings = app.config.server;
  const clock = options.clock ?? app.http.clock;
  const idleMs = settings.session_idle_timeout * 1000;
  const store = new SessionStore(settings.max_sessions, idleMs, clock, options.logger, {
    maxPerClient: settings.max_sessions_per_client,
    reclaimIdleMs: settings.session_reclaim_idle * 1000,
    graceMs: settings.session_reclaim_grace * 1000,
    initTimeoutMs: settings.session_init_timeout * 1000,
  });
  const localLimiter = settings.rate_limit_enabled
    ? new IpRateLimiter(settings.rate_limit_per_minute, clock)
    : null;
  const auth = settings.auth_token ? new BearerAuth(settings.auth_token) : null;
  const oauth = options.oauth ? givenOAuth(options.oauth) : oauthOf(app, clock, options.isNetAllowed);
  if (metrics) metrics.http.sessions = () => store.counts();
  const bodyTimeoutMs = Math.round(settings.body_timeout * 1000);
  const every = options.every;
  const bodyDeadlines = every ? undefined : new DeadlineWheel(bodyTimeoutMs);
  return {
    app,
    settings,
    logger: options.logger,
    clock,
    every: options.every ?? keptEvery,
    startedAt: clock.now(),
    keepAliveMs: Math.max(1, Math.round(settings.keepalive_interval * 1000)),
    bodyTimeoutMs,
    bodyDeadline: bodyDeadlines ? (fn) => bodyDeadlines.after(fn) : (fn) => every!(bodyTimeoutMs, fn),
    bodyDeadlines,
    store,
    shared: settings.stateless ? undefined : app.shared?.sessions,
    // With Redis the per-IP budget holds across replicas; this replica's buckets stand in meanwhile.
    limiter: localLimiter && app.shared
      ? app.shared.clientLimiter(settings.rate_limit_per_minute, localLimiter)
      : localLimiter,
    auth,
    oauth,
    served: metrics,
    policy: {
      bindHost: settings.http_host,
      allowedHosts: settings.allowed_hosts,
      allowedOrigins: settings.allowed_origins,
      corsOrigins: settings.cors_origins,
    },
    authMode: oauth ? "oauth" : auth ? "token" : "none",
    access: new AccessLog(options.logger, settings.access_log, settings.access_log_sample),
    sharedOwner: auth ? "auth:bearer" : "anonymous",
    statelessOpen: new Set(),
    modernOpen: 0,
    listenOpen: new Map(),
    listenTotal: 0,
    closing: false,
    drainWaiters: new Set(),
  };
}

/**
 * The owner of a request's work where there is no session: the OAuth user; else the bearer
 * token's holder or everyone alike, except with `writes: bounded`, where each client address
 * owns its own (bounded) work.
 */
export function ownerOf(state: HttpState, caller: Caller): string {
  return caller.principal?.id ??
    (state.settings.writes === "bounded" && !state.auth ? `client:${caller.clientKey}` : state.sharedOwner);
}

/**
 * The owner of a session's work: the OAuth user, across their sessions; with `writes: bounded`
 * and no authentication the client address, so that opening more sessions does not buy a client
 * more room; otherwise the session itself.
 */
export function sessionOwner(state: HttpState, caller: Caller, id: string): string {
  return caller.principal?.id ??
    (state.settings.writes === "bounded" && !state.auth ? `client:${caller.clientKey}` : `session:${id}`);
}

/** Whether nothing is being answered: no stateless or 2026-07-28 exchange, no busy session. */
export function drained(state: HttpState): boolean {
  return state.statelessOpen.size === 0 && state.modernOpen === 0 && !state.store.busy();
}

/** Wakes a shutdown waiting for the calls in flight, once there are none. */
export function notifyDrain(state: HttpState): void {
  // Only a shutdown waits to drain: checking every session after every request would make each
  // request's cost grow with the number of sessions.
  if (state.drainWaiters.size === 0 || !drained(state)) return;
  for (const resolve of state.drainWaiters) resolve();
  state.drainWaiters.clear();
}
