// Refusals more than one route gives: the server is shutting down, or has no room for a session.
import { isInitializeRequest } from "../sdk.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import type { ReserveRefusal } from "./_sessions.ts";
import type { HttpState } from "./_context.ts";

/** The 503 of a new request while the server drains. */
export function shuttingDown(): Response {
  return jsonRpcError(
    503,
    SERVER_ERROR,
    "The server is shutting down: retry on another instance or after restart",
    { headers: { "Connection": "close", "Retry-After": "5" } },
  );
}

/** The refusal of a new session: the client's own cap (429) or the server's (503). */
export function tooManySessions(state: HttpState, messages: JSONRPCMessage[], why: ReserveRefusal): Response {
  const { store, settings } = state;
  const init = messages.find(isInitializeRequest);
  const id = init && "id" in init ? init.id as string | number : null;
  state.served?.shareRefusals.inc(1, why === "client" ? "sessions_per_client" : "sessions");
  if (why === "client") {
    return jsonRpcError(
      429,
      SERVER_ERROR,
      `Too many sessions from your client: it holds ${store.maxPerClient}, the most one client may ` +
        `(MCP_MAX_SESSIONS_PER_CLIENT), and none may make room: each is answering a call or opened less ` +
        `than ${settings.session_reclaim_grace} s ago (MCP_SESSION_RECLAIM_GRACE). Reuse an open session ` +
        `(send its Mcp-Session-Id), close one you no longer need (DELETE /mcp), or retry once a call finished`,
      { id, headers: { "Retry-After": "10" } },
    );
  }
  return jsonRpcError(
    503,
    SERVER_ERROR,
    `The server is full: all ${store.max} sessions (MCP_MAX_SESSIONS) are in use by clients active ` +
      `in the last ${settings.session_reclaim_idle} s, and no one's live session is closed for a newcomer. ` +
      `Retry after the Retry-After delay, or use another instance; 2026-07-28 requests need no session`,
    { id, headers: { "Retry-After": "30" } },
  );
}
