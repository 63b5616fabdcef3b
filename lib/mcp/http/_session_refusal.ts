// The answer to a new (or rebuilt) session that finds no room: which cap, and what to do.
import type { ServerSettings } from "../../config/server_settings.ts";
import { metrics } from "../../metrics/mod.ts";
import { isInitializeRequest } from "../sdk.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import type { ReserveRefusal } from "./_sessions.ts";

/** The settings a refusal names. */
export type SessionCaps = Pick<
  ServerSettings,
  "max_sessions" | "max_sessions_per_client" | "session_reclaim_grace" | "session_reclaim_idle"
>;

/**
 * The JSON-RPC error for a session refused `why` (the client's own cap: 429; the server's: 503),
 * answering the `initialize` among `messages`.
 */
export function tooManySessions(
  caps: SessionCaps,
  messages: JSONRPCMessage[],
  why: ReserveRefusal,
): Response {
  const init = messages.find(isInitializeRequest);
  const id = init && "id" in init ? init.id as string | number : null;
  metrics?.shareRefusals.inc(1, why === "client" ? "sessions_per_client" : "sessions");
  if (why === "client") {
    return jsonRpcError(
      429,
      SERVER_ERROR,
      `Too many sessions from your client: it holds ${caps.max_sessions_per_client}, the most one client may ` +
        `(MCP_MAX_SESSIONS_PER_CLIENT), and none may make room: each is answering a call or opened less ` +
        `than ${caps.session_reclaim_grace} s ago (MCP_SESSION_RECLAIM_GRACE). Reuse an open session ` +
        `(send its Mcp-Session-Id), close one you no longer need (DELETE /mcp), or retry once a call finished`,
      { id, headers: { "Retry-After": "10" } },
    );
  }
  return jsonRpcError(
    503,
    SERVER_ERROR,
    `The server is full: all ${caps.max_sessions} sessions (MCP_MAX_SESSIONS) are in use by clients active ` +
      `in the last ${caps.session_reclaim_idle} s, and no one's live session is closed for a newcomer. ` +
      `Retry after the Retry-After delay, or use another instance; 2026-07-28 requests need no session`,
    { id, headers: { "Retry-After": "30" } },
  );
}
