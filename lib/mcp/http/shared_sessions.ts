// 2025-11-25 sessions shared by replicas (docs/DEPLOYMENT.md, "Sessions across replicas"): what
// a session is lives in the shared store (Redis), so a replica that has never seen a session
// rebuilds it from its record on the first request that names it, without a new `initialize`.
// Server-to-client messages whose stream is held by another replica travel on the store's bus.
//
// The SDK has no way to build a transport from a stored session id, so a session is rebuilt
// below it: a fresh transport whose id generator returns the stored id is sent the stored
// `initialize` (and `notifications/initialized`, and the stored `logging/setLevel`) as if the
// client had sent them again, and their answers are dropped. The transport and server then hold
// the client's capabilities, identity, protocol version and log level as they did on the replica
// that opened the session (pinned by tests/mcp/http/shared_sessions_test.ts).
import type { Logger } from "../../log.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";

/** What a 2025-11-25 session is, as the shared store keeps it. */
export interface SessionRecord {
  id: string;
  /** The `protocolVersion` the client's `initialize` asked for. */
  protocolVersion: string;
  /** The client's `initialize` capabilities. */
  capabilities: Record<string, unknown>;
  /** The client's `initialize` clientInfo. */
  clientInfo: Record<string, unknown>;
  /** The level of the client's last `logging/setLevel`. */
  logLevel?: string;
  /** The toolsets the session lists. */
  toolsets: string[];
  /** The client key of whoever opened it (the per-client session cap counts it). */
  owner?: string;
  /** The OAuth user it belongs to: only their requests reach it, on any replica. */
  principal?: string;
}

/** A message between replicas about one session. */
export type SessionBusMessage =
  /** The session was deleted (DELETE): drop the local copy. */
  | { type: "closed"; id: string }
  /** The client set its log level: apply it to the local copy. */
  | { type: "level"; id: string; level: string }
  /** The client's answer to a request the server made (elicitation, sampling) from another replica. */
  | { type: "response"; id: string; message: JSONRPCMessage }
  /** A notification for the session's standalone GET stream, held by another replica. */
  | { type: "notify"; id: string; message: JSONRPCMessage };

/** The session records and bus shared by replicas. */
export interface SharedSessionStore {
  /** Writes `record` (the session opened here) and keeps it while held here. */
  put(record: SessionRecord): Promise<void>;
  /**
   * Keeps `record`, just read from the store for a copy rebuilt here, while held here; writes
   * nothing: a newer record (a log level set meanwhile) must not be overwritten with it.
   */
  hold(record: SessionRecord): void;
  /**
   * The client set the session's log level: stores it, then tells the other replicas; settles
   * once both are done (or failed), so whichever replica the client reaches next has the level:
   * one holding the session has heard it, one rebuilding it reads it.
   */
  setLevel(id: string, level: string): Promise<void>;
  /** The session had activity: refreshes its expiry, at most every few seconds. */
  touch(id: string): void;
  /** The record of `id`; undefined when there is none; "unavailable" when the store cannot answer. */
  get(id: string): Promise<SessionRecord | undefined | "unavailable">;
  /** Ends the session everywhere: removes the record and tells every replica. */
  remove(id: string): Promise<void>;
  /** This replica no longer holds the session (closed, expired here): stop refreshing it. */
  forget(id: string): void;
  /** Sends `message` to the other replicas; settles once Redis took it (or could not). */
  publish(message: SessionBusMessage): Promise<void>;
  /** Settles once every message heard from other replicas so far has reached the listeners. */
  heard(): Promise<void>;
  /** Calls `listener` with every message other replicas send; returns the unsubscribe. */
  subscribe(listener: (message: SessionBusMessage) => void): () => void;
}

/** The prefix of the ids of requests a replica sends its own copy of a session. */
export const INTERNAL_ID = "opendata-shared-";

/** Where the request ids of a copy's server start at most: well inside the integers JSON carries exactly. */
const ID_SPACE = 2 ** 48;

/**
 * Gives `server`, one replica's copy of a shared session, request ids of its own for what it asks
 * the client (elicitations, sampling): the SDK numbers them from 0 in every server, so two copies
 * of one session would both ask with id 0 and the client's answers, routed by id between
 * replicas, would reach the wrong call. The counter starts at a random point instead; the SDK
 * has no option for it, so its private counter is set, and tests/mcp/http/shared_sessions_test.ts
 * fails when an SDK upgrade renames it. Returns whether the counter was found.
 */
export function ownRequestIds(server: { server: object }): boolean {
  const protocol = server.server as { _requestMessageId?: unknown };
  if (typeof protocol._requestMessageId !== "number") return false;
  const [high, low] = crypto.getRandomValues(new Uint32Array(2));
  protocol._requestMessageId = ((high! % 2 ** 16) * 2 ** 32 + low!) % ID_SPACE;
  return true;
}

/** The record of a session opened by the `initialize` among `messages`. */
export function recordOf(
  id: string,
  messages: readonly JSONRPCMessage[],
  session: { toolsets: ReadonlySet<string>; owner?: string | undefined; principal?: string | undefined },
): SessionRecord {
  const init = messages.find((m) => "method" in m && m.method === "initialize");
  const params = (init && "params" in init ? init.params : undefined) as Record<string, unknown> | undefined;
  return {
    id,
    protocolVersion: String(params?.["protocolVersion"] ?? ""),
    capabilities: (params?.["capabilities"] ?? {}) as Record<string, unknown>,
    clientInfo: (params?.["clientInfo"] ?? {}) as Record<string, unknown>,
    toolsets: [...session.toolsets],
    ...(session.owner !== undefined ? { owner: session.owner } : {}),
    ...(session.principal !== undefined ? { principal: session.principal } : {}),
  };
}

/** The `initialize` a rebuilt session is sent in the client's stead. */
export function replayedInitialize(record: SessionRecord): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id: `${INTERNAL_ID}init`,
    method: "initialize",
    params: {
      protocolVersion: record.protocolVersion,
      capabilities: record.capabilities,
      clientInfo: record.clientInfo,
    },
  } as JSONRPCMessage;
}

/** The `logging/setLevel` request that gives a local copy the session's log level. */
export function levelRequest(level: string): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id: `${INTERNAL_ID}level-${crypto.randomUUID()}`,
    method: "logging/setLevel",
    params: { level },
  } as JSONRPCMessage;
}

/** A POST request carrying `message`, as a client would send it into session `id`. */
export function replayRequest(url: string, message: JSONRPCMessage, id?: string): Request {
  return new Request(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "accept": "application/json, text/event-stream",
      ...(id ? { "mcp-session-id": id } : {}),
    },
    body: JSON.stringify(message),
  });
}

/** The level a `logging/setLevel` among `messages` sets, if any. */
export function levelSet(messages: readonly JSONRPCMessage[]): string | undefined {
  for (const m of messages) {
    if ("method" in m && m.method === "logging/setLevel" && "id" in m) {
      const level = (m.params as { level?: unknown } | undefined)?.level;
      if (typeof level === "string") return level;
    }
  }
  return undefined;
}

/** Whether `message` is a response (a result or an error). */
export function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number } {
  return ("result" in message || "error" in message) && "id" in message &&
    (typeof message.id === "string" || typeof message.id === "number");
}

/** Whether `message` is a request the server sends the client (it has a method and an id). */
export function isOutgoingRequest(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: string | number } {
  return "method" in message && "id" in message &&
    (typeof message.id === "string" || typeof message.id === "number");
}

type RequestId = string | number;

/** What the shared-session hooks need of a local session. */
export interface SharedCopy {
  id: string;
  /** Ids of the requests this replica's server sent the client and awaits answers to. */
  outgoing: Set<RequestId>;
  /** Whether this replica holds the session's standalone GET stream now. */
  standalone: boolean;
  /** Log levels being applied to this copy, in the order heard; undefined once all are. */
  leveling?: Promise<void> | undefined;
  /** Whether another replica's log level reached this copy (newer than the record it was built from). */
  levelHeard?: boolean;
  /** The OAuth user it belongs to. */
  principal?: string;
  transport: {
    send(message: JSONRPCMessage): Promise<void>;
    onmessage?: ((message: JSONRPCMessage) => void) | undefined;
    handleRequest(req: Request, options?: { parsedBody?: unknown }): Promise<Response>;
  };
  close(): Promise<void>;
}

/** Where requests replayed into a rebuilt session claim to go (the transport does not look). */
const REPLAY_URL = "http://127.0.0.1/mcp";

/** Who asks for a session: the OAuth user, if any, and the client key. */
interface Asker {
  principal?: { id: string } | undefined;
  clientKey: string;
}

/** What {@linkcode sessionRestorer} needs of the HTTP handler. */
export interface RestorerOptions<S extends SharedCopy, C extends Asker> {
  shared: SharedSessionStore;
  logger: Logger;
  /** This replica's copy of session `id`, if it holds one. */
  held(id: string): S | undefined;
  /**
   * Opens a session from `record` as for a client's `initialize` (`init`, sent in `request`),
   * with the record's id; answers as that initialize would be answered. A refusal (no room) is
   * the answer to the client's own request: it must not carry the replayed initialize's id.
   */
  open(
    record: SessionRecord,
    init: JSONRPCMessage,
    request: Request,
    reqLogger: Logger,
    caller: C,
  ): Promise<Response>;
}

/** Rebuilds shared sessions on this replica and acts on the other replicas' messages. */
export interface SessionRestorer<S, C> {
  /**
   * Session `id` from the shared store, rebuilt here without a new `initialize`; undefined when
   * there is none or it is another user's, a Response when the store cannot answer or there is
   * no room.
   */
  restore(
    id: string,
    url: string,
    reqLogger: Logger,
    caller: C,
  ): Promise<S | Response | undefined>;
  /**
   * The rebuild of session `id` under way here, if any: the copy is held (found by id) before it
   * has its level, so the session's other requests wait for this first.
   */
  rebuilding(id: string): Promise<unknown> | undefined;
}

/**
 * The rebuilding of shared sessions on this replica (see the module comment), once at a time per
 * session, and the listener of the other replicas' messages about the sessions it holds.
 */
export function sessionRestorer<S extends SharedCopy, C extends Asker>(
  o: RestorerOptions<S, C>,
): SessionRestorer<S, C> {
  const pending = new Map<string, Promise<S | Response | undefined>>();
  const replay = async (session: S, message: JSONRPCMessage): Promise<void> => {
    const req = replayRequest(REPLAY_URL, message, session.id);
    await (await session.transport.handleRequest(req, { parsedBody: message })).text();
  };
  o.shared.subscribe((m) => {
    const copy = o.held(m.id);
    if (!copy) return;
    void onBusMessage(m, copy, (r) => replay(copy, r)).catch((e) =>
      o.logger.debug("shared session message failed", { session_id: m.id, error: String(e) })
    );
  });
  const rebuild = async (
    id: string,
    url: string,
    reqLogger: Logger,
    caller: C,
  ): Promise<S | Response | undefined> => {
    const record = await o.shared.get(id);
    if (record === "unavailable") {
      return jsonRpcError(
        503,
        SERVER_ERROR,
        "Service Unavailable: the shared session store (Redis) cannot be reached to resume this session; " +
          "retry after the Retry-After delay, the session is kept",
        { headers: { "Retry-After": "1" } },
      );
    }
    if (!record || record.principal !== caller.principal?.id) return undefined;
    const init = replayedInitialize(record);
    const owner = { ...caller, clientKey: record.owner ?? caller.clientKey };
    const res = await o.open(record, init, replayRequest(url, init), reqLogger, owner);
    const session = o.held(id);
    if (!session) return res.status === 429 || res.status === 503 ? res : undefined;
    await res.text();
    await replay(session, { jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage);
    // A level set elsewhere after the read above, before this copy was held, reached no one here:
    // read again (a level is stored before it is published). One heard since is newer still.
    const latest = await o.shared.get(id);
    // Kept only while the copy is: one closed meanwhile must not be held again. A level heard
    // meanwhile is newer than this read, and the store's record already follows it.
    const current = typeof latest === "object" && latest.principal === record.principal;
    if (current && o.held(id) === session && !session.levelHeard) o.shared.hold(latest);
    const level = current ? latest.logLevel : record.logLevel;
    if (level && !session.levelHeard) await applyLevel(session, level, (m) => replay(session, m));
    return session;
  };
  return {
    async restore(id, url, reqLogger, caller) {
      const running = pending.get(id);
      if (running) {
        const done = await running;
        // A refusal answers its own request only; another user's request learns nothing.
        return done instanceof Response || done?.principal !== caller.principal?.id ? undefined : done;
      }
      const attempt = rebuild(id, url, reqLogger, caller).finally(() => pending.delete(id));
      pending.set(id, attempt);
      return await attempt;
    },
    rebuilding: (id) => pending.get(id),
  };
}

/**
 * Whether `message`, about to be sent into `copy`, goes to another replica instead: a message
 * of no request (it would take the standalone GET stream) when this replica does not hold that
 * stream. The replica that holds it sends it (`onBusMessage`).
 */
export function sentElsewhere(
  shared: SharedSessionStore,
  copy: SharedCopy,
  message: JSONRPCMessage,
  relatedRequestId: RequestId | undefined,
): boolean {
  // The answer to a request this replica makes is awaited here, whichever stream carries it.
  if (isOutgoingRequest(message)) copy.outgoing.add(message.id);
  if ("method" in message && message.method === "notifications/cancelled") {
    const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    if (id !== undefined) copy.outgoing.delete(id);
  }
  if (relatedRequestId !== undefined || isResponse(message) || copy.standalone || !copy.id) return false;
  void shared.publish({ type: "notify", id: copy.id, message });
  return true;
}

/**
 * Sends the client's answers among `messages` that no request of this replica awaits to the
 * other replicas (the request was made there); returns whether nothing is left for this one.
 */
export function forwardAnswers(
  shared: SharedSessionStore,
  copy: SharedCopy,
  messages: readonly JSONRPCMessage[],
): boolean {
  let forwarded = 0;
  for (const m of messages) {
    if (!isResponse(m)) continue;
    if (copy.outgoing.delete(m.id)) continue;
    void shared.publish({ type: "response", id: copy.id, message: m });
    forwarded++;
  }
  return forwarded > 0 && forwarded === messages.length;
}

/**
 * What a POST into `copy` means for the shared session: answers to requests another replica
 * made go there (true: nothing is left for this one), activity keeps the record, a new log level
 * is stored and sent to the other replicas before the request is answered.
 */
export async function postedShared(
  shared: SharedSessionStore,
  copy: SharedCopy,
  messages: readonly JSONRPCMessage[],
): Promise<boolean> {
  if (forwardAnswers(shared, copy, messages)) return true;
  // A log level set through another replica was answered once published: what this replica
  // heard before this request applies first, or a call here would log at the old level.
  await shared.heard();
  if (copy.leveling) await copy.leveling;
  shared.touch(copy.id);
  const level = levelSet(messages);
  if (level !== undefined) await shared.setLevel(copy.id, level);
  return false;
}

/**
 * `res`, the answer to a GET or DELETE into `copy`: when a GET opens the standalone stream, `copy` holds it
 * until it ends (`whenDone` calls back then), so notifications for it come to this replica.
 */
export function holdingStream(
  copy: SharedCopy,
  method: string,
  res: Response,
  whenDone: (done: () => void) => Response,
): Response {
  if (method !== "GET" || !res.ok) return res;
  copy.standalone = true;
  return whenDone(() => copy.standalone = false);
}

/** Sends another replica's message on the GET stream held here; its answer is awaited there. */
async function notify(copy: SharedCopy, message: JSONRPCMessage): Promise<void> {
  await copy.transport.send(message);
  if (isOutgoingRequest(message)) copy.outgoing.delete(message.id);
}

/**
 * Sends `copy` the client's `logging/setLevel` for `level` after the levels already on their way,
 * so the last one set wins; the client's next request waits for them (`postedShared`).
 */
function applyLevel(
  copy: SharedCopy,
  level: string,
  replay: (m: JSONRPCMessage) => Promise<void>,
): Promise<void> {
  const applied = (copy.leveling ?? Promise.resolve()).then(() => replay(levelRequest(level)));
  const settled: Promise<void> = applied.catch(() => {}).then(() => {
    if (copy.leveling === settled) copy.leveling = undefined;
  });
  copy.leveling = settled;
  return applied;
}

/**
 * Acts on a message from another replica about `copy`, this replica's copy of the session:
 * `replay` sends the copy a request as if its client had (the log level).
 */
export function onBusMessage(
  message: SessionBusMessage,
  copy: SharedCopy,
  replay: (m: JSONRPCMessage) => Promise<void>,
): Promise<void> {
  switch (message.type) {
    case "closed":
      return copy.close();
    case "level":
      copy.levelHeard = true;
      return applyLevel(copy, message.level, replay);
    case "response":
      if (isResponse(message.message) && copy.outgoing.delete(message.message.id)) {
        copy.transport.onmessage?.(message.message);
      }
      return Promise.resolve();
    case "notify":
      return copy.standalone ? notify(copy, message.message) : Promise.resolve();
  }
}
