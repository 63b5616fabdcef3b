// The connection guard: accepts TCP connections in front of the HTTP server, because
// `Deno.serve` has no connection cap, no deadline for a request head and no idle timeout, and
// its accept loop ends the server on EOF of descriptors (denoland/deno#10148, #3515). The guard
// caps open connections, times request heads and idle keep-alive connections, keeps a reserve
// for health probes and survives running out of file descriptors, without reading HTTP: it
// copies each connection's bytes to the real server (`Deno.serve`, the one HTTP parser) over a
// loopback connection of its own, and learns where each connection stands from that server's
// handler: {@linkcode ConnectionGuard.dispatch} when a request head has been parsed, and the
// `done` it returns when the answer has been sent. The handler finds the connection, and with
// it the client's address, by the loopback address the guard connected from.
//
// Longer than the 500 lines the house keeps to, on purpose: ConnectionGuard is one state machine
// per connection (head, busy, idle, finishing) over the guard's shared counts, reserves and
// timers, which every transition reads. Its socket I/O is in _conn_io.ts.
import type { Logger } from "../../log.ts";
import {
  answerAndClose,
  closeQuietly,
  drain,
  errorResponse,
  errorText,
  isFdExhaustion,
  writeAll,
} from "./_conn_io.ts";
import type { Refusal } from "./_conn_io.ts";

export { isFdExhaustion } from "./_conn_io.ts";
export type { Refusal } from "./_conn_io.ts";

/** Connections held back from the cap after the process ran out of file descriptors. */
const FD_RESERVE = 8;
/** The lowest a cap lowered by file-descriptor exhaustion goes (repeated exhaustion lowers it again). */
const MIN_LOWERED_CAP = 16;
/**
 * A connection must have been sending its head, or idle, for this long before it is closed to
 * make room: a new client's head is normally in its first packet, and a client between two
 * requests of one exchange sends the next at once.
 */
const MIN_VICTIM_AGE_MS = 250;
/** How long a cap lowered by file-descriptor exhaustion holds. */
const LOWERED_CAP_MS = 60_000;
/**
 * How long a connection whose last answer went out keeps being read (and what arrives dropped)
 * before it is closed: closing a socket with unread input resets it, and a reset can destroy
 * the answer before the client reads it.
 */
const LINGER_MS = 2_000;
/** Past the body timeout, so the server's own 408 answer goes out first. */
const BODY_GRACE_MS = 1_000;
/**
 * Connections over a cap kept in reserve until their first request head shows whether it is a
 * health probe (`GET`/`HEAD /health`, passed on) or not (refused), so a full server still
 * answers its health check; and how many of those one client may hold (IPv6 counted by the
 * wider `reserveClientOf` group, so the /64s of one site share two).
 */
export const HEALTH_RESERVE = 16;
const HEALTH_RESERVE_PER_CLIENT = 2;
/**
 * Time a reserve connection has to send its head: a probe sends it in its first packet, so the
 * guard has usually read it by the time it looks; far shorter than the normal head deadline.
 */
const RESERVE_HEAD_MS = 500;
/**
 * After this long without a complete head, a reserve connection gives its slot to any newcomer:
 * a probe's head has arrived by then, a squatter's never does. A client that holds more regular
 * connections than the newcomer's loses its waiting reserve slots at once (see #reserveVictim).
 */
const RESERVE_GRACE_MS = 100;
/**
 * How long a client whose reserve connection was closed without a probe's head (evicted or
 * timed out) counts as a squatter: its reserve connections then give way at once to a client
 * that is not one, however fast it reconnects. Remembered for this many clients at most.
 */
const SQUATTER_MEMORY_MS = 10_000;
const MAX_SQUATTERS = 10_000;
/** Longest pause of the accept loop after an error. */
const MAX_BACKOFF_MS = 1_000;
/** Least time between two warnings of the same kind. */
const WARN_EVERY_MS = 10_000;
/**
 * Most bytes of a connection's first request head held before it is whole (the server behind
 * the guard limits later heads, and answers 431 past `MAX_HEADER_BYTES`).
 */
const MAX_FIRST_HEAD_BYTES = 64 * 1024;
/** Bytes one read copies; a tool call's request and answer usually fit in one. */
const BUFFER_BYTES = 64 * 1024;

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
  /** Opens a loopback TCP connection to the HTTP server behind the guard. */
  connect(): Promise<Deno.TcpConn>;
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
type State = "head" | "busy" | "idle" | "finishing";

interface Guarded {
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
  /** The connection to the server behind the guard, opened with the first byte. */
  inner: Deno.TcpConn | null;
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
  /** Call once the answer has been sent, or could not be. */
  done(): void;
}

/**
 * Accepts connections on `listener` and passes each one's requests to the server `connect`
 * reaches, within the cap and the deadlines of `options`.
 */
export class ConnectionGuard {
  #listener: Deno.Listener;
  #options: ConnectionGuardOptions;
  #now: () => number;
  #conns = new Set<Guarded>();
  /** Connections by the local address of their connection to the server behind the guard. */
  #byInner = new Map<string, Guarded>();
  #stats: GuardStats = {
    open: 0,
    accepted: 0,
    refused: 0,
    refusedPerClient: 0,
    reserveServed: 0,
    evicted: 0,
    timedOut: 0,
    fdExhausted: 0,
  };
  #ceiling = Infinity;
  #ceilingUntil = 0;
  #warnedAt: Record<string, number> = {};
  #stopped = false;
  #emptyWaiters = new Set<() => void>();
  /** Connections counted against the caps (the reserve's are not), by client key. */
  #byClient = new Map<string, number>();
  #regular = 0;
  /** Connections counted against the caps, by reserve group (see `reserveClientOf`). */
  #regularByGroup = new Map<string, number>();
  /** Reserve groups seen squatting, until when (see SQUATTER_MEMORY_MS). */
  #squatters = new Map<string, number>();
  /** Reserve connections, in all and by client key. */
  #reserveByClient = new Map<string, number>();
  #reserveCount = 0;
  #sweeper: ReturnType<typeof setInterval>;

  constructor(listener: Deno.Listener, options: ConnectionGuardOptions) {
    this.#listener = listener;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const shortest = Math.min(options.headerTimeoutMs, options.idleTimeoutMs);
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(1_000, Math.max(25, shortest / 4)));
  }

  /** Counters so far. */
  stats(): GuardStats {
    return { ...this.#stats, open: this.#conns.size };
  }

  /** Accepts connections until {@linkcode stopAccepting}; never rejects. */
  async serve(): Promise<void> {
    let backoff = 10;
    while (!this.#stopped) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch (e) {
        if (this.#stopped || e instanceof Deno.errors.BadResource) break;
        if (isFdExhaustion(e)) this.#exhausted();
        else this.#warn("accept", "accepting a connection failed", { error: errorText(e) });
        // Accepting again at once would spin while the cause lasts.
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        continue;
      }
      backoff = 10;
      this.#admit(conn);
    }
  }

  /** Stops accepting: new connections are refused by the system from now on. */
  stopAccepting(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
  }

  /**
   * Waits until every connection has closed (the server behind the guard closes its ends on
   * shutdown, and the guard passes on what it wrote first), or `ms` milliseconds; true if all did.
   */
  async settled(ms: number): Promise<boolean> {
    if (this.#conns.size === 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = await Promise.race([
      new Promise<boolean>((resolve) => this.#emptyWaiters.add(() => resolve(true))),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]);
    clearTimeout(timer);
    return done;
  }

  /** Stops accepting and closes every connection at once. */
  closeAll(): void {
    this.stopAccepting();
    clearInterval(this.#sweeper);
    for (const c of [...this.#conns]) this.#close(c);
  }

  /**
   * Tells the guard the process ran out of file descriptors elsewhere (e.g. the server behind
   * it could not accept): it holds fewer connections for a while.
   */
  exhausted(): void {
    this.#exhausted();
  }

  #admit(conn: Deno.Conn): void {
    this.#stats.accepted++;
    const peer = (conn.remoteAddr as Deno.NetAddr).hostname ?? "unknown";
    const key = this.#options.clientOf?.(peer) ?? peer;
    let refusal: Refusal | undefined;
    let ownShare = false;
    const perClient = this.#options.maxConnectionsPerClient ?? 0;
    while (perClient > 0 && (this.#byClient.get(key) ?? 0) >= perClient) {
      // The client's own idle connection may go; another client's never does for this one.
      const own = this.#victim((c) => c.key === key);
      if (!own) {
        refusal = {
          status: 503,
          message: `Too many connections from your address: it holds ${perClient}, the most one client ` +
            `may (MCP_MAX_CONNECTIONS_PER_CLIENT). Reuse open connections (keep-alive) or close some, then retry`,
        };
        ownShare = true;
        break;
      }
      this.#stats.evicted++;
      this.#close(own);
    }
    while (!refusal && this.#regular >= this.#cap()) {
      const victim = this.#victim();
      if (!victim) {
        refusal = {
          status: 503,
          message: `Too many connections: the server holds its limit of ${this.#cap()} ` +
            `(MCP_MAX_CONNECTIONS); retry shortly`,
        };
        break;
      }
      this.#stats.evicted++;
      this.#close(victim);
    }
    const group = this.#options.reserveClientOf?.(peer) ?? key;
    if (refusal && !this.#roomInReserve(group)) {
      this.#refused(ownShare);
      void answerAndClose(conn, refusal);
      return;
    }
    const reserveHeld = this.#reserveByClient.get(group) ?? 0;
    const now = this.#now();
    const c: Guarded = {
      client: conn,
      peer,
      key,
      group,
      ...(refusal ? { reserve: refusal, reservePerClient: ownShare } : {}),
      inner: null,
      headStartedAt: now,
      partial: false,
      lastProgress: now,
      inflight: 0,
      served: 0,
      reading: true,
      endAfterAnswer: false,
      closed: false,
    };
    try {
      (conn as Deno.TcpConn).setNoDelay?.(true);
    } catch {
      // Not a TCP socket, or already gone.
    }
    this.#conns.add(c);
    if (refusal) {
      this.#reserveCount++;
      this.#reserveByClient.set(group, reserveHeld + 1);
    } else {
      this.#regular++;
      this.#byClient.set(key, (this.#byClient.get(key) ?? 0) + 1);
      this.#regularByGroup.set(group, (this.#regularByGroup.get(group) ?? 0) + 1);
    }
    void this.#fromClient(c);
  }

  #refused(ownShare: boolean): void {
    this.#stats.refused++;
    if (ownShare) this.#stats.refusedPerClient++;
    this.#warn(
      ownShare ? "client" : "full",
      ownShare
        ? "a client reached its connection share: refusing its new connections"
        : "connection limit reached: refusing new connections",
      {
        max_connections: this.#cap(),
        max_connections_per_client: this.#options.maxConnectionsPerClient ?? 0,
      },
    );
  }

  /**
   * Whether `group` may take a reserve slot, making room if needed: its own share is two, and a
   * full reserve gives up a slot whose holder has not sent a probe's head (see #reserveVictim).
   */
  #roomInReserve(group: string): boolean {
    while ((this.#reserveByClient.get(group) ?? 0) >= HEALTH_RESERVE_PER_CLIENT) {
      const own = this.#reserveVictim(group, (c) => c.group === group);
      if (!own) return false;
      this.#evictSquatter(own);
    }
    while (this.#reserveCount >= HEALTH_RESERVE) {
      const other = this.#reserveVictim(group);
      if (!other) return false;
      this.#evictSquatter(other);
    }
    return true;
  }

  /** Closes a reserve connection that sent no probe's head, and remembers its client for it. */
  #evictSquatter(c: Guarded): void {
    this.#stats.evicted++;
    this.#markSquatter(c.group);
    this.#close(c);
  }

  #markSquatter(group: string): void {
    this.#squatters.delete(group);
    if (this.#squatters.size >= MAX_SQUATTERS) {
      const oldest = this.#squatters.keys().next().value;
      if (oldest !== undefined) this.#squatters.delete(oldest);
    }
    this.#squatters.set(group, this.#now() + SQUATTER_MEMORY_MS);
  }

  /**
   * How strongly a group's reserve connections hold their slots, lowest first: a squatter's
   * weakest of all, then by the regular connections the group holds.
   */
  #reserveRank(group: string): number {
    const load = this.#regularByGroup.get(group) ?? 0;
    return (this.#squatters.get(group) ?? 0) > this.#now() ? load + 1e9 : load;
  }

  /**
   * The reserve connection to close for a newcomer of `group`: one still waiting for its first
   * head whose client ranks above the newcomer's (see #reserveRank: a squatter's, or a flooder's,
   * gives way at once to a client that is neither), the highest first; else the oldest waiting
   * past {@linkcode RESERVE_GRACE_MS}. A probe whose head has arrived is never closed, so
   * squatters cannot push a probe out before it is served.
   */
  #reserveVictim(group: string, eligible: (c: Guarded) => boolean = () => true): Guarded | undefined {
    const graceBefore = this.#now() - RESERVE_GRACE_MS;
    const mine = this.#reserveRank(group);
    let heaviest: Guarded | undefined;
    let heaviestLoad = mine;
    let stale: Guarded | undefined;
    for (const c of this.#conns) {
      if (!c.reserve || c.served > 0 || c.finishingSince !== undefined || !eligible(c)) continue;
      const load = this.#reserveRank(c.group);
      if (
        load > heaviestLoad || (heaviest && load === heaviestLoad && c.headStartedAt < heaviest.headStartedAt)
      ) {
        heaviest = c;
        heaviestLoad = load;
      }
      if (c.headStartedAt <= graceBefore && (!stale || c.headStartedAt < stale.headStartedAt)) stale = c;
    }
    return heaviest ?? stale;
  }

  /**
   * Called by the server behind the guard when it has parsed a request head, with the address
   * its connection came from: the connection that request arrived on, and what to do with it.
   * Undefined when no connection of the guard's came from there (something else reached the
   * private port).
   */
  dispatch(from: { hostname: string; port: number }, method: string, path: string): Dispatched | undefined {
    const c = this.#byInner.get(`${from.hostname}:${from.port}`);
    if (!c || c.closed) return undefined;
    c.partial = false;
    c.served++;
    c.inflight++;
    c.lastProgress = this.#now();
    let ended = false;
    const done = (): void => {
      if (ended) return;
      ended = true;
      c.inflight--;
      c.lastProgress = this.#now();
      if (c.inflight === 0 && c.endAfterAnswer) this.#endInner(c);
    };
    if (c.reserve) {
      // One health probe per reserve connection; the connection ends with its answer.
      const probe = c.served === 1 && (method === "GET" || method === "HEAD") &&
        path === (this.#options.healthPath ?? "/health");
      c.endAfterAnswer = true;
      if (!probe) {
        this.#refused(c.reservePerClient === true);
        return { peer: c.peer, refusal: c.reserve, done };
      }
      this.#stats.reserveServed++;
    }
    return { peer: c.peer, done };
  }

  /** The connection limit now: lower for a while after the process ran out of descriptors. */
  #cap(): number {
    const max = this.#options.maxConnections;
    return this.#now() < this.#ceilingUntil ? Math.min(max, this.#ceiling) : max;
  }

  /**
   * The connection to close for room: one already finishing, else the one idle the longest,
   * else the one stalled the longest in its head. Never one that only just arrived or only just
   * went idle: in a burst, refusing the newcomer is fairer than closing a connection in use.
   */
  #victim(eligible: (c: Guarded) => boolean = () => true): Guarded | undefined {
    const before = this.#now() - Math.min(MIN_VICTIM_AGE_MS, this.#options.headerTimeoutMs / 2);
    let idle: Guarded | undefined;
    let head: Guarded | undefined;
    for (const c of this.#conns) {
      if (c.reserve || !eligible(c)) continue;
      const state = stateOf(c);
      if (state === "finishing") return c;
      if (state === "idle" && c.lastProgress < before && (!idle || c.lastProgress < idle.lastProgress)) {
        idle = c;
      }
      if (state === "head" && c.headStartedAt < before && (!head || c.headStartedAt < head.headStartedAt)) {
        head = c;
      }
    }
    return idle ?? head;
  }

  #exhausted(): void {
    this.#stats.fdExhausted++;
    const open = this.#conns.size;
    this.#ceiling = Math.max(Math.min(MIN_LOWERED_CAP, this.#options.maxConnections), open - FD_RESERVE);
    this.#ceilingUntil = this.#now() + LOWERED_CAP_MS;
    // Free descriptors now, so connections queued in the kernel can be taken (and refused).
    for (let i = 0; i < FD_RESERVE; i++) {
      const victim = this.#victim();
      if (!victim) break;
      this.#stats.evicted++;
      this.#close(victim);
    }
    this.#warn(
      "fd",
      "out of file descriptors: holding fewer connections for a while; raise the limit (ulimit -n) " +
        "or lower server.max_connections",
      { open_connections: open, max_connections: this.#cap(), for_s: LOWERED_CAP_MS / 1000 },
    );
  }

  async #fromClient(c: Guarded): Promise<void> {
    const buf = new Uint8Array(BUFFER_BYTES);
    try {
      for (;;) {
        const n = await c.client.read(buf);
        if (n === null) {
          // A half-closed client may still wait for its answers: the server behind the guard is
          // told the same way, answers what it has, and closes, which ends the connection.
          if (c.inner && c.finishingSince === undefined) this.#endInner(c);
          else this.#close(c);
          return;
        }
        if (c.finishingSince !== undefined || c.pendingError) continue;
        const now = this.#now();
        c.lastProgress = now;
        if (!c.partial && c.inflight === 0) {
          // A head begins: its deadline runs from here (from accept, for the first).
          c.partial = true;
          if (c.served > 0) c.headStartedAt = now;
        }
        let bytes: Uint8Array = buf.subarray(0, n);
        if (!c.inner) {
          // Until its first head is whole, a connection costs one descriptor, not three.
          const held = c.held ? concat(c.held, bytes) : bytes.slice();
          if (!headEnded(held, c.held?.length ?? 0)) {
            if (held.length > MAX_FIRST_HEAD_BYTES) {
              await this.#refuse(c, {
                status: 431,
                message:
                  `Request Header Fields Too Large: the request head exceeds ${MAX_FIRST_HEAD_BYTES} bytes`,
              });
              continue;
            }
            c.held = held;
            continue;
          }
          c.held = undefined;
          bytes = held;
        }
        const inner = c.inner ?? await this.#open(c);
        if (!inner) return;
        try {
          await writeAll(inner, bytes);
        } catch {
          // The server closed its side (an answer with `Connection: close`): what it wrote is
          // still passed on by #fromServer, which then ends the connection.
          c.finishingSince ??= this.#now();
          continue;
        }
        c.lastProgress = this.#now();
      }
    } catch {
      this.#close(c);
    } finally {
      c.reading = false;
    }
  }

  async #fromServer(c: Guarded, inner: Deno.Conn): Promise<void> {
    const buf = new Uint8Array(BUFFER_BYTES);
    try {
      for (;;) {
        const n = await inner.read(buf);
        if (n === null) break;
        c.lastProgress = this.#now();
        await writeAll(c.client, buf.subarray(0, n));
        c.lastProgress = this.#now();
      }
    } catch {
      // The client or the server went away: nothing more to pass on.
      this.#close(c);
      return;
    }
    // Every answer the server wrote has been passed on.
    if (c.pendingError) await this.#refuse(c, c.pendingError);
    else this.#finish(c);
  }

  async #open(c: Guarded): Promise<Deno.TcpConn | null> {
    try {
      const inner = await this.#options.connect();
      if (c.closed) {
        inner.close();
        return null;
      }
      try {
        inner.setNoDelay(true);
      } catch {
        // Already gone: the first write says so.
      }
      const local = inner.localAddr as Deno.NetAddr;
      c.inner = inner;
      c.innerKey = `${local.hostname}:${local.port}`;
      this.#byInner.set(c.innerKey, c);
      void this.#fromServer(c, inner);
      return inner;
    } catch (e) {
      if (isFdExhaustion(e)) this.#exhausted();
      else this.#warn("connect", "cannot reach the HTTP server behind the guard", { error: errorText(e) });
      await this.#refuse(c, {
        status: 503,
        message: "Service Unavailable: the server is at its connection limit; retry shortly",
      });
      return null;
    }
  }

  /**
   * Tells the server behind the guard that no more requests come on this connection: it sends
   * what it still has and closes, and #fromServer then ends the connection.
   */
  #endInner(c: Guarded): void {
    c.finishingSince ??= this.#now();
    if (!c.inner) {
      this.#finish(c);
      return;
    }
    c.inner.closeWrite().catch(() => this.#close(c));
  }

  /**
   * Answers `error` with `Connection: close` once every answer the server behind the guard
   * wrote has been passed on (so the two never mix), then finishes the connection.
   */
  #refuseAfterAnswers(c: Guarded, error: Refusal): void {
    if (c.inner) {
      c.pendingError = error;
      this.#endInner(c);
    } else {
      void this.#refuse(c, error);
    }
  }

  /** Answers `error` with `Connection: close`, then finishes the connection. */
  async #refuse(c: Guarded, error: Refusal): Promise<void> {
    if (c.closed) return;
    c.finishingSince ??= this.#now();
    try {
      await writeAll(c.client, errorResponse(error));
    } catch {
      this.#close(c);
      return;
    }
    this.#finish(c);
  }

  /** Ends a connection whose last answer went out: FIN first, then drain until the client closes. */
  #finish(c: Guarded): void {
    if (c.closed) return;
    c.finishingSince ??= this.#now();
    if (c.inner) closeQuietly(c.inner);
    c.client.closeWrite().catch(() => this.#close(c));
    if (!c.reading) {
      c.reading = true;
      void drain(c.client).finally(() => this.#close(c));
    }
  }

  #sweep(): void {
    const now = this.#now();
    const { headerTimeoutMs, idleTimeoutMs } = this.#options;
    const busyMs = Math.max(idleTimeoutMs, this.#options.bodyTimeoutMs + BODY_GRACE_MS);
    for (const [group, until] of this.#squatters) if (until <= now) this.#squatters.delete(group);
    const reserveHeadMs = Math.min(headerTimeoutMs, RESERVE_HEAD_MS);
    for (const c of [...this.#conns]) {
      const state = stateOf(c);
      const headMs = c.reserve ? reserveHeadMs : headerTimeoutMs;
      if (state === "finishing") {
        if (now - c.finishingSince! > LINGER_MS) this.#close(c);
      } else if (state === "head" && now - c.headStartedAt > headMs) {
        this.#stats.timedOut++;
        if (c.reserve) this.#markSquatter(c.group);
        // A client that sent nothing gets nothing; one stuck in its head is told why.
        if (c.partial) {
          this.#refuseAfterAnswers(c, {
            status: 408,
            message: `Request Timeout: the request head did not arrive within ${headMs / 1000} s`,
          });
        } else {
          this.#close(c);
        }
      } else if (state !== "head" && now - c.lastProgress > (state === "busy" ? busyMs : idleTimeoutMs)) {
        // Idle between requests, or an answer no byte of which moved (a client that stopped
        // reading); streams send keep-alive comments more often than this.
        this.#stats.timedOut++;
        this.#close(c);
      }
    }
  }

  #close(c: Guarded): void {
    if (c.closed) return;
    c.closed = true;
    this.#conns.delete(c);
    if (c.reserve) {
      decrement(this.#reserveByClient, c.group);
      this.#reserveCount--;
    } else {
      decrement(this.#byClient, c.key);
      decrement(this.#regularByGroup, c.group);
      this.#regular--;
    }
    closeQuietly(c.client);
    if (c.inner) closeQuietly(c.inner);
    if (c.innerKey) this.#byInner.delete(c.innerKey);
    if (this.#conns.size === 0) {
      for (const resolve of this.#emptyWaiters) resolve();
      this.#emptyWaiters.clear();
    }
  }

  #warn(kind: string, msg: string, fields: Record<string, unknown>): void {
    const now = this.#now();
    if (now - (this.#warnedAt[kind] ?? -Infinity) < WARN_EVERY_MS) return;
    this.#warnedAt[kind] = now;
    this.#options.logger.warn(msg, { ...fields, ...this.stats() });
  }
}

function stateOf(c: Guarded): State {
  if (c.finishingSince !== undefined) return "finishing";
  if (c.inflight > 0) return "busy";
  return c.served === 0 || c.partial ? "head" : "idle";
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/**
 * Whether `bytes` hold a blank line (the end of a request head), looking from just before
 * `from`, where the bytes new since the last look begin. Only the end of the head is looked
 * for: reading the request is the server's.
 */
function headEnded(bytes: Uint8Array, from: number): boolean {
  for (let i = Math.max(1, from - 3); i < bytes.length; i++) {
    if (bytes[i] === 10 && (bytes[i - 1] === 10 || (bytes[i - 1] === 13 && bytes[i - 2] === 10))) return true;
  }
  return false;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
