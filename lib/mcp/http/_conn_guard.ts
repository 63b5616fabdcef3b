// The connection guard: `Deno.serve` has no connection cap, no head deadline, no idle timeout,
// and its accept loop ends the server on EMFILE (denoland/deno#10148, #3515). The guard caps
// connections, times heads and idle connections, keeps a reserve for health probes and survives
// running out of descriptors, without reading HTTP: it copies each connection's bytes to
// `Deno.serve` (the one HTTP parser) over a loopback connection, and learns where a connection
// stands from the handler: `dispatch` when a head has been parsed, its `done` when the answer
// went out. The handler finds the connection (and the client's address) by the loopback
// address the guard connected from. Types and helpers: _conn_types.ts; the health reserve:
// _conn_reserve.ts; socket I/O: _conn_io.ts.
import {
  answerAndClose,
  closeQuietly,
  drain,
  errorResponse,
  errorText,
  isFdExhaustion,
  within,
  writeAll,
} from "./_conn_io.ts";
import type { Refusal } from "./_conn_io.ts";

import { HealthReserve, RESERVE_HEAD_MS } from "./_conn_reserve.ts";
import {
  BODY_GRACE_MS,
  BUFFER_BYTES,
  CLIENT_BUFFER_BYTES,
  decrement,
  emptyStats,
  FD_RESERVE,
  holdFirstHead,
  LINGER_MS,
  LOWERED_CAP_MS,
  MAX_BACKOFF_MS,
  MIN_LOWERED_CAP,
  MIN_VICTIM_AGE_MS,
  newGuarded,
  roomVictim,
  stateOf,
  WARN_EVERY_MS,
} from "./_conn_types.ts";
import type { ConnectionGuardOptions, Dispatched, Guarded, GuardStats } from "./_conn_types.ts";

export { isFdExhaustion } from "./_conn_io.ts";
export type { Refusal } from "./_conn_io.ts";
export { HEALTH_RESERVE } from "./_conn_reserve.ts";
export type { ConnectionGuardOptions, Dispatched, GuardStats } from "./_conn_types.ts";

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
  #stats: GuardStats = emptyStats();
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
  #reserve: HealthReserve;
  #sweeper: ReturnType<typeof setInterval>;

  constructor(listener: Deno.Listener, options: ConnectionGuardOptions) {
    this.#listener = listener;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#reserve = new HealthReserve(this.#now);
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
    return await within(new Promise<void>((resolve) => this.#emptyWaiters.add(resolve)), ms);
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
    const evict = (victim: Guarded): void => {
      this.#stats.evicted++;
      this.#close(victim);
    };
    if (refusal && !this.#reserve.room(group, this.#conns, this.#regularByGroup, evict)) {
      this.#refused(ownShare);
      void answerAndClose(conn, refusal);
      return;
    }
    const c = newGuarded(conn, { peer, key, group }, this.#now(), refusal && { refusal, ownShare });
    this.#conns.add(c);
    if (refusal) {
      this.#reserve.add(group);
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
    c.lastProgress = c.lastSent = this.#now();
    let ended = false;
    const done = (): void => {
      if (ended) return;
      ended = true;
      c.inflight--;
      c.lastProgress = this.#now();
      if (c.inflight === 0 && (c.endAfterAnswer || c.clientDone)) this.#endInner(c);
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

  /** The connection to close for room (see `roomVictim`), of those `eligible`. */
  #victim(eligible: (c: Guarded) => boolean = () => true): Guarded | undefined {
    const before = this.#now() - Math.min(MIN_VICTIM_AGE_MS, this.#options.headerTimeoutMs / 2);
    return roomVictim(this.#conns, before, eligible);
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
    const buf = new Uint8Array(CLIENT_BUFFER_BYTES);
    try {
      for (;;) {
        const n = await c.client.read(buf);
        if (n === null) {
          // A half-closed client may still wait for its answers. The server behind the guard
          // drops a request whose connection half-closes, so it is told only once nothing is
          // owed: now, or when the last answer has gone out (see `done` in dispatch).
          c.clientDone = true;
          if (!c.inner || c.finishingSince !== undefined) this.#close(c);
          else if (c.inflight === 0 && !c.partial) this.#endInner(c);
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
          const head = holdFirstHead(c, bytes);
          if (head === "wait") continue;
          if (!(head instanceof Uint8Array)) {
            await this.#refuse(c, head);
            continue;
          }
          bytes = head;
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
        c.sending = true;
        await writeAll(c.client, buf.subarray(0, n));
        c.sending = false;
        c.lastProgress = c.lastSent = this.#now();
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
    this.#reserve.forgetExpired();
    const reserveHeadMs = Math.min(headerTimeoutMs, RESERVE_HEAD_MS);
    for (const c of [...this.#conns]) {
      const state = stateOf(c);
      const headMs = c.reserve ? reserveHeadMs : headerTimeoutMs;
      if (state === "finishing") {
        if (now - c.finishingSince! > LINGER_MS) this.#close(c);
      } else if (state === "head" && now - c.headStartedAt > headMs) {
        this.#stats.timedOut++;
        if (c.reserve) this.#reserve.markSquatter(c.group);
        // A client that sent nothing gets nothing; one stuck in its head is told why.
        if (c.partial) {
          this.#refuseAfterAnswers(c, {
            status: 408,
            message: `Request Timeout: the request head did not arrive within ${headMs / 1000} s`,
          });
        } else {
          this.#close(c);
        }
      } else if (
        state === "busy"
          ? now - c.lastSent > busyMs
          : state === "idle" && now - c.lastProgress > idleTimeoutMs
      ) {
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
      this.#reserve.remove(c.group);
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
