import type { ServedApp } from "../served_app.ts";
import { ConfigError } from "../../errors.ts";
import { metrics } from "../../metrics/mod.ts";
import type { Logger } from "../../log.ts";
import { clientKey } from "./_client_key.ts";
import { ConnectionGuard, isFdExhaustion } from "./_conn_guard.ts";
import type { GuardStats } from "./_conn_guard.ts";
import { createHttpHandler, GUARD_STAMP_HEADER } from "./handler.ts";
import type { ConnectionInfo, HttpHandler } from "./handler.ts";

/** Options for {@linkcode serveHttp}. */
export interface ServeHttpOptions {
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM: stop accepting, finish in-flight calls, close streams. */
  shutdown: AbortSignal;
  /** Whether the process may listen on / connect to `host:port`. */
  isNetAllowed: (host: string) => boolean;
  /**
   * Folder for the connection guard's socket to the HTTP server behind it (the per-user data
   * folder, writable under the start task's permissions). Without it, or where Unix sockets
   * are not available, the guard uses a loopback port if `--allow-net` allows 127.0.0.1, and
   * otherwise runs unguarded.
   */
  dataDir?: string;
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

const STAMP_HEADER = GUARD_STAMP_HEADER;

/**
 * Serves MCP over HTTP on `server.http_host:server.http_port` until shutdown is signalled,
 * then stops gracefully. The listen address must be inside `--allow-net`. Connections are
 * accepted by a {@linkcode ConnectionGuard} (connection cap, head/body/idle deadlines,
 * survival of file-descriptor exhaustion) that passes them to `Deno.serve` on a private
 * Unix socket, or a loopback port that answers only requests the guard stamped.
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
  const secret = crypto.randomUUID();
  const publicHost = listenAddress(addr.hostname, addr.port);
  const serveInner = (req: Request, served: Deno.ServeHandlerInfo): Response | Promise<Response> => {
    if (!req.headers.get(STAMP_HEADER)?.startsWith(`${secret} `)) {
      // Only the guard knows the secret: anything else reached the private socket directly.
      return Response.json({ error: `Forbidden: connect to http://${publicHost}` }, { status: 403 });
    }
    const [forwarded, info] = fromGuard(req, secret, publicHost, served);
    return handler(forwarded, info);
  };
  const onError = (e: unknown): Response => {
    logger.error("unhandled error in the HTTP handler", {
      error: e instanceof Error ? e.message : String(e),
    });
    return Response.json({ error: "Internal server error" }, { status: 500 });
  };
  let inner = await startInner(serveInner, onError, options);
  if (typeof inner === "string") {
    logger.warn("the connection guard is off: no connection cap, no head or idle deadlines", {
      reason: inner,
    });
    listener.close();
    return await serveDirect(app, handler, options);
  }
  let stopping = false;
  const guard = new ConnectionGuard(listener, {
    maxConnections: settings.max_connections,
    // Behind a proxy every connection comes from the proxy: a per-address cap would be one
    // cap for everyone, so it is left to the proxy (docs/DEPLOYMENT.md).
    maxConnectionsPerClient: settings.trust_proxy ? 0 : settings.max_connections_per_client,
    clientOf: (peer) => clientKey(peer, { ipv6Prefix: settings.client_ipv6_prefix }),
    // One site usually holds a /56 or /48: its /64s share one share of the health reserve.
    reserveClientOf: (peer) => clientKey(peer, { ipv6Prefix: Math.min(56, settings.client_ipv6_prefix) }),
    headerTimeoutMs: settings.header_timeout * 1000,
    bodyTimeoutMs: settings.body_timeout * 1000,
    idleTimeoutMs: settings.idle_timeout * 1000,
    logger,
    connect: () => (inner as InnerServer).connect(),
    stampName: STAMP_HEADER,
    stampValue: (peer) => `${secret} ${peer}`,
  });
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
        const next = await startInner(serveInner, onError, options, current);
        if (typeof next === "string") continue;
        inner = next;
        supervise(next);
        return;
      }
    });
  };
  supervise(inner);
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
    guard: inner.kind,
    ...(inner.path ? { socket: inner.path } : {}),
    ...(inner.port ? { inner_port: inner.port } : {}),
  });
  await stopSignal(options.shutdown);
  logger.info("shutting down: no new connections; finishing calls in flight");
  stopping = true;
  guard.stopAccepting();
  await accepting;
  const drainMs = options.drainMs ?? 2_000;
  const finished = inner.server.shutdown();
  await handler.close(options.graceMs ?? settings.shutdown_grace * 1000);
  // The server's answers then still pass through the guard to the client.
  const drainUntil = Date.now() + drainMs;
  await drain(finished.then(() => guard.settled(drainUntil - Date.now())), options, logger);
  guard.closeAll();
  inner.remove();
  logger.info("HTTP server stopped", { connections: summary(guard.stats()) });
}

/** The HTTP server behind the guard, on a private socket. */
interface InnerServer {
  kind: "unix socket" | "loopback port";
  /** The Unix socket's path. */
  path?: string;
  /** The loopback port, when there is no socket. */
  port?: number;
  server: Deno.HttpServer;
  connect(): Promise<Deno.Conn>;
  /** Removes the socket file, if any. */
  remove(): void;
}

/**
 * Where the HTTP server behind the guard may listen, in order of preference: a Unix socket in
 * the data folder, then one at a fixed path for compiled binaries (which cannot know the
 * user's home when their permissions are baked in). Deno lets a process use a Unix socket
 * only with an `--allow-net=unix:<path>` grant for that exact path.
 */
export function innerSocketPaths(dataDir: string | undefined): string[] {
  const paths = dataDir ? [`${dataDir.replace(/\/+$/, "")}/http.sock`] : [];
  return [...paths, "/tmp/opendata-mcp-http.sock"];
}

/**
 * Starts `Deno.serve` where only this process reaches it: a Unix socket (mode 0600) from
 * {@linkcode innerSocketPaths} that `--allow-net` grants and no live server holds, else a
 * loopback port when `--allow-net` allows 127.0.0.1. Returns why none worked otherwise.
 * `again` restarts on a socket this process held before.
 */
async function startInner(
  fn: (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  onError: (e: unknown) => Response,
  options: ServeHttpOptions,
  again?: InnerServer,
): Promise<InnerServer | string> {
  const reasons: string[] = [];
  const paths = again ? (again.path ? [again.path] : []) : innerSocketPaths(options.dataDir);
  for (const path of Deno.build.os === "windows" ? [] : paths) {
    if (!options.isNetAllowed(`unix:${path}`)) {
      reasons.push(`--allow-net does not grant "unix:${path}"`);
      continue;
    }
    // The longest path a Unix socket address holds is 104 bytes on macOS, 108 on Linux.
    if (new TextEncoder().encode(path).length > 100) {
      reasons.push(`the socket path "${path}" is too long`);
      continue;
    }
    try {
      if (!again) {
        if (await answers(path)) {
          reasons.push(`another server is listening on "${path}"`);
          continue;
        }
        Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")) || "/", { recursive: true });
      }
      removeQuietly(path);
      const server = Deno.serve({ transport: "unix", path, onListen: () => {}, onError }, fn);
      Deno.chmodSync(path, 0o600);
      return {
        kind: "unix socket",
        path,
        server,
        connect: () => Deno.connect({ transport: "unix", path }),
        remove: () => removeQuietly(path),
      };
    } catch (e) {
      reasons.push(`cannot listen on "${path}": ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (!options.isNetAllowed("127.0.0.1")) {
    reasons.push("--allow-net does not allow 127.0.0.1 for a loopback port");
    return reasons.join("; ");
  }
  try {
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {}, onError }, fn);
    const port = server.addr.port;
    return {
      kind: "loopback port",
      port,
      server,
      connect: () => Deno.connect({ hostname: "127.0.0.1", port }),
      remove: () => {},
    };
  } catch (e) {
    reasons.push(`cannot listen on a loopback port: ${e instanceof Error ? e.message : String(e)}`);
    return reasons.join("; ");
  }
}

/** Whether a server accepts connections on the Unix socket `path`. */
async function answers(path: string): Promise<boolean> {
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * The request as the client sent it, with the client's address: the guard's stamp is checked
 * and removed, and a Unix socket's `http+unix:` URL becomes the `http:` URL the client used.
 */
function fromGuard(
  req: Request,
  secret: string,
  publicHost: string,
  served: Deno.ServeHandlerInfo,
): [Request, ConnectionInfo] {
  const stamp = req.headers.get(STAMP_HEADER);
  const peer = stamp?.startsWith(`${secret} `) ? stamp.slice(secret.length + 1) : "unknown";
  let url = req.url;
  if (url.startsWith("http+unix://")) {
    const slash = url.indexOf("/", "http+unix://".length);
    url = `http://${req.headers.get("host") ?? publicHost}${slash === -1 ? "/" : url.slice(slash)}`;
  }
  // The request goes on as it came, with the client's URL beside it when its own is the socket's:
  // the handler uses that URL and drops the stamp in the one copy of the headers it makes anyway.
  // A URL that does not parse (a Host that is not a host name) is the handler's to refuse.
  return [
    req,
    withCompleted(served, {
      remoteAddr: { hostname: peer },
      guarded: true,
      ...(url === req.url ? {} : { url }),
    }),
  ];
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
    malformed: stats.malformed,
    fd_exhausted: stats.fdExhausted,
  };
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Not there.
  }
}
