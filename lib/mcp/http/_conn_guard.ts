// The connection guard: accepts TCP connections in front of the HTTP server, because
// `Deno.serve` has no connection cap, no deadline for a request head and no idle timeout, and
// its accept loop ends the server on EMFILE (denoland/deno#10148, #3515). The guard caps open
// connections, times request heads, bodies and idle keep-alive connections, survives running
// out of file descriptors, and hands each connection's bytes to the real server, stamping every
// request head with the client's address.
//
// Longer than the 500 lines the house keeps to, on purpose: ConnectionGuard is one state machine
// per connection (head, body, busy, idle, finishing) over the guard's shared counts, reserves and
// timers, which every transition reads. Its socket I/O is in _conn_io.ts, HTTP/1.1 framing in
// _http1.ts.
import type { Logger } from "../../log.ts";
import { RequestFramer, ResponseFramer } from "./_http1.ts";
import type { FramingError, RequestHead } from "./_http1.ts";
import {
  answerAndClose,
  closeQuietly,
  drain,
  errorResponse,
  errorText,
  isFdExhaustion,
  join,
  writeAll,
} from "./_conn_io.ts";

export { isFdExhaustion } from "./_conn_io.ts";

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
/** Past the body timeout, so the handler's own 408 answer goes out first. */
const BODY_GRACE_MS = 1_000;
/**
 * How long a connection whose last answer went out keeps being read (and what arrives dropped)
 * before it is closed: closing a socket with unread input resets it, and a reset can destroy
 * the answer before the client reads it.
 */
const LINGER_MS = 2_000;
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
const BUFFER_BYTES = 16 * 1024;

/** Options for {@linkcode ConnectionGuard}. */
export interface ConnectionGuardOptions {
  /** Most connections open at once; the excess is refused (or an idle one closed). */
  maxConnections: number;
  /** Time a client has for each request head (from accept, then from the head's first byte). */
  headerTimeoutMs: number;
  /** Time a client has for a request body; the connection closes shortly after. */
  bodyTimeoutMs: number;
  /** Time a connection may sit between requests, or with no byte moving either way. */
  idleTimeoutMs: number;
  logger: Logger;
  /** Opens a connection to the HTTP server behind the guard. */
  connect(): Promise<Deno.Conn>;
  /** Name (lower case) of the header each request head is stamped with. */
  stampName: string;
  /** The stamp's value for a client address. */
  stampValue(peer: string): string;
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
  /** Most bytes of one request head. Default 64 KiB. */
  maxHeadBytes?: number;
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
  /** Connections closed for a late head or body, or for idling too long. */
  timedOut: number;
  /** Requests refused for their framing (400, 405, 431, 501, 505). */
  malformed: number;
  /** Times accepting or connecting failed for lack of file descriptors. */
  fdExhausted: number;
}

/** Where a connection stands, for deadlines and eviction. */
type State = "head" | "body" | "busy" | "idle" | "finishing";

interface Guarded {
  client: Deno.Conn;
  peer: string;
  /** The client key its per-client cap counts under. */
  key: string;
  /** The client key the health reserve counts it under. */
  group: string;
  /**
   * Admitted over a cap, into the health reserve: only a health probe is passed on, anything
   * else gets this refusal.
   */
  reserve?: FramingError;
  /** Whether that refusal is for the client's own share (else the server's cap). */
  reservePerClient?: boolean;
  requests: RequestFramer;
  responses: ResponseFramer;
  inner: Deno.Conn | null;
  headStartedAt: number;
  bodyStartedAt: number;
  /** When a byte last moved either way. */
  lastProgress: number;
  /** Requests passed on so far. */
  served: number;
  clientDone: boolean;
  /** Whether a loop is reading from the client. */
  reading: boolean;
  /** When the last answer went out; from then on the client's input is only drained. */
  finishingSince?: number;
  closed: boolean;
  /** A refusal to send once the responses to the earlier requests are out. */
  pendingError?: FramingError;
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
  #stats: GuardStats = {
    open: 0,
    accepted: 0,
    refused: 0,
    refusedPerClient: 0,
    reserveServed: 0,
    evicted: 0,
    timedOut: 0,
    malformed: 0,
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
    const shortest = Math.min(options.headerTimeoutMs, options.bodyTimeoutMs, options.idleTimeoutMs);
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
    let refusal: FramingError | undefined;
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
      requests: new RequestFramer(
        `${this.#options.stampName}: ${this.#options.stampValue(peer)}\r\n`,
        this.#options.stampName,
        this.#options.maxHeadBytes ?? 64 * 1024,
      ),
      responses: new ResponseFramer(),
      inner: null,
      headStartedAt: now,
      bodyStartedAt: now,
      lastProgress: now,
      served: 0,
      clientDone: false,
      reading: true,
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
   * Whether a reserve connection's request is one health probe (GET or HEAD of the health path,
   * alone): then it is passed on, and its connection ends after the answer.
   */
  #isProbe(c: Guarded, heads: readonly RequestHead[]): boolean {
    if (c.served > 0 || heads.length !== 1) return false;
    const head = heads[0]!;
    const path = head.target.split("?")[0];
    return (head.method === "GET" || head.method === "HEAD") &&
      path === (this.#options.healthPath ?? "/health");
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
          c.clientDone = true;
          // A half-closed client may still wait for its answers; anything else is over.
          if (c.finishingSince !== undefined || c.requests.phase !== "idle" || c.responses.pending === 0) {
            this.#close(c);
          }
          return;
        }
        if (c.finishingSince !== undefined || c.pendingError) continue;
        const now = this.#now();
        c.lastProgress = now;
        const before = c.requests.phase;
        const served = c.served;
        const step = c.requests.push(buf.subarray(0, n));
        if (c.reserve && (step.heads.length > 0 || step.error)) {
          if (step.error || !this.#isProbe(c, step.heads)) {
            this.#refused(c.reservePerClient === true);
            void this.#refuse(c, c.reserve);
            continue;
          }
          this.#stats.reserveServed++;
        }
        if (
          c.requests.phase === "head" && (step.heads.length > 0 || (before === "idle" && served > 0))
        ) {
          c.headStartedAt = now;
        }
        if (step.heads.length > 0 && c.requests.phase === "body") c.bodyStartedAt = now;
        for (const head of step.heads) c.responses.expect(head.method);
        c.served += step.heads.length;
        if (step.forward.length > 0) {
          const inner = c.inner ?? await this.#open(c);
          if (!inner) return;
          await writeAll(inner, join(step.forward));
          c.lastProgress = this.#now();
        }
        if (step.error) {
          this.#stats.malformed++;
          // The rest of what the client sends is drained, not parsed.
          if (c.responses.pending === 0) void this.#refuse(c, step.error);
          else c.pendingError = step.error;
        }
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
        const chunk = buf.subarray(0, n);
        const step = c.responses.push(chunk);
        await writeAll(c.client, chunk);
        c.lastProgress = this.#now();
        if ("status" in step) {
          this.#options.logger.debug("closing a connection whose response framing was not understood", {
            error: step.message,
          });
          break;
        }
        if (step.close) break;
        if (step.ended > 0 && c.responses.pending === 0 && c.reserve) break;
        if (step.ended > 0 && c.responses.pending === 0) {
          if (c.pendingError) {
            await this.#refuse(c, c.pendingError);
            return;
          }
          if (c.clientDone) break;
        }
      }
    } catch {
      // The client or the server went away: nothing more to pass on.
      this.#close(c);
      return;
    }
    this.#finish(c);
  }

  async #open(c: Guarded): Promise<Deno.Conn | null> {
    try {
      const inner = await this.#options.connect();
      if (c.closed) {
        inner.close();
        return null;
      }
      c.inner = inner;
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

  /** Answers `error` with `Connection: close`, then finishes the connection. */
  async #refuse(c: Guarded, error: FramingError): Promise<void> {
    if (c.closed) return;
    c.finishingSince ??= this.#now();
    if (c.inner) closeQuietly(c.inner);
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
    const { headerTimeoutMs, bodyTimeoutMs, idleTimeoutMs } = this.#options;
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
        if (c.requests.partial && c.responses.pending === 0) {
          void this.#refuse(c, {
            status: 408,
            message: `Request Timeout: the request head did not arrive within ${headMs / 1000} s`,
          });
        } else {
          this.#close(c);
        }
      } else if (state === "body" && now - c.bodyStartedAt > bodyTimeoutMs + BODY_GRACE_MS) {
        this.#stats.timedOut++;
        this.#close(c);
      } else if ((state === "idle" || state === "busy") && now - c.lastProgress > idleTimeoutMs) {
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
  const phase = c.requests.phase;
  if (phase === "body") return "body";
  if (phase === "head" || c.served === 0) return "head";
  return c.responses.pending > 0 || c.responses.upgraded ? "busy" : "idle";
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
