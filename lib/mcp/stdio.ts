import type { ServedApp } from "./served_app.ts";
import type { Logger } from "../log.ts";
import { serveSdkStdio } from "./sdk.ts";
import { LineStdioTransport } from "./stdio_transport.ts";
import type { ByteReader, ByteWriter } from "./stdio_transport.ts";

/** The byte streams stdio serves on: the process's own, or a pair an in-process test holds. */
export interface StdioStreams {
  stdin: ByteReader;
  stdout: ByteWriter;
}

/** Options for {@linkcode serveStdio}. */
export interface ServeStdioOptions {
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM. */
  shutdown: AbortSignal;
  /** Default `Deno.stdin` and `Deno.stdout`. */
  streams?: StdioStreams;
}

/**
 * Serves MCP over stdin/stdout until stdin closes, the client stops reading, or shutdown is
 * signalled. The opening message picks the protocol era for the connection: `initialize`
 * (2025-11-25 and earlier) or a 2026-07-28 request carrying its `_meta` envelope (clients probe
 * with `server/discover`). Only protocol messages go to stdout; logs go to stderr.
 */
export async function serveStdio(app: ServedApp, options: ServeStdioOptions): Promise<void> {
  const { logger } = options;
  // One message may be as large as an HTTP request body may be: the same cap on both transports.
  const transport = new LineStdioTransport({
    ...options.streams,
    maxLineBytes: app.config.server.max_body_bytes,
    // A client that closes stdin mid-call still gets the answer, as a shutdown would give it.
    drainMs: Math.round(app.config.server.shutdown_grace * 1000),
    onOutputError: (e) =>
      logger.info("stdout closed by the client; ending the session", { error: e.message }),
  });
  const handle = serveSdkStdio(({ era }) => {
    logger.debug("stdio connection opened", { era });
    return app.newServer();
  }, {
    transport,
    onerror: (e) => logger.debug("stdio transport error", { error: e.message }),
  });
  logger.info("serving MCP over stdio", {
    providers: app.config.enabledProviders,
    tools: app.tools.length,
  });
  await Promise.race([
    transport.closed,
    new Promise<void>((resolve) => {
      if (options.shutdown.aborted) resolve();
      options.shutdown.addEventListener("abort", () => resolve(), { once: true });
    }),
  ]);
  await handle.close().catch(() => {});
  logger.info("stdio session closed");
}
