// The connection guard's (_conn_guard.ts) types: its options and counters, and where one
// connection stands (its state for deadlines and eviction), with the small helpers they need.
import type { Logger } from "../../log.ts";
import type { Refusal } from "./_conn_io.ts";

/** Connections held back from the cap after the process ran out of file descriptors. */
export const FD_RESERVE = 8;
/** The lowest a cap lowered by file-descriptor exhaustion goes (repeated exhaustion lowers it again). */
export const MIN_LOWERED_CAP = 16;
/**
 * A connection must have been sending its head, or idle, for this long before it is closed to
 * make room: a new client's head is normally in its first packet, and a client between two
 * requests of one exchange sends the next at once.
 */
export const MIN_VICTIM_AGE_MS = 250;
/**
 * The direct way: how long after its last answer a connection is still taken as busy for room
 * (Deno settles an answer once it holds it, and may still be writing it to a slow reader).
 */
export const ANSWER_SETTLE_MS = 2_000;
/** How long a cap lowered by file-descriptor exhaustion holds. */
export const LOWERED_CAP_MS = 60_000;
/**
 * How long a connection whose last answer went out keeps being read (and what arrives dropped)
 * before it is closed: closing a socket with unread input resets it, and a reset can destroy
 * the answer before the client reads it.
 */
export const LINGER_MS = 2_000;
/** Past the body timeout, so the server's own 408 answer goes out first. */
export const BODY_GRACE_MS = 1_000;
/** Longest pause of the accept loop after an error. */
export const MAX_BACKOFF_MS = 1_000;
/** Least time between two warnings of the same kind. */
export const WARN_EVERY_MS = 10_000;
/**
 * Most bytes of a connection's first request head held before it is whole (the server behind
 * the guard limits later heads, and answers 431 past `MAX_HEADER_BYTES`).
 */
export const MAX_FIRST_HEAD_BYTES = 64 * 1024;
/**
 * Bytes one read copies: from the server, an answer usually in one read (allocated with the
 * connection to the server, on the first head); from the client, requests are small, and every
 * open connection, idle or squatting, holds this one.
 */
export const BUFFER_BYTES = 64 * 1024;
export const CLIENT_BUFFER_BYTES = 16 * 1024;

/** Options for {@linkcode ConnectionGuard}. */
export interface ConnectionGuardOptions {
  /** Most connections open at once; the excess is refused (or an idle one closed). */
  maxConnections: number;
  /**
   * Time a client has for each request head: from accept, then from the first byte it sends
   * after an answer; a head has arrived when the server behind the guard dispatches it.
   */
  headerTimeoutMs: number;
  /** Time a connection may sit between requests, or with no byte moving either way. */
  idleTimeoutMs: number;
  /**
   * Time the server gives a request body: a request whose body stalls is answered 408 by the
   * server, so a busy connection is never closed for silence before that answer has gone out.
   */
  bodyTimeoutMs: number;
  logger: Logger;
  /**
   * Opens a loopback TCP connection to the HTTP server behind the guard (the proxy way: the
   * guard copies each connection's bytes). Either this or `handOff`.
   */
  connect?(): Promise<Deno.TcpConn>;
  /**
   * Gives an admitted connection to the HTTP server itself (the direct way, see _conn_direct.ts):
   * the guard then counts and times it without reading its bytes.
   */
  handOff?(conn: Deno.Conn): ServedConnection;
  /**
   * Most connections one client holds at once (0 or absent: no per-client cap), counted by
   * `clientOf(peer)`: a flood from one address cannot take every slot.
   */
  maxConnectionsPerClient?: number;
  /** The client a peer address belongs to (e.g. IPv6 by /64); default the address itself. */
  clientOf?: (peer: string) => string;
  /**
   * The client a peer belongs to for the health reserve's share and priority (e.g. IPv6 by /56,
   * wider than `clientOf`, so the /64s of one site count as one); default `clientOf`.
   */
  reserveClientOf?: (peer: string) => string;
  /** The path answered from the health reserve (see {@linkcode HEALTH_RESERVE}); default `/health`. */
  healthPath?: string;
  /** Milliseconds now; default `Date.now`. */
  now?: () => number;
}

/** A connection the HTTP server reads itself (see `ConnectionGuardOptions.handOff`). */
export interface ServedConnection {
  /** Settles once the connection has ended, however it ended. */
  finished: Promise<void>;
  /** Ends the connection at once, answers in flight or not; nothing once it has ended. */
  abort(): void;
}

/** Counters of what the guard did since it started. */
export interface GuardStats {
  /** Connections open now. */
  open: number;
  accepted: number;
  /** Connections answered 503 because every slot was busy (or their client's were). */
  refused: number;
  /** Of those, refused because their client held its per-client share. */
  refusedPerClient: number;
  /** Health probes answered from the reserve while the server was at a cap. */
  reserveServed: number;
  /** Idle or stalled connections closed to make room for a new one. */
  evicted: number;
  /** Connections closed for a late head, or for idling too long. */
  timedOut: number;
  /** Times accepting or connecting failed for lack of file descriptors. */
  fdExhausted: number;
}

/** Where a connection stands, for deadlines and eviction. */
export type State = "head" | "busy" | "idle" | "finishing";

export interface Guarded {
  client: Deno.Conn;
  peer: string;
  /** The client key its per-client cap counts under. */
  key: string;
  /** The client key the health reserve counts it under. */
  group: string;
  /**
   * Admitted over a cap, into the health reserve: only a health probe is served, anything else
   * gets this refusal.
   */
  reserve?: Refusal;
  /** Whether that refusal is for the client's own share (else the server's cap). */
  reservePerClient?: boolean;
  /** The connection to the server behind the guard, opened with the first byte (proxy way). */
  inner: Deno.TcpConn | null;
  /** The direct way: the server reading the connection. */
  direct?: ServedConnection;
  /**
   * The direct way: answers in flight that are streams (their bytes are not seen, and a stream
   * is alive however long it lasts); the others are timed from when they were made.
   */
  streaming: number;
  /** Its local address, by which the server's handler finds this connection. */
  innerKey?: string;
  /** A first head's bytes, held until it is whole (see #fromClient). */
  held?: Uint8Array | undefined;
  /** When the head being waited for began: accept, or the first byte after an answer. */
  headStartedAt: number;
  /** Bytes arrived that no request dispatched yet accounts for: a head in progress. */
  partial: boolean;
  /** When a byte last moved either way. */
  lastProgress: number;
  /**
   * When the answers last moved toward the client (or the last request was dispatched): a busy
   * connection is timed by this, so a client that stops reading cannot hold it by sending bytes.
   */
  lastSent: number;
  /** The guard is writing the server's bytes to the client (the client may be slow to take them). */
  sending: boolean;
  /** The client closed its sending side: the connection ends once its answers are out. */
  clientDone: boolean;
  /** Requests dispatched whose answers are not sent yet. */
  inflight: number;
  /** Requests dispatched so far. */
  served: number;
  /** Whether a loop is reading from the client. */
  reading: boolean;
  /** When the last answer went out; from then on the client's input is only drained. */
  finishingSince?: number;
  /** An answer to send once the server's side has ended (every earlier answer passed on). */
  pendingError?: Refusal;
  /** The reserve's probe was dispatched: the connection ends with its answer. */
  endAfterAnswer: boolean;
  closed: boolean;
}

/** What {@linkcode ConnectionGuard.dispatch} tells the handler about a request's connection. */
export interface Dispatched {
  /** The client's address. */
  peer: string;
  /** Set when the request must not be served: answer it with this and close. */
  refusal?: Refusal;
  /**
   * Whether the connection ends with this answer (a health probe from the reserve, a server
   * shutting down), asked when the answer is made: the direct way says so in the answer
   * (`Connection: close`), so the client does not send it another request.
   */
  ending(): boolean;
  /** Call once the answer has been sent, or could not be. */
  done(): void;
  /**
   * Call when the answer is made, saying whether it is a stream and whether it closes the
   * connection (`Connection: close`). The direct way times a busy connection from then (it sees
   * no byte move), a stream not at all, and ends a closing one once the answer is out; the proxy
   * way times the bytes it copies instead.
   */
  answered(stream: boolean, closing: boolean): void;
  /** The direct way: call when a part of the answer went to Deno's server (see `paced`). */
  moved(): void;
}

export function stateOf(c: Guarded): State {
  if (c.finishingSince !== undefined) return "finishing";
  // Answered, but still being copied to the client: as busy as a request in flight.
  if (c.inflight > 0 || c.sending) return "busy";
  return c.served === 0 || c.partial ? "head" : "idle";
}

/**
 * Why connection `c` is past its deadline at `now`: "finished" (its last answer went out and
 * it lingered long enough), "head" (its head is late), "silent" (idle between requests, or an
 * answer no byte of which moved: a client that stopped reading; streams send keep-alive comments
 * more often than that, and the direct way, which sees no bytes, does not time streams), or
 * undefined while it keeps its deadlines.
 */
export function overdue(
  c: Guarded,
  now: number,
  ms: { headMs: number; idleMs: number; busyMs: number },
): "finished" | "head" | "silent" | undefined {
  switch (stateOf(c)) {
    case "finishing":
      return now - c.finishingSince! > LINGER_MS ? "finished" : undefined;
    case "head":
      return now - c.headStartedAt > ms.headMs ? "head" : undefined;
    case "busy":
      return c.streaming === 0 && now - c.lastSent > ms.busyMs ? "silent" : undefined;
    default:
      return now - c.lastProgress > ms.idleMs ? "silent" : undefined;
  }
}

/** The answer to a connection over a cap of `max`: the client's own share, or the server's. */
export function overCapRefusal(max: number, ownShare: boolean): Refusal {
  return {
    status: 503,
    message: ownShare
      ? `Too many connections from your address: it holds ${max}, the most one client ` +
        `may (MCP_MAX_CONNECTIONS_PER_CLIENT). Reuse open connections (keep-alive) or close some, then retry`
      : `Too many connections: the server holds its limit of ${max} (MCP_MAX_CONNECTIONS); retry shortly`,
  };
}

export function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/**
 * Whether `bytes` hold a blank line (the end of a request head), looking from just before
 * `from`, where the bytes new since the last look begin. Only the end of the head is looked
 * for: reading the request is the server's.
 */
export function headEnded(bytes: Uint8Array, from: number): boolean {
  for (let i = Math.max(1, from - 3); i < bytes.length; i++) {
    if (bytes[i] === 10 && (bytes[i - 1] === 10 || (bytes[i - 1] === 13 && bytes[i - 2] === 10))) return true;
  }
  return false;
}

export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Counters that have counted nothing yet. */
export function emptyStats(): GuardStats {
  return {
    open: 0,
    accepted: 0,
    refused: 0,
    refusedPerClient: 0,
    reserveServed: 0,
    evicted: 0,
    timedOut: 0,
    fdExhausted: 0,
  };
}

/** A connection just accepted: `reserve` when it was admitted over a cap, for a probe only. */
export function newGuarded(
  conn: Deno.Conn,
  who: { peer: string; key: string; group: string },
  now: number,
  reserve: { refusal: Refusal; ownShare: boolean } | undefined,
): Guarded {
  try {
    (conn as Deno.TcpConn).setNoDelay?.(true);
  } catch {
    // Not a TCP socket, or already gone.
  }
  return {
    client: conn,
    ...who,
    ...(reserve ? { reserve: reserve.refusal, reservePerClient: reserve.ownShare } : {}),
    inner: null,
    streaming: 0,
    headStartedAt: now,
    partial: false,
    lastProgress: now,
    lastSent: now,
    sending: false,
    clientDone: false,
    inflight: 0,
    served: 0,
    reading: true,
    endAfterAnswer: false,
    closed: false,
  };
}

/** The start of the HTTP/2 connection preface (prior knowledge, without TLS). */
const HTTP2_PREFACE = "PRI * HTTP/2.0";

/**
 * Adds `bytes` to connection `c`'s first request head: all its bytes once the head is whole
 * (they go on to the server), "wait" for more, or the refusal to answer instead: a head past
 * MAX_FIRST_HEAD_BYTES, or HTTP/2 spoken without TLS (the guard times HTTP/1.1 exchanges;
 * HTTP/2 belongs to a TLS proxy in front).
 */
export function holdFirstHead(c: Guarded, bytes: Uint8Array): Uint8Array | "wait" | Refusal {
  const held = c.held ? concat(c.held, bytes) : bytes.slice();
  if (headEnded(held, c.held?.length ?? 0)) {
    c.held = undefined;
    if (new TextDecoder().decode(held.subarray(0, HTTP2_PREFACE.length)) !== HTTP2_PREFACE) return held;
    return {
      status: 505,
      message: "HTTP Version Not Supported: speak HTTP/1.1 here (HTTP/2 needs TLS, at a proxy in front)",
    };
  }
  if (held.length <= MAX_FIRST_HEAD_BYTES) {
    c.held = held;
    return "wait";
  }
  return {
    status: 431,
    message: `Request Header Fields Too Large: the request head exceeds ${MAX_FIRST_HEAD_BYTES} bytes`,
  };
}

/**
 * The connection to close for room: one already finishing, else the one idle the longest,
 * else the one stalled the longest in its head. Never one that only just arrived or only just
 * went idle (before `before`): in a burst, refusing the newcomer is fairer than closing a
 * connection in use. The direct way's connections count as idle only from `answeredBefore`:
 * Deno calls an answer sent once it holds it, and may still be writing it to a slow reader.
 */
export function roomVictim(
  conns: Iterable<Guarded>,
  before: number,
  eligible: (c: Guarded) => boolean,
  answeredBefore = before,
): Guarded | undefined {
  let idle: Guarded | undefined;
  let head: Guarded | undefined;
  for (const c of conns) {
    if (c.reserve || !eligible(c)) continue;
    const state = stateOf(c);
    if (state === "finishing" && (!c.direct || c.finishingSince! < answeredBefore)) return c;
    const idleSince = c.direct ? answeredBefore : before;
    if (state === "idle" && c.lastProgress < idleSince && (!idle || c.lastProgress < idle.lastProgress)) {
      idle = c;
    }
    if (state === "head" && c.headStartedAt < before && (!head || c.headStartedAt < head.headStartedAt)) {
      head = c;
    }
  }
  return idle ?? head;
}
