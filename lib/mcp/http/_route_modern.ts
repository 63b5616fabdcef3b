// Route: 2026-07-28 requests at /mcp, each one exchange on a fresh server (the SDK's per-request
// entry), with the caps on held-open `subscriptions/listen` streams. Whose work a request is
// reaches the per-request server through the request's context (exchangeOf), never headers.
import { createMcpHandler } from "../sdk.ts";
import type { McpHttpHandler } from "../sdk.ts";
import { exchangeOf } from "../../http/request_scope.ts";
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import { notifyDrain } from "./_context.ts";
import type { HttpState, RequestContext } from "./_context.ts";
import type { RequestId } from "./_route_sessions.ts";

/** The 2026-07-28 path of one handler. */
export interface ModernRoute {
  /** Serves `ctx`'s request (body already parsed), sending `forwarded` on to the SDK. */
  serve(ctx: RequestContext, forwarded: Request): Promise<Response>;
  /** Ends the exchanges and streams still open. */
  close(): Promise<void>;
}

/** The id of a single `subscriptions/listen` request, if `body` is one. */
function listenRequestId(body: unknown): RequestId | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const m = body as { method?: unknown; id?: unknown };
  if (m.method !== "subscriptions/listen") return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}

/** Whether `body` is one tools/list or tools/call message. */
function toolsOnly(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const method = (body as { method?: unknown }).method;
  return method === "tools/call" || method === "tools/list";
}

/** The 2026-07-28 route of the handler whose state is `state`. */
export function createModernRoute(state: HttpState): ModernRoute {
  const { app, settings, logger } = state;
  // The requests whose one message is a tools/list or tools/call: their server registers no
  // resources, prompts or views (nothing it answers reads them), most of what building one costs.
  const toolRequests = new WeakSet<Request>();
  // The SDK's per-request entry, one fresh server per request. 2025-era traffic never reaches
  // it (_route_streamable.ts routes it to the session code).
  const modern: McpHttpHandler = createMcpHandler(
    ({ requestInfo }) => {
      // The request handed on is tied to its exchange (handler.ts): whose work, which toolsets.
      const exchange = exchangeOf(requestInfo);
      return app.newServer({
        owner: exchange?.owner ?? state.sharedOwner,
        client: exchange?.client ?? "unknown",
        toolsets: exchange?.toolsets ?? app.defaultToolsets,
        ...(requestInfo && toolRequests.has(requestInfo) ? { toolsOnly: true } : {}),
      });
    },
    {
      legacy: "reject",
      keepAliveMs: state.keepAliveMs,
      // The caps that answer are this handler's (per client, and all together, with a message
      // that says what to do); the SDK's own stays behind them as a backstop.
      maxSubscriptions: settings.max_listen_streams * 2,
      maxRequestBodySize: settings.max_body_bytes,
      // With Redis, listen streams hear the change events of every replica.
      ...(app.shared?.eventBus ? { bus: app.shared.eventBus } : {}),
      onerror: (e) => logger.debug("modern request error", { error: e.message }),
    },
  );

  async function uncapped(ctx: RequestContext, forwarded: Request): Promise<Response> {
    state.modernOpen++;
    if (toolsOnly(ctx.body)) toolRequests.add(forwarded);
    let res: Response;
    try {
      // The parsed body goes along: the SDK reads nothing from the request's body.
      res = await modern.fetch(forwarded, { parsedBody: ctx.body });
    } catch (e) {
      state.modernOpen--;
      notifyDrain(state);
      throw e;
    }
    return ctx.whenSent(res, () => {
      state.modernOpen--;
      notifyDrain(state);
    });
  }

  /**
   * A `subscriptions/listen` request: a stream held open until the client goes, so capped per
   * client and in all (max_listen_streams_per_client, max_listen_streams); a refusal is a
   * JSON-RPC error that says which cap and what to do.
   */
  async function listenStream(ctx: RequestContext, forwarded: Request, id: RequestId): Promise<Response> {
    const client = ctx.caller.clientKey;
    const mine = state.listenOpen.get(client) ?? 0;
    if (mine >= settings.max_listen_streams_per_client) {
      state.served?.shareRefusals.inc(1, "listen_streams_per_client");
      return jsonRpcError(
        429,
        SERVER_ERROR,
        `Too many subscriptions/listen streams from your client: it holds ${mine}, the most one client may ` +
          `(MCP_MAX_LISTEN_STREAMS_PER_CLIENT). One stream can carry every notification type: close the ` +
          `ones you no longer read, then retry`,
        { id, headers: { "Retry-After": "10" } },
      );
    }
    if (state.listenTotal >= settings.max_listen_streams) {
      state.served?.shareRefusals.inc(1, "listen_streams");
      return jsonRpcError(
        503,
        SERVER_ERROR,
        `The server holds its most subscriptions/listen streams (${settings.max_listen_streams}, ` +
          `MCP_MAX_LISTEN_STREAMS): retry after the Retry-After delay, or use another instance`,
        { id, headers: { "Retry-After": "30" } },
      );
    }
    state.listenOpen.set(client, mine + 1);
    state.listenTotal++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      state.listenTotal--;
      const left = (state.listenOpen.get(client) ?? 1) - 1;
      if (left > 0) state.listenOpen.set(client, left);
      else state.listenOpen.delete(client);
    };
    try {
      return ctx.whenSent(await uncapped(ctx, forwarded), release);
    } catch (e) {
      release();
      throw e;
    }
  }

  return {
    serve: async (ctx, forwarded) => {
      const listen = listenRequestId(ctx.body);
      if (listen !== undefined) return await listenStream(ctx, forwarded, listen);
      return await uncapped(ctx, forwarded);
    },
    close: async () => await modern.close(),
  };
}
