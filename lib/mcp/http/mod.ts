// The HTTP transport's face: Streamable HTTP and legacy SSE with their security checks.
export { createHttpHandler, MAX_HEADER_BYTES, MAX_SSE_BACKLOG_BYTES, MAX_URL_LENGTH } from "./handler.ts";
export type { ConnectionInfo, HttpHandler, HttpHandlerOptions } from "./handler.ts";
export { listenAddress, serveHttp } from "./serve.ts";
export type { ServeHttpOptions } from "./serve.ts";
