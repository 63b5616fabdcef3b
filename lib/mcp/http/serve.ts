import type { ServedApp } from "../served_app.ts";
import { ConfigError } from "../../errors.ts";
import { metrics } from "../../metrics/mod.ts";
import type { Logger } from "../../log.ts";
import { clientKey } from "./_client_key.ts";
import { directAnswer, directServer } from "./_conn_direct.ts";
import type { HandOff } from "./_conn_direct.ts";
import { ConnectionGuard, isFdExhaustion } from "./_conn_guard.ts";
import type { GuardStats } from "./_conn_guard.ts";
import { refusalBody, refusalHeaders } from "./_conn_io.ts";
import { createHttpHandler } from "./handler.ts";
import type { ConnectionInfo, HttpHandler } from "./handler.ts";

/** Options for {@linkcode serveHttp}. */
export interface ServeHttpOptions {
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM: stop accepting, finish in-flight calls, close streams. */
  shutdown: AbortSignal;
  /** Whether the process may listen on / connect to `host:port`. */
  isNetAllowed: (host: string) => boolean;
  /** How long shutdown waits for calls in flight before closing streams. Default: `shutdown_grace`. */
  graceMs?: number;
  /**
   * How long shutdown then waits for closed streams to reach clients that stopped reading
   * before it returns anyway. Default 2 s.
   */
  drainMs?: number;
}

/** `host:port` as `--allow-net` spells it (IPv6 addresses in brackets). */
export function listenAddress(host: string, port: number): string {
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `${h}:${port}`;
}

/**
 * Serves MCP over HTTP on `server.http_host:server.http_port` until shutdown is signalled,
 * then stops gracefully. The listen address must be inside `--allow-net`. Connections are
 * accepted by a {@linkcode ConnectionGuard} (connection caps, head and idle deadlines, the
 * health reserve, survival of file-descriptor exhaustion), which hands each one to Deno's HTTP
 * server (`server.connection_guard: direct`), or copies its bytes to `Deno.serve` on a private
 * loopback port that answers only connections the guard opened (`proxy`).
 */
export async function serveHttp(app: ServedApp, options: ServeHttpOptions): Promise<void> {
  const settings = app.config.server;
  const { http_host: host, http_port: port } = settings;
  const address = listenAddress(host, port);
  if (!options.isNetAllowed(address)) {
    throw new ConfigError(
      "server.http_port",
      `Not allowed to listen on "${address}": this process's --allow-net does not include it. ` +
        `deno task start allows loopback and wildcard addresses on any port; to listen elsewhere, add the ` +
        `host to permissions.default.net in deno.json (a command-line --allow-net replaces that whole list), ` +
        `or choose an allowed address with --host and --port`,
    );
  }
  if (settings.idle_timeout <= settings.keepalive_interval) {
    // A stream's keep-alive comments are what tells the guard a quiet stream is alive.
    throw new ConfigError(
      "server.idle_timeout",
      `Cannot use "idle_timeout" ${settings.idle_timeout} s: it must be longer than "keepalive_interval" ` +
        `(${settings.keepalive_interval} s), or open streams would be closed as idle`,
    );
  }
  const { logger } = options;
  const handler = createHttpHandler(app, { logger, isNetAllowed: options.isNetAllowed });
  // With OAuth, the authorization server's metadata is read before listening: a wrong issuer
  // or a host outside --allow-net stops the start with the fix, not the first client's call.
  try {
    await handler.ready();
  } catch (e) {
    await handler.close(0);
    throw e;
  }
  let listener: Deno.TcpListener;
  try {
    listener = Deno.listen({ hostname: host, port });
  } catch (e) {
    await handler.close(0);
    throw listenError(e, address);
  }
  const addr = listener.addr;
  const publicHost = listenAddress(addr.hostname, addr.port);
  const onError = (e: unknown): Response => {
    logger.error("unhandled error in the HTTP handler", {
      error: e instanceof Error ? e.message : String(e),
    });
    return Response.json({ error: "Internal server error" }, { status: 500 });
  };
  // The direct way when configured and this Deno offers it; else the proxy way (and why).
  const direct = settings.connection_guard === "direct"
    ? directServer((req, info) => serveInner(req, info), onError)
    : undefined;
  if (typeof direct === "string") {
    logger.warn("the connection guard copies bytes through a loopback port (connection_guard proxy)", {
      reason: direct,
    });
  }
  const handOff: HandOff | undefined = typeof direct === "string" ? undefined : direct;
  const guard = new ConnectionGuard(listener, {
    maxConnections: settings.max_connections,
    // Behind a proxy every connection comes from the proxy: a per-address cap would be one
    // cap for everyone, so it is left to the proxy (docs/DEPLOYMENT.md).
    maxConnectionsPerClient: settings.trust_proxy ? 0 : settings.max_connections_per_client,
    clientOf: (peer) => clientKey(peer, { ipv6Prefix: settings.client_ipv6_prefix }),
    // One site usually holds a /56 or /48: its /64s share one share of the health reserve.
    reserveClientOf: (peer) => clientKey(peer, { ipv6Prefix: Math.min(56, settings.client_ipv6_prefix) }),
    headerTimeoutMs: settings.header_timeout * 1000,
    idleTimeoutMs: settings.idle_timeout * 1000,
    bodyTimeoutMs: settings.body_timeout * 1000,
    logger,
    ...(handOff ? { handOff } : { connect: () => (inner as InnerServer).connect() }),
  });
  const serveInner = guardedHandler(guard, handler, handOff !== undefined, publicHost);
  let inner: InnerServer | undefined;
  if (!handOff) {
    const started = startInner(serveInner, onError, options);
    if (typeof started === "string") {
      logger.warn("the connection guard is off: no connection cap, no head or idle deadlines", {
        reason: started,
      });
      guard.closeAll();
      return await serveDirect(app, handler, options);
    }
    inner = started;
  }
  let stopping = false;
  if (metrics) metrics.http.guard = () => guard.stats();
  // Deno.serve's accept loop ends the server when the process runs out of file descriptors;
  // connections it already holds carry on, so a new server takes the new ones.
  const supervise = (current: InnerServer): void => {
    current.server.finished.catch(async (e) => {
      if (stopping) return;
      logger.error("the HTTP server behind the connection guard stopped accepting; starting another", {
        error: e instanceof Error ? e.message : String(e),
      });
      if (isFdExhaustion(e)) guard.exhausted();
      for (let attempt = 0; !stopping; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
        const next = await startInner(serveInner, onError, options);
        if (typeof next === "string") continue;
        inner = next;
        supervise(next);
        return;
      }
    });
  };
  if (inner) supervise(inner);
  const accepting = guard.serve();
  logger.info("serving MCP over HTTP", {
    url: `http://${publicHost}/mcp`,
    host: addr.hostname,
    port: addr.port,
    stateless: settings.stateless,
    providers: app.config.enabledProviders,
    tools: app.tools.length,
    auth: settings.oauth_issuer ? "oauth" : settings.auth_token ? "token" : "none",
    writes: settings.writes,
    max_connections: settings.max_connections,
    guard: inner ? "loopback port" : "direct",
    ...(inner ? { inner_port: inner.port } : {}),
  });
  await stopSignal(options.shutdown);
  logger.info("shutting down: no new connections; finishing calls in flight");
  stopping = true;
  guard.stopAccepting();
  await accepting;
  const drainMs = options.drainMs ?? 2_000;
  // Connections end once their answers in flight are sent; streams end with handler.close.
  const finished = inner ? inner.server.shutdown() : Promise.resolve(guard.endServed());
  await handler.close(options.graceMs ?? settings.shutdown_grace * 1000);
  // The proxy way: the server's answers then still pass through the guard to the client.
  const drainUntil = Date.now() + drainMs;
  await drain(finished.then(() => guard.settled(drainUntil - Date.now())), options, logger);
  guard.closeAll();
  logger.info("HTTP server stopped", { connections: summary(guard.stats()) });
}

/**
 * The handler of the HTTP server the guard reaches: each request's connection from the guard
 * (its client's address, a health-reserve refusal), and what the guard learns of its answer.
 */
function guardedHandler(
  guard: ConnectionGuard,
  handler: HttpHandler,
  isDirect: boolean,
  publicHost: string,
): (req: Request, served: Deno.ServeHandlerInfo) => Response | Promise<Response> {
  return (req, served) => {
    const from = served.remoteAddr as Deno.NetAddr;
    const at = req.url.indexOf("/", req.url.indexOf("//") + 2);
    const q = req.url.indexOf("?", at);
    const path = at === -1 ? "/" : req.url.slice(at, q === -1 ? undefined : q);
    const dispatched = guard.dispatch(from, req.method, path);
    if (!dispatched) {
      // Not a connection of the guard's: something else reached the private port (or, the
      // direct way, a connection the guard has just ended).
      return Response.json({ error: `Forbidden: connect to http://${publicHost}` }, { status: 403 });
    }
    const info = withCompleted(served, { remoteAddr: { hostname: dispatched.peer }, guarded: true });
    info.completed!.then(dispatched.done, dispatched.done);
    if (dispatched.refusal) {
      const { refusal } = dispatched;
      return new Response(refusalBody(refusal), { status: refusal.status, headers: refusalHeaders(refusal) });
    }
    const answer = handler(req, info);
    if (!isDirect) return answer;
    const made = (res: Response) => directAnswer(res, dispatched);
    return answer instanceof Promise ? answer.then(made) : made(answer);
  };
}

/** The HTTP server behind the guard, on a private loopback port. */
interface InnerServer {
  port: number;
  server: Deno.HttpServer;
  connect(): Promise<Deno.TcpConn>;
}

/**
 * Starts `Deno.serve` on a loopback port for the guard, when `--allow-net` allows 127.0.0.1.
 * It answers only connections the guard opened (see `ConnectionGuard.dispatch`): the guard
 * knows each of its connections by the address it connected from, which is also how the
 * handler learns the client's address without a header. Returns why it cannot otherwise.
 */
function startInner(
  fn: (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  onError: (e: unknown) => Response,
  options: ServeHttpOptions,
): InnerServer | string {
  if (!options.isNetAllowed("127.0.0.1")) return "--allow-net does not allow 127.0.0.1 for a loopback port";
  try {
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {}, onError }, fn);
    const port = server.addr.port;
    return { port, server, connect: () => Deno.connect({ hostname: "127.0.0.1", port }) };
  } catch (e) {
    return `cannot listen on a loopback port: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * `info` with Deno.serve's `completed` for the request `served` describes, made on first use
 * (Deno makes the promise when it is asked for) and never left as an unhandled rejection (Deno
 * rejects it for a response it could not send, whoever awaits it or not).
 */
function withCompleted(served: Deno.ServeHandlerInfo, info: ConnectionInfo): ConnectionInfo {
  let completed: Promise<void> | undefined;
  return Object.defineProperty(info, "completed", {
    get(): Promise<void> {
      if (!completed) {
        completed = served.completed;
        completed.catch(() => {});
      }
      return completed;
    },
    enumerable: true,
  });
}

/** The server without the guard: `Deno.serve` on the public address (Windows, or no socket). */
async function serveDirect(app: ServedApp, handler: HttpHandler, options: ServeHttpOptions): Promise<void> {
  const { http_host: host, http_port: port } = app.config.server;
  const { logger } = options;
  const listening = Promise.withResolvers<Deno.NetAddr>();
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: host,
      port,
      onListen: (addr) => listening.resolve(addr),
      onError: (e) => {
        logger.error("unhandled error in the HTTP handler", {
          error: e instanceof Error ? e.message : String(e),
        });
        return Response.json({ error: "Internal server error" }, { status: 500 });
      },
    }, (req, info) => handler(req, withCompleted(info, { remoteAddr: info.remoteAddr })));
  } catch (e) {
    await handler.close(0);
    throw listenError(e, listenAddress(host, port));
  }
  const addr = await Promise.race([listening.promise, server.finished.then(() => null)]);
  if (addr) {
    logger.info("serving MCP over HTTP", {
      url: `http://${listenAddress(addr.hostname, addr.port)}/mcp`,
      host: addr.hostname,
      port: addr.port,
      stateless: app.config.server.stateless,
      providers: app.config.enabledProviders,
      tools: app.tools.length,
      auth: app.config.server.oauth_issuer ? "oauth" : app.config.server.auth_token ? "token" : "none",
      writes: app.config.server.writes,
      guard: "off",
    });
  }
  await Promise.race([stopSignal(options.shutdown), server.finished]);
  logger.info("shutting down: no new connections; finishing calls in flight");
  const finished = server.shutdown();
  await handler.close(options.graceMs ?? app.config.server.shutdown_grace * 1000);
  await drain(finished, options, logger);
  logger.info("HTTP server stopped");
}

function listenError(e: unknown, address: string): unknown {
  if (e instanceof Deno.errors.AddrInUse) {
    return new ConfigError(
      "server.http_port",
      `Cannot listen on "${address}": the address is in use. ` +
        `Stop the other server, or choose another port with --port or MCP_HTTP_PORT`,
    );
  }
  return e;
}

function stopSignal(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * Every stream is closed now, but Deno's shutdown also waits until each response has been
 * sent, and a client that stopped reading never takes the rest of its stream: without a
 * bound, one such client would keep the process from exiting.
 */
async function drain(finished: Promise<unknown>, options: ServeHttpOptions, logger: Logger): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    finished.then((all) => all !== false, () => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), options.drainMs ?? 2_000);
    }),
  ]);
  clearTimeout(timer);
  if (!drained) {
    logger.warn("stopping with responses still unsent to clients that stopped reading", {
      drain_ms: options.drainMs ?? 2_000,
    });
  }
}

function summary(stats: GuardStats): Record<string, number> {
  return {
    accepted: stats.accepted,
    refused: stats.refused,
    evicted: stats.evicted,
    timed_out: stats.timedOut,
    fd_exhausted: stats.fdExhausted,
  };
}
