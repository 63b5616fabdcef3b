import type { App } from "../../app.ts";
import { ConfigError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { createHttpHandler } from "./handler.ts";

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
 * Serves MCP over HTTP with `Deno.serve` on `server.http_host:server.http_port` until shutdown
 * is signalled, then stops gracefully. The listen address must be inside `--allow-net`.
 */
export async function serveHttp(app: App, options: ServeHttpOptions): Promise<void> {
  const { http_host: host, http_port: port } = app.config.server;
  const address = listenAddress(host, port);
  if (!options.isNetAllowed(address)) {
    throw new ConfigError(
      "server.http_port",
      `Not allowed to listen on "${address}": this process's --allow-net does not include it. ` +
        `Run with a wider allowlist, e.g. deno run --allow-net=${address},... main.ts ` +
        `(deno task start allows 127.0.0.1:8000 and localhost:8000), or choose an allowed address with --host and --port`,
    );
  }
  const { logger } = options;
  const handler = createHttpHandler(app, { logger });
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
    }, (req, info) => handler(req, info));
  } catch (e) {
    await handler.close(0);
    if (e instanceof Deno.errors.AddrInUse) {
      throw new ConfigError(
        "server.http_port",
        `Cannot listen on "${address}": the address is in use. ` +
          `Stop the other server, or choose another port with --port or MCP_HTTP_PORT`,
      );
    }
    throw e;
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
      auth: app.config.server.auth_token ? "bearer" : "none",
    });
  }
  const stopped = new Promise<void>((resolve) => {
    if (options.shutdown.aborted) resolve();
    options.shutdown.addEventListener("abort", () => resolve(), { once: true });
  });
  await Promise.race([stopped, server.finished]);
  logger.info("shutting down: no new connections; finishing calls in flight");
  const finished = server.shutdown();
  await handler.close(options.graceMs ?? app.config.server.shutdown_grace * 1000);
  // Every stream is closed now, but Deno's shutdown also waits until each response has been
  // sent, and a client that stopped reading never takes the rest of its stream: without a
  // bound, one such client would keep the process from exiting.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    finished.then(() => true),
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
  logger.info("HTTP server stopped");
}
