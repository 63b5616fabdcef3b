import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";

/** One stateful MCP session, over Streamable HTTP or legacy SSE. */
export interface Session {
  id: string;
  kind: "streamable" | "sse";
  /** When a request last arrived or a call last finished (clock milliseconds). */
  lastActive: number;
  /** Whether a call is being answered (a busy session never expires). */
  busy(): boolean;
  /** Closes the session's transport and streams. */
  close(): Promise<void>;
}

/**
 * The live sessions of this process: a cap on how many, with slots reserved while a session is
 * being set up, and expiry of sessions idle for longer than `idleMs`.
 */
export class SessionStore {
  #sessions = new Map<string, Session>();
  #reserved = 0;
  #max: number;
  #idleMs: number;
  #clock: Clock;
  #logger: Logger;

  constructor(max: number, idleMs: number, clock: Clock, logger: Logger) {
    this.#max = max;
    this.#idleMs = idleMs;
    this.#clock = clock;
    this.#logger = logger;
  }

  get max(): number {
    return this.#max;
  }

  /** Open sessions per kind. */
  counts(): { streamable: number; sse: number } {
    let streamable = 0;
    for (const s of this.#sessions.values()) if (s.kind === "streamable") streamable++;
    return { streamable, sse: this.#sessions.size - streamable };
  }

  /** Reserves a slot for a session being set up; false when the cap is reached. */
  reserve(): boolean {
    if (this.#sessions.size + this.#reserved >= this.#max) return false;
    this.#reserved++;
    return true;
  }

  /** Gives back a reserved slot whose session never started. */
  release(): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
  }

  /** Turns a reserved slot into a live session. */
  add(session: Session): void {
    this.release();
    this.#sessions.set(session.id, session);
  }

  get(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  /** Whether any session is answering a call. */
  busy(): boolean {
    for (const s of this.#sessions.values()) if (s.busy()) return true;
    return false;
  }

  /** Closes the sessions idle for longer than the timeout; returns how many. */
  sweep(): number {
    const now = this.#clock.now();
    let closed = 0;
    for (const s of [...this.#sessions.values()]) {
      if (!s.busy() && now - s.lastActive > this.#idleMs) {
        this.#sessions.delete(s.id);
        closed++;
        this.#logger.info("session expired", {
          session_id: s.id,
          transport: s.kind,
          idle_s: Math.round((now - s.lastActive) / 1000),
        });
        void s.close().catch(() => {});
      }
    }
    return closed;
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(all.map((s) => s.close().catch(() => {})));
  }
}
