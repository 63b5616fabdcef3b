// Route: the legacy SSE transport (2024-11-05): GET /sse opens a session's stream, POST
// /message?session_id=… carries the client's messages into it. Off in stateless mode.
import type { JSONRPCMessage } from "../sdk.ts";
import { isRequest, jsonRpcError, SERVER_ERROR, SESSION_NOT_FOUND } from "./_jsonrpc.ts";
import type { JsonRpcErrorMessage } from "./_jsonrpc.ts";
import type { LegacySseTransport } from "./_legacy_sse.ts";
import type { Session } from "./_sessions.ts";
import { SSE_HEADERS } from "./_streams.ts";
import { readBody } from "./_mw_body.ts";
import { shuttingDown, tooManySessions } from "./_answers.ts";
import { sessionOwner } from "./_context.ts";
import type { HttpState, RequestContext } from "./_context.ts";

/** Bytes queued for a legacy SSE client that does not read before its session is dropped. */
export const MAX_SSE_BACKLOG_BYTES = 8 * 1024 * 1024;

interface SseSession extends Session {
  kind: "sse";
  transport: LegacySseTransport;
}

function sseUnavailable(state: HttpState): Response | undefined {
  if (!state.settings.stateless) return undefined;
  return jsonRpcError(
    404,
    SERVER_ERROR,
    "Legacy SSE is off in stateless mode (it keeps each session in memory): use POST /mcp, or run without --stateless",
  );
}

/** GET /sse: a new legacy session (within the caps) and its event stream. */
export async function openSse(state: HttpState, ctx: RequestContext): Promise<Response> {
  const off = sseUnavailable(state);
  if (off) return off;
  const { store, logger, clock } = state;
  const caller = ctx.caller;
  const { LegacySseTransport } = await import("./_legacy_sse.ts");
  const refused = store.reserve(caller.clientKey);
  if (refused) return tooManySessions(state, [], refused);
  const id = crypto.randomUUID();
  const transport = new LegacySseTransport(id, {
    endpoint: `/message?session_id=${id}`,
    every: state.every,
    keepAliveMs: state.keepAliveMs,
    maxBacklogBytes: MAX_SSE_BACKLOG_BYTES,
    onSlowClient: () =>
      logger.warn("dropping a legacy SSE session whose client stopped reading", { session_id: id }),
  });
  const server = state.app.newServer({
    owner: sessionOwner(state, caller, id),
    toolsets: ctx.toolsets,
    client: caller.clientKey,
  });
  const session: SseSession = {
    id,
    kind: "sse",
    lastActive: clock.now(),
    owner: caller.clientKey,
    ...(caller.principal ? { principal: caller.principal.id } : {}),
    transport,
    busy: () => transport.pending > 0,
    close: () => server.close(),
  };
  transport.onclose = () => {
    store.delete(id);
    logger.info("session closed", { session_id: id, transport: "sse" });
  };
  transport.onerror = (e) => logger.debug("transport error", { session_id: id, error: e.message });
  store.add(session);
  try {
    await server.connect(transport);
  } catch (e) {
    store.delete(id);
    throw e;
  }
  ctx.log().info("session opened", { session_id: id, transport: "sse", endpoint: ctx.url.pathname });
  return new Response(transport.stream, { headers: { ...SSE_HEADERS } });
}

/** POST /message: the client's messages into its session; the answers go out on its stream. */
export async function sseMessage(
  state: HttpState,
  ctx: RequestContext,
  forwarded: Request,
): Promise<Response> {
  const off = sseUnavailable(state);
  if (off) return off;
  const params = ctx.url.searchParams;
  const id = params.get("session_id") ?? params.get("sessionId");
  if (!id) {
    return jsonRpcError(
      400,
      SERVER_ERROR,
      "Bad Request: missing the session_id query parameter; use the endpoint sent by GET /sse",
    );
  }
  const session = state.store.get(id);
  if (!session || session.kind !== "sse" || session.principal !== ctx.caller.principal?.id) {
    return jsonRpcError(
      404,
      SESSION_NOT_FOUND,
      "Session not found: it expired or its stream closed; open a new one with GET /sse",
    );
  }
  const errors: JsonRpcErrorMessage[] = [];
  const refused = await readBody(state, ctx, errors);
  if (refused) return refused;
  if (state.closing && ctx.messages.some(isRequest)) return shuttingDown();
  session.lastActive = state.clock.now();
  const transport = (session as SseSession).transport;
  for (const message of ctx.messages) transport.receive(message, { request: forwarded });
  // A batch's invalid elements are answered on the stream, like its valid ones.
  for (const error of errors) void transport.send(error as unknown as JSONRPCMessage);
  return new Response("Accepted", { status: 202, headers: { "Content-Type": "text/plain" } });
}
