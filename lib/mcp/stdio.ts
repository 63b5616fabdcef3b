import type { App } from "../app.ts";
import type { Logger } from "../log.ts";
import { LineStdioTransport } from "./stdio_transport.ts";

/** Options for {@linkcode serveStdio}. */
export interface ServeStdioOptions {
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM. */
  shutdown: AbortSignal;
}

/**
 * Serves MCP over stdin/stdout until stdin closes or shutdown is signalled. Only protocol
 * messages go to stdout; logs go to stderr.
 */
export async function serveStdio(app: App, options: ServeStdioOptions): Promise<void> {
  const server = app.newServer();
  // One message may be as large as an HTTP request body may be: the same cap on both transports.
  const transport = new LineStdioTransport({ maxLineBytes: app.config.server.max_body_bytes });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    if (options.shutdown.aborted) resolve();
    options.shutdown.addEventListener("abort", () => resolve(), { once: true });
  });
  await server.connect(transport);
  options.logger.info("serving MCP over stdio", {
    providers: app.config.enabledProviders,
    tools: app.tools.length,
  });
  await closed;
  await server.close().catch(() => {});
  options.logger.info("stdio session closed");
}
