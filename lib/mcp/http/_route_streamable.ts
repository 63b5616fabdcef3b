// Route: Streamable HTTP at /mcp. Reads the body once, tells the eras apart (2026-07-28
// requests go to _route_modern.ts), and serves 2025-era requests in sessions
// (_route_sessions.ts) or, with `stateless`, each on a fresh server and transport.
import {
  classifyInboundRequest,
  isInitializeRequest,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
} from "../sdk.ts";
import {
  INVALID_PARAMS,
  INVALID_REQUEST,
  isPlainObject,
  isRequest,
  jsonRpcError,
  SERVER_ERROR,
  SESSION_NOT_FOUND,
  withBatchErrors,
} from "./_jsonrpc.ts";
import type { JsonRpcErrorMessage } from "./_jsonrpc.ts";
import { methodIs } from "./_requests.ts";
import { readBody } from "./_mw_body.ts";
import { shuttingDown } from "./_answers.ts";
import { notifyDrain, ownerOf } from "./_context.ts";
import type { HttpState, RequestContext } from "./_context.ts";
import { inSession, newSession } from "./_route_sessions.ts";
import type { StreamableSession } from "./_route_sessions.ts";
import type { ModernRoute } from "./_route_modern.ts";

/** POST, GET or DELETE /mcp. */
export async function streamableRoute(
  state: HttpState,
  ctx: RequestContext,
  forwarded: Request,
  modern: ModernRoute,
): Promise<Response> {
  const batchErrors: JsonRpcErrorMessage[] = [];
  const res = await routed(state, ctx, forwarded, modern, batchErrors);
  return batchErrors.length ? withBatchErrors(res, batchErrors) : res;
}

async function routed(
  state: HttpState,
  ctx: RequestContext,
  forwarded: Request,
  modern: ModernRoute,
  batchErrors: JsonRpcErrorMessage[],
): Promise<Response> {
  if (ctx.req.method === "POST") {
    const refused = await readBody(state, ctx, batchErrors);
    if (refused) return refused;
  }
  noteRpcMethod(ctx);
  if (!claimsModern(ctx) && isLegacy(ctx)) return await legacyRoute(state, ctx, forwarded);
  if (state.closing && ctx.messages.some(isRequest)) return shuttingDown();
  return await modern.serve(ctx, forwarded);
}

/**
 * The era of the request, as the SDK tells them apart: 2026-07-28 requests carry their protocol
 * version in `_meta` (and in headers), 2025-era ones do not. Malformed modern claims go to the
 * modern path too, which owns their error answers.
 */
function isLegacy(ctx: RequestContext): boolean {
  const { req } = ctx;
  const versionHeader = req.headers.get("mcp-protocol-version");
  const methodHeader = req.headers.get("mcp-method");
  return classifyInboundRequest({
    httpMethod: req.method,
    ...(versionHeader === null ? {} : { protocolVersionHeader: versionHeader }),
    ...(methodHeader === null ? {} : { mcpMethodHeader: methodHeader }),
    body: ctx.body,
  }).kind === "legacy";
}

/**
 * Whether the request is certainly not of the 2025 era, without the SDK's classifier: one POSTed
 * JSON-RPC request, not `initialize`, whose `_meta` holds the protocol-version claim. The SDK
 * calls such a request modern or rejects it, never legacy (its `classifyRequestBody`), and the
 * modern route runs the classifier again anyway, so here it would only be repeated: that cost a
 * 2026-07-28 call about 17 µs (docs/BENCHMARKS.md). Anything else is classified by the SDK.
 */
export function claimsModern(ctx: Pick<RequestContext, "req" | "body" | "messages">): boolean {
  const body = ctx.body;
  if (ctx.req.method !== "POST" || ctx.messages.length !== 1 || !isPlainObject(body)) return false;
  if (typeof body["method"] !== "string" || body["method"] === "initialize" || !("id" in body)) return false;
  // A request, not an answer: readJsonRpc took it as a JSON-RPC message (the plain request shape,
  // or the SDK's schema), and no answer has a method.
  if ("result" in body || "error" in body || !isRequest(ctx.messages[0]!)) return false;
  const params = body["params"];
  const meta = isPlainObject(params) ? params["_meta"] : undefined;
  return isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/** A 2025-era request: in its session, or with `stateless` on a fresh server and transport. */
async function legacyRoute(state: HttpState, ctx: RequestContext, forwarded: Request): Promise<Response> {
  const { req } = ctx;
  const settings = state.settings;
  const bad = methodIs(req, settings.stateless ? ["POST"] : ["POST", "GET", "DELETE"]);
  if (bad) {
    if (settings.stateless) {
      return jsonRpcError(
        405,
        SERVER_ERROR,
        "Method not allowed: this server is stateless (no sessions, no standalone stream); send every request as POST /mcp",
        { headers: { "Allow": "POST, OPTIONS" } },
      );
    }
    return bad;
  }
  if (state.closing && ctx.messages.some(isRequest)) return shuttingDown();
  if (settings.stateless) return await stateless(state, ctx, forwarded);
  const sessionId = req.headers.get("mcp-session-id");
  if (sessionId) return await toSession(state, ctx, forwarded, sessionId);
  if (req.method !== "POST" || !ctx.messages.some(isInitializeRequest)) {
    const init = ctx.messages.find((m) => isRequest(m) && m.method === "initialize");
    if (init && "id" in init) {
      // It is an initialize, only a malformed one: say so instead of asking for one.
      return jsonRpcError(
        400,
        INVALID_PARAMS,
        'Invalid params for "initialize": it needs "protocolVersion" (a string), "capabilities" (an object) ' +
          'and "clientInfo" (with "name" and "version")',
        { id: init.id as string | number },
      );
    }
    return jsonRpcError(
      400,
      SERVER_ERROR,
      "Bad Request: no Mcp-Session-Id header; start a session with an initialize request first " +
        "(or send 2026-07-28 requests, which need no session)",
    );
  }
  return await newSession(state, ctx, forwarded);
}

/** The JSON-RPC method of a single message, for the access line. */
function noteRpcMethod(ctx: RequestContext): void {
  const messages = ctx.messages;
  if (messages.length === 1) {
    const m = messages[0]!;
    if ("method" in m) ctx.fields["rpc_method"] = m.method;
  } else if (messages.length > 1) {
    ctx.fields["rpc_method"] = "batch";
  }
}

/** A request that names its session: into it, unless it is gone, another user's, or a second initialize. */
async function toSession(
  state: HttpState,
  ctx: RequestContext,
  forwarded: Request,
  sessionId: string,
): Promise<Response> {
  // With Redis, a session opened on another replica (or before this one restarted) is rebuilt;
  // a request that comes while it is being rebuilt here waits for it (its copy has no level yet).
  await state.resumer?.rebuilding(sessionId)?.catch(() => {});
  const session = state.store.get(sessionId) ??
    await state.resumer?.restore(sessionId, forwarded.url, ctx.log(), {
      ...ctx.caller,
      requestId: ctx.requestId,
      ip: String(ctx.fields["client_ip"] ?? ""),
    });
  if (session instanceof Response) return session;
  // A session is its user's: another user's token does not reach it (nor learns it exists).
  if (!session || session.kind !== "streamable" || session.principal !== ctx.caller.principal?.id) {
    return jsonRpcError(
      404,
      SESSION_NOT_FOUND,
      "Session not found: it expired or was closed; send initialize without an Mcp-Session-Id header to start a new one",
    );
  }
  const streamable = session as StreamableSession;
  const again = ctx.messages.find((m) => isRequest(m) && m.method === "initialize");
  if (again && "id" in again) {
    // The SDK refuses it with `id: null`; the answer belongs to the request that asked.
    return jsonRpcError(
      400,
      INVALID_REQUEST,
      "Invalid Request: this session is already initialized; keep using it, or send initialize " +
        "without an Mcp-Session-Id header to start a new one",
      { id: again.id as string | number },
    );
  }
  if (ctx.req.method !== "DELETE") return await inSession(state, ctx, streamable, forwarded);
  streamable.closedBy = ctx.log();
  try {
    const res = await inSession(state, ctx, streamable, forwarded);
    // A DELETE ends the session on every replica.
    if (res.ok) await state.shared?.remove(sessionId);
    return res;
  } finally {
    // A DELETE the SDK refused leaves the session open: a later close is not this request's.
    delete streamable.closedBy;
  }
}

/** A 2025-era request in stateless mode: a fresh server and transport for this request only. */
async function stateless(state: HttpState, ctx: RequestContext, forwarded: Request): Promise<Response> {
  const server = state.app.newServer({
    owner: ownerOf(state, ctx.caller),
    toolsets: ctx.toolsets,
    client: ctx.caller.clientKey,
  });
  // No session id generator: the SDK's stateless mode, one transport per request.
  const transport = new WebStandardStreamableHTTPServerTransport({ keepAliveMs: state.keepAliveMs });
  transport.onerror = (e) => state.logger.debug("transport error", { error: e.message });
  await server.connect(transport);
  state.statelessOpen.add(server);
  const done = (): void => {
    if (!state.statelessOpen.delete(server)) return;
    void server.close().catch(() => {});
    notifyDrain(state);
  };
  let res: Response;
  try {
    res = await transport.handleRequest(forwarded, { parsedBody: ctx.body });
  } catch (e) {
    done();
    throw e;
  }
  return ctx.whenSent(res, done);
}
