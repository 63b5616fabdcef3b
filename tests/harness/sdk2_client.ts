// The MCP SDK v2 client (2026-07-28 and 2025-era), for end-to-end tests of both protocol eras.
// Kept out of lib/: client imports widen the permissions the server needs.

export { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
export type { Transport as ClientTransport } from "@modelcontextprotocol/client";
export { SSEClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
export type { OAuthClientProvider } from "@modelcontextprotocol/client";

/** The protocol revision of the stateless era. */
export const MODERN = "2026-07-28";
