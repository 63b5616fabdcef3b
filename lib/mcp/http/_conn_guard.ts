// The connection guard: `Deno.serve` has no connection cap, no head deadline, no idle timeout,
// and its accept loop ends the server on EMFILE (denoland/deno#10148, #3515). The guard caps
// connections, times heads and idle connections, keeps a reserve for health probes and survives
// running out of descriptors, without reading HTTP. It reaches Deno's HTTP server (the one HTTP
// parser) one of two ways: direct, handing it the accepted socket (`handOff`, _conn_direct.ts),
// or proxy, copying each connection's bytes to `Deno.serve` over a loopback connection
// (`connect`). Either way it learns where a connection stands from the handler: `dispatch` when
// a head has been parsed, its `done` when the answer went out. The handler finds the connection
// by the address it came from: the client's own (direct), or the loopback address the guard
// connected from (proxy). Types and helpers: _conn_types.ts; the health reserve:
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
import { copyFromClient } from "./_conn_proxy.ts";
import type { ProxyHost } from "./_conn_proxy.ts";
import {
  ANSWER_SETTLE_MS,
  BODY_GRACE_MS,
  decrement,
  emptyStats,
  FD_RESERVE,
  LOWERED_CAP_MS,
  MAX_BACKOFF_MS,
  MIN_LOWERED_CAP,
  MIN_VICTIM_AGE_MS,
  newGuarded,
  overCapRefusal,
  overdue,
  roomVictim,
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
  /**
   * Connections by the address their requests reach the server from: the local address of the
   * guard's connection to it (proxy), or the client's own (direct).
   */
  #byInner = new Map<string, Guarded>();
  #stats: GuardStats = emptyStats();
  #ceiling = Infinity;
  #ceilingUntil = 0;
  #warnedAt: Record<string, number> = {};
  #stopped = false;
  #emptyWaiters = new Set<() => void>();
  /** The direct way: the server is shutting down (see `endServed`). */
  #ending = false;
  /** Connections counted against the caps (the reserve's are not), by client key. */
  #byClient = new Map<string, number>();
  #regular = 0;
  /** Connections counted against the caps, by reserve group (see `reserveClientOf`). */
  #regularByGroup = new Map<string, number>();
  #reserve: HealthReserve;
  #sweeper: ReturnType<typeof setInterval>;
  /** The guard as the proxy way's copy loops see it (_conn_proxy.ts). */
  #proxy: ProxyHost = {
    now: () => this.#now(),
    connect: () => this.#options.connect!(),
    register: (c) => this.#byInner.set(c.innerKey!, c),
    close: (c) => this.#close(c),
    refuse: (c, error) => this.#refuse(c, error),
    finish: (c) => this.#finish(c),
    endInner: (c) => this.#endInner(c),
    exhausted: () => this.#exhausted(),
    warn: (kind, msg, fields) => this.#warn(kind, msg, fields),
  };

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

  /**
   * The direct way, at shutdown: ends every connection once its answers in flight are out. One
   * that never sent a head ends now; an idle one after lingering (LINGER_MS, time for Deno's server
   * to write what it holds); a busy one once its answer is out (streams end when the handler
   * closes them). Not Deno's graceful shutdown: a connection it is shutting down can no longer
   * be ended at once (see _conn_direct.ts), and it waits for request bodies that may never come.
   */
  endServed(): void {
    this.#ending = true;
    for (const c of [...this.#conns]) {
      if (!c.direct) continue;
      if (c.inflight === 0) this.#endInner(c);
      else c.endAfterAnswer = true;
    }
  }

  /** The direct way, at shutdown: closes `c` once its last answer is MIN_VICTIM_AGE_MS old. */
  #endSoon(c: Guarded): void {
    const wait = c.served === 0 ? 0 : c.lastProgress + MIN_VICTIM_AGE_MS - this.#now();
    if (wait <= 0) {
      this.#close(c);
      return;
    }
    setTimeout(() => {
      if (c.inflight === 0) this.#close(c);
    }, wait);
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
        refusal = overCapRefusal(perClient, true);
        ownShare = true;
        break;
      }
      this.#stats.evicted++;
      this.#close(own);
    }
    while (!refusal && this.#regular >= this.#cap()) {
      const victim = this.#victim();
      if (!victim) {
        refusal = overCapRefusal(this.#cap(), false);
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
    if (this.#options.handOff) this.#handOff(c, this.#options.handOff);
    else void copyFromClient(this.#proxy, c);
  }

  /** The direct way: the server reads the connection from now on; the guard only counts and times it. */
  #handOff(c: Guarded, handOff: NonNullable<ConnectionGuardOptions["handOff"]>): void {
    c.reading = false;
    const remote = c.client.remoteAddr as Deno.NetAddr;
    c.innerKey = `${remote.hostname}:${remote.port}`;
    this.#byInner.set(c.innerKey, c);
    try {
      c.direct = handOff(c.client);
    } catch (e) {
      this.#warn("connect", "the HTTP server could not take a connection", { error: errorText(e) });
      this.#close(c);
      return;
    }
    c.direct.finished.then(() => this.#close(c), () => this.#close(c));
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
    // Ending: finishing, or its answer in flight said so (a paced one settles after the next
    // pipelined request is parsed).
    if (c.direct && (c.finishingSince !== undefined || (c.endAfterAnswer && c.inflight > 0))) {
      return this.#closingAnswer(c);
    }
    c.partial = false;
    c.served++;
    c.inflight++;
    c.lastProgress = c.lastSent = this.#now();
    let ended = false;
    let stream = false;
    const answered = c.direct
      ? (isStream: boolean, closing: boolean): void => {
        c.lastSent = this.#now();
        if (ended) return;
        // Deno's server keeps a connection open after an answer saying `Connection: close`.
        if (closing) c.endAfterAnswer = true;
        if (!isStream || stream) return;
        stream = true;
        c.streaming++;
      }
      : () => {};
    const moved = c.direct
      ? (): void => {
        c.lastSent = this.#now();
      }
      : () => {};
    const done = (): void => {
      if (ended) return;
      ended = true;
      if (stream) c.streaming--;
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
        return { peer: c.peer, refusal: c.reserve, done, answered, moved, ending: () => true };
      }
      this.#stats.reserveServed++;
    }
    return { peer: c.peer, done, answered, moved, ending: () => c.endAfterAnswer };
  }

  /**
   * The direct way: a request on a connection that is ending (its client sent on after an answer
   * that said `Connection: close`) is refused, not served: the connection is closed under it soon.
   */
  #closingAnswer(c: Guarded): Dispatched {
    const nothing = (): void => {};
    return {
      peer: c.peer,
      refusal: {
        status: 503,
        message: "Service Unavailable: this connection is closing; retry on a new one",
      },
      done: nothing,
      answered: nothing,
      moved: nothing,
      ending: () => true,
    };
  }

  /** The connection limit now: lower for a while after the process ran out of descriptors. */
  #cap(): number {
    const max = this.#options.maxConnections;
    return this.#now() < this.#ceilingUntil ? Math.min(max, this.#ceiling) : max;
  }

  /** The connection to close for room (see `roomVictim`), of those `eligible`. */
  #victim(eligible: (c: Guarded) => boolean = () => true): Guarded | undefined {
    const now = this.#now();
    const before = now - Math.min(MIN_VICTIM_AGE_MS, this.#options.headerTimeoutMs / 2);
    return roomVictim(this.#conns, before, eligible, Math.min(before, now - ANSWER_SETTLE_MS));
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

  /**
   * Tells the server behind the guard that no more requests come on this connection: it sends
   * what it still has and closes, and #fromServer then ends the connection.
   */
  #endInner(c: Guarded): void {
    c.finishingSince ??= this.#now();
    // The direct way: the sweep ends it once it lingered (LINGER_MS), time for Deno's server to
    // write the answer it holds. Not a graceful shutdown: that waits for a request body that may
    // never come, and after it the connection can no longer be ended at once. At shutdown the
    // linger is short (counted from its last answer, MIN_VICTIM_AGE_MS), so stopping is quick.
    if (c.direct) {
      if (this.#ending) this.#endSoon(c);
      return;
    }
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
      const headMs = c.reserve ? reserveHeadMs : headerTimeoutMs;
      const late = overdue(c, now, { headMs, idleMs: idleTimeoutMs, busyMs });
      if (!late) continue;
      if (late !== "finished") this.#stats.timedOut++;
      if (late === "head" && c.reserve) this.#reserve.markSquatter(c.group);
      if (late === "head" && c.partial) {
        // A client that sent nothing gets nothing; one stuck in its head is told why (the proxy
        // way: the direct way sees no bytes, and closes).
        this.#refuseAfterAnswers(c, {
          status: 408,
          message: `Request Timeout: the request head did not arrive within ${headMs / 1000} s`,
        });
      } else {
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
    c.direct?.abort();
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
