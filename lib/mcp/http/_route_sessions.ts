// Route: Streamable HTTP sessions (2025-era clients at /mcp with Mcp-Session-Id): a new
// session on `initialize` (newSession), every later request into its transport (inSession),
// with the bookkeeping the SDK leaves to its host (request ids in use, cancelled calls, calls in
// flight for idle expiry and shutdown).
import { WebStandardStreamableHTTPServerTransport } from "../sdk.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import type { Logger } from "../../log.ts";
import { INVALID_REQUEST, isRequest, jsonRpcError } from "./_jsonrpc.ts";
import type { Session } from "./_sessions.ts";
import { tooManySessions } from "./_answers.ts";
import { notifyDrain, RequestContext, sessionOwner } from "./_context.ts";
import type { Caller, HttpState } from "./_context.ts";
import {
  holdingStream,
  ownRequestIds,
  postedShared,
  recordOf,
  sentElsewhere,
  sessionRestorer,
} from "./shared_sessions.ts";
import type { SessionRecord, SessionRestorer, SharedCopy } from "./shared_sessions.ts";

export type RequestId = string | number;

/** A Streamable HTTP session: its transport and the calls it is answering. */
export interface StreamableSession extends Session, SharedCopy {
  kind: "streamable";
  transport: WebStandardStreamableHTTPServerTransport;
  inflight: number;
  /** The logger of the DELETE request that ends the session, so its log line has the request id. */
  closedBy?: Logger;
  /** The open POST stream of each request not answered yet, by request id. */
  calls: Map<RequestId, PostCalls>;
}

/** The requests of one POST whose answers go out on its stream. */
interface PostCalls {
  waiting: Set<RequestId>;
  /** Whether the client cancelled one of them: the SDK never answers it, so never ends the stream. */
  cancelled: boolean;
}

/**
 * Marks request `id` answered (or cancelled by the client); ends its POST stream once all of
 * that POST's requests are settled and one was cancelled, since the SDK then would not.
 */
function settle(session: StreamableSession, id: RequestId, cancelled: boolean): void {
  const post = session.calls.get(id);
  if (!post) return;
  session.calls.delete(id);
  post.waiting.delete(id);
  if (cancelled) post.cancelled = true;
  // The SDK ends a POST's stream once every request on it is answered; a cancelled one never is.
  if (post.cancelled && post.waiting.size === 0) session.transport.closeSSEStream(id);
}

function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  if (!("method" in message) || message.method !== "notifications/cancelled") return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** A request into a live session: messages are counted in flight until their answers are sent. */
export async function inSession(
  state: HttpState,
  ctx: RequestContext,
  session: StreamableSession,
  forwarded: Request,
): Promise<Response> {
  const { shared } = state;
  // Only messages count as activity: every SDK client holds a GET stream, quiet or not.
  if (ctx.req.method !== "POST") {
    const res = await session.transport.handleRequest(forwarded);
    // With Redis, notifications for the GET stream come to the replica holding it.
    return shared ? holdingStream(session, ctx.req.method, res, (done) => ctx.whenSent(res, done)) : res;
  }
  session.lastActive = state.clock.now();
  // With Redis, the client's answers to another replica's requests go there.
  if (shared && await postedShared(shared, session, ctx.messages)) return new Response(null, { status: 202 });
  const ids: RequestId[] = [];
  for (const m of ctx.messages) if (isRequest(m)) ids.push(m.id);
  // Two requests in flight with one id would have their answers crossed, and one would never
  // be answered: refuse the newcomer at once.
  const reused = ids.find((id, i) => session.calls.has(id) || ids.indexOf(id) !== i);
  if (reused !== undefined) {
    return jsonRpcError(
      400,
      INVALID_REQUEST,
      `Invalid Request: request id ${JSON.stringify(reused)} is already in use by a request still being ` +
        "answered in this session; use a new id for each request",
      { id: reused },
    );
  }
  const post: PostCalls = { waiting: new Set(ids), cancelled: false };
  for (const id of ids) session.calls.set(id, post);
  const forget = (): void => {
    for (const id of ids) if (session.calls.get(id) === post) session.calls.delete(id);
  };
  session.inflight++;
  let res: Response;
  try {
    res = await session.transport.handleRequest(forwarded, { parsedBody: ctx.body });
  } catch (e) {
    forget();
    session.inflight--;
    notifyDrain(state);
    throw e;
  }
  for (const message of ctx.messages) {
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) settle(session, cancelled, true);
  }
  return ctx.whenSent(res, () => {
    forget();
    session.inflight--;
    session.lastActive = state.clock.now();
    notifyDrain(state);
  });
}

/** Whether the missing SDK request id counter was logged (once per process). */
let sdkCounterMissing = false;

/**
 * An `initialize` without a session: a new session (within the caps), its server, its first
 * answer. `restoring`: a session another replica opened, rebuilt from its shared record with the
 * record's id (`ctx` then carries the replayed initialize).
 */
export async function newSession(
  state: HttpState,
  ctx: RequestContext,
  forwarded: Request,
  restoring?: SessionRecord,
): Promise<Response> {
  const { store, clock, keepAliveMs, logger, shared } = state;
  const caller = ctx.caller;
  const client = caller.clientKey;
  const refused = store.reserve(client);
  if (refused) return tooManySessions(state, ctx.messages, refused);
  // The id is chosen before the server exists, so the server knows whose work it does.
  const id = restoring?.id ?? crypto.randomUUID();
  const session: StreamableSession = {
    id: "",
    kind: "streamable",
    owner: client,
    ...(caller.principal ? { principal: caller.principal.id } : {}),
    lastActive: clock.now(),
    inflight: 0,
    calls: new Map(),
    outgoing: new Set(),
    standalone: false,
    transport: new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (sid) => {
        session.id = sid;
        store.add(session, restoring !== undefined);
        const opened = restoring ? "session restored from the shared store" : "session opened";
        ctx.log().info(opened, { session_id: sid, transport: "streamable-http" });
        // With Redis, the session's record goes to the shared store for the other replicas,
        // before the client is answered: its next request may reach any of them.
        if (restoring) shared?.hold(restoring);
        else return shared?.put(recordOf(sid, ctx.messages, { ...session, toolsets: ctx.toolsets }));
      },
      keepAliveMs,
    }),
    busy: () => session.inflight > 0,
    close: () => server.close(),
  };
  // The session lists the toolsets its initialize asked for, for its whole life.
  // An OAuth user owns their work across sessions and replicas; otherwise the session does.
  const server = state.app.newServer({
    owner: sessionOwner(state, caller, id),
    toolsets: ctx.toolsets,
    client: caller.clientKey,
  });
  // With Redis, copies of this session on other replicas ask the client too: their ids must differ.
  if (shared && !ownRequestIds(server) && !sdkCounterMissing) {
    sdkCounterMissing = true;
    logger.warn("the SDK's request id counter was not found: replicas' requests to one client may share ids");
  }
  session.transport.onclose = () => {
    if (!session.id) return;
    store.delete(session.id);
    shared?.forget(session.id);
    (session.closedBy ?? logger).info("session closed", {
      session_id: session.id,
      transport: "streamable-http",
    });
  };
  session.transport.onerror = (e) =>
    logger.debug("transport error", { session_id: session.id, error: e.message });
  const send = session.transport.send.bind(session.transport);
  session.transport.send = async (message, options) => {
    // With Redis, a message for the GET stream goes to the replica holding it.
    if (shared && sentElsewhere(shared, session, message, options?.relatedRequestId)) return;
    await send(message, options);
    if (("result" in message || "error" in message) && message.id !== undefined && message.id !== null) {
      settle(session, message.id, false);
    }
  };
  try {
    await server.connect(session.transport);
    const res = await inSession(state, ctx, session, forwarded);
    if (!session.id) {
      // The initialize request was refused (e.g. a wrong Accept header): nothing to keep.
      store.release(client);
      await server.close().catch(() => {});
    }
    return res;
  } catch (e) {
    if (!session.id) store.release(client);
    await server.close().catch(() => {});
    throw e;
  }
}

/** Who asks to resume a session: the caller, and the request whose id its log lines carry. */
type Resumer = Caller & { requestId: string; ip: string };

/**
 * The rebuilding of sessions another replica opened (with Redis), made once per handler; it also
 * acts on the other replicas' messages about the sessions this one holds.
 */
export function sessionResumer(state: HttpState): SessionRestorer<StreamableSession, Resumer> | undefined {
  const shared = state.shared;
  if (!shared) return undefined;
  const held = (id: string): StreamableSession | undefined => {
    const copy = state.store.peek(id);
    return copy?.kind === "streamable" ? copy as StreamableSession : undefined;
  };
  return sessionRestorer<StreamableSession, Resumer>({
    shared,
    logger: state.logger,
    held,
    open: (record, init, request, _log, asker) => {
      // The replayed initialize as a request of its own, under the asking request's id.
      const url = new URL(request.url);
      const ctx = new RequestContext(
        {
          req: request,
          url,
          path: "/mcp",
          requestId: asker.requestId,
          ip: asker.ip,
          client: asker.clientKey,
        },
        undefined,
        performance.now(),
        state,
      );
      ctx.caller = asker.principal ? { principal: asker.principal, clientKey: asker.clientKey } : {
        clientKey: asker.clientKey,
      };
      ctx.toolsets = new Set(record.toolsets);
      ctx.body = init;
      ctx.messages = [init];
      ctx.logged = true;
      return newSession(state, ctx, request, record);
    },
  });
}
