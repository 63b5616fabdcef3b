import type { App } from "../../app.ts";
import { UsageError } from "../../errors.ts";
import type { Logger } from "../../log.ts";

/** Options for {@linkcode serveHttp}. */
export interface ServeHttpOptions {
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM: stop accepting, finish in-flight calls, close streams. */
  shutdown: AbortSignal;
  /** Whether the process may listen on / connect to `host:port`. */
  isNetAllowed: (host: string) => boolean;
}

/** Serves MCP over HTTP (Streamable HTTP and legacy SSE). */
export function serveHttp(_app: App, _options: ServeHttpOptions): Promise<void> {
  return Promise.reject(new UsageError("The HTTP transport is not available in this build yet; use stdio"));
}
