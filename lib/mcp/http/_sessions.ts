import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { metrics } from "../../metrics/mod.ts";

/** One stateful MCP session, over Streamable HTTP or legacy SSE. */
export interface Session {
  id: string;
  kind: "streamable" | "sse";
  /**
   * When a message last arrived (a POST) or a call last finished (clock milliseconds). Opening
   * the GET listen stream does not count: every SDK client holds one, quiet or not.
   */
  lastActive: number;
  /** The client key (see `clientKey`) of whoever opened it, for the per-client cap. */
  owner?: string;
  /** The OAuth user it belongs to (`Principal.id`): only their requests reach it. */
  principal?: string;
  /** Whether a call is being answered (a busy session never expires). */
  busy(): boolean;
  /** Closes the session's transport and streams. */
  close(): Promise<void>;
}

/** Options for {@linkcode SessionStore}. */
export interface SessionStoreOptions {
  /** Most sessions one client holds; 0 (default) for no per-client cap. */
  maxPerClient?: number;
  /**
   * Milliseconds another client's session must have been idle before a newcomer may take its
   * place at the global cap. Default: the idle timeout (never, in effect).
   */
  reclaimIdleMs?: number;
  /**
   * Milliseconds a session is kept for room after it opened, whoever asks: a live client sends
   * `notifications/initialized` and its first calls at once, and a newcomer must not win that
   * race. Default {@linkcode RECLAIM_GRACE_MS}.
   */
  graceMs?: number;
  /**
   * Milliseconds a session that never completed initialization is kept. Default: the idle
   * timeout.
   */
  initTimeoutMs?: number;
}

interface Entry {
  session: Session;
  openedAt: number;
  /** Requests that reached the session after it opened (`get` calls). */
  requests: number;
}

/** Why {@linkcode SessionStore.reserve} refused: the client's own cap, or the server's. */
export type ReserveRefusal = "client" | "full";

/** The default of {@linkcode SessionStoreOptions.graceMs} (`session_reclaim_grace`). */
export const RECLAIM_GRACE_MS = 5_000;

/**
 * The live sessions of this process: a cap on how many (all clients, and per client), with
 * slots reserved while a session is being set up, and expiry of sessions idle for longer than
 * `idleMs`. The rule for room, documented in docs/SECURITY.md:
 *
 * - Only a session that is not answering a call and opened more than `graceMs` ago may be
 *   taken. Among those, one that never completed initialization goes first (a live client
 *   completes it at once), then the one whose last message is oldest. An open GET listen
 *   stream does not protect a session (every SDK client holds one); closing the session ends it.
 * - A client at its own cap gets room from its own sessions only; when none may be taken it is
 *   refused.
 * - At the global cap the newcomer's own sessions make room first. It may take the place of
 *   another client's session only if that session never completed initialization or has been
 *   quiet for longer than `reclaimIdleMs`. Otherwise the newcomer is refused: a live session is
 *   never closed for someone else.
 */
export class SessionStore {
  #sessions = new Map<string, Entry>();
  #reserved = 0;
  #reservedBy = new Map<string, number>();
  #max: number;
  #idleMs: number;
  #maxPerClient: number;
  #reclaimIdleMs: number;
  #graceMs: number;
  #initTimeoutMs: number;
  #clock: Clock;
  #logger: Logger;

  constructor(max: number, idleMs: number, clock: Clock, logger: Logger, options: SessionStoreOptions = {}) {
    this.#max = max;
    this.#idleMs = idleMs;
    this.#maxPerClient = options.maxPerClient ?? 0;
    this.#reclaimIdleMs = options.reclaimIdleMs ?? idleMs;
    this.#graceMs = options.graceMs ?? RECLAIM_GRACE_MS;
    this.#initTimeoutMs = options.initTimeoutMs ?? idleMs;
    this.#clock = clock;
    this.#logger = logger;
  }

  get max(): number {
    return this.#max;
  }

  /** Most sessions one client holds (0: no per-client cap). */
  get maxPerClient(): number {
    return this.#maxPerClient;
  }

  /** Open sessions per kind. */
  counts(): { streamable: number; sse: number } {
    let streamable = 0;
    for (const e of this.#sessions.values()) if (e.session.kind === "streamable") streamable++;
    return { streamable, sse: this.#sessions.size - streamable };
  }

  /**
   * Reserves a slot for a session being set up by client `owner`, making room by the rule in
   * the class comment; returns why not when there is none.
   */
  reserve(owner?: string): ReserveRefusal | undefined {
    if (owner !== undefined && this.#maxPerClient > 0) {
      while (this.#held(owner) >= this.#maxPerClient) {
        const victim = this.#victim((e) => e.session.owner === owner);
        if (!victim) return "client";
        this.#evict(victim, "per_client_cap");
      }
    }
    const now = this.#clock.now();
    while (this.#sessions.size + this.#reserved >= this.#max) {
      const victim = (owner === undefined ? undefined : this.#victim((e) => e.session.owner === owner)) ??
        this.#victim((e) => !established(e) || now - e.session.lastActive > this.#reclaimIdleMs);
      if (!victim) return "full";
      this.#evict(victim, "max_sessions");
    }
    this.#reserved++;
    if (owner !== undefined) this.#reservedBy.set(owner, (this.#reservedBy.get(owner) ?? 0) + 1);
    return undefined;
  }

  /** Gives back a slot reserved for `owner` whose session never started. */
  release(owner?: string): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
    if (owner === undefined) return;
    const left = (this.#reservedBy.get(owner) ?? 0) - 1;
    if (left > 0) this.#reservedBy.set(owner, left);
    else this.#reservedBy.delete(owner);
  }

  /**
   * Turns a reserved slot into a live session; `established` when its client went on past
   * `initialize` elsewhere (a session rebuilt from the shared store).
   */
  add(session: Session, established = false): void {
    this.release(session.owner);
    this.#sessions.set(session.id, { session, openedAt: this.#clock.now(), requests: established ? 2 : 0 });
  }

  /** The session with `id`; counts as a request reaching it. */
  get(id: string): Session | undefined {
    const entry = this.#sessions.get(id);
    if (entry) entry.requests++;
    return entry?.session;
  }

  /** The session with `id`, without counting a request (for messages from other replicas). */
  peek(id: string): Session | undefined {
    return this.#sessions.get(id)?.session;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  /** Whether any session is answering a call. */
  busy(): boolean {
    for (const e of this.#sessions.values()) if (e.session.busy()) return true;
    return false;
  }

  /**
   * Closes the sessions idle for longer than the idle timeout, and those that did not complete
   * initialization within the init timeout; returns how many.
   */
  sweep(): number {
    const now = this.#clock.now();
    let closed = 0;
    for (const e of [...this.#sessions.values()]) {
      const s = e.session;
      if (s.busy()) continue;
      const idle = now - s.lastActive > this.#idleMs;
      const unfinished = !established(e) && now - e.openedAt > this.#initTimeoutMs;
      if (!idle && !unfinished) continue;
      this.#sessions.delete(s.id);
      closed++;
      metrics?.sessionEvictions.inc(1, idle ? "idle" : "init_timeout");
      this.#logger.info(idle ? "session expired" : "session expired before initialization completed", {
        session_id: s.id,
        transport: s.kind,
        idle_s: Math.round((now - s.lastActive) / 1000),
      });
      void s.close().catch(() => {});
    }
    return closed;
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(all.map((e) => e.session.close().catch(() => {})));
  }

  /** Sessions and reserved slots of `owner`. */
  #held(owner: string): number {
    let n = this.#reservedBy.get(owner) ?? 0;
    for (const e of this.#sessions.values()) if (e.session.owner === owner) n++;
    return n;
  }

  /**
   * The session to close for room, by the rule in the class comment: past its grace and not
   * answering a call; unfinished ones first, then the longest quiet.
   */
  #victim(eligible: (e: Entry) => boolean): Entry | undefined {
    const now = this.#clock.now();
    let best: Entry | undefined;
    for (const e of this.#sessions.values()) {
      if (now - e.openedAt < this.#graceMs || e.session.busy() || !eligible(e)) continue;
      if (!best) {
        best = e;
        continue;
      }
      const a = established(e);
      const b = established(best);
      if ((a === b && e.session.lastActive < best.session.lastActive) || (!a && b)) best = e;
    }
    return best;
  }

  #evict(e: Entry, reason: string): void {
    const s = e.session;
    this.#sessions.delete(s.id);
    metrics?.sessionEvictions.inc(1, reason);
    const now = this.#clock.now();
    this.#logger.info("session closed to make room for a new one", {
      session_id: s.id,
      transport: s.kind,
      reason,
      initialized: established(e),
      idle_s: Math.round((now - s.lastActive) / 1000),
      age_s: Math.round((now - e.openedAt) / 1000),
    });
    void s.close().catch(() => {});
  }
}

/**
 * Whether the client went on after `initialize`: a Streamable HTTP session's next request
 * (normally `notifications/initialized`), or a legacy SSE session's second message (its
 * `initialize` comes through the same door).
 */
function established(e: Entry): boolean {
  return e.requests >= (e.session.kind === "sse" ? 2 : 1);
}
