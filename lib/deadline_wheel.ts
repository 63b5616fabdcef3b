// One-shot deadlines of one length (the body deadline of every POST, the deadline of every tool
// call) on one shared timer: a timer per request costs each request a timer set and cleared, where
// almost every deadline is cancelled long before it falls. A deadline falls within one tick (by
// default a twentieth of its length, at most 1 s) after it is due.

interface Deadline {
  due: number;
  fn: () => void;
}

/** Runs `fn` every `ms` milliseconds until the returned function is called. */
export type Every = (ms: number, fn: () => void) => () => void;

/** `setInterval`, never keeping the process alive by itself. */
function unrefEvery(ms: number, fn: () => void): () => void {
  const id = setInterval(fn, ms);
  Deno.unrefTimer(id);
  return () => clearInterval(id);
}

/** `setInterval`, keeping the process alive until stopped. */
export function keptEvery(ms: number, fn: () => void): () => void {
  const id = setInterval(fn, ms);
  return () => clearInterval(id);
}

/** Deadlines of `ms` milliseconds, checked on one interval while any may still fall. */
export class DeadlineWheel {
  readonly #ms: number;
  readonly #tickMs: number;
  readonly #now: () => number;
  readonly #every: Every;
  /** In the order they fall: every deadline has the same length. */
  #pending = new Set<Deadline>();
  #stopTimer: (() => void) | undefined;

  /**
   * `now` and `every` default to `performance.now` and an unref'd `setInterval` (tests pass their
   * own); `keepsAlive` makes the interval keep the process alive while deadlines are pending (a
   * deadline that must fall even where nothing else waits); `maxTickMs` (default 1 s) bounds how
   * late a deadline may fall.
   */
  constructor(
    ms: number,
    options: { now?: () => number; every?: Every; keepsAlive?: boolean; maxTickMs?: number } = {},
  ) {
    this.#ms = ms;
    this.#tickMs = Math.max(10, Math.min(options.maxTickMs ?? 1000, Math.round(ms / 20)));
    this.#now = options.now ?? (() => performance.now());
    this.#every = options.every ?? (options.keepsAlive ? keptEvery : unrefEvery);
  }

  /** Runs `fn` once, `ms` milliseconds from now (within a tick), unless the returned function is called first. */
  after(fn: () => void): () => void {
    const deadline = { due: this.#now() + this.#ms, fn };
    this.#pending.add(deadline);
    this.#stopTimer ??= this.#every(this.#tickMs, () => this.#tick());
    return () => void this.#pending.delete(deadline);
  }

  /** Whether the shared timer runs. */
  get running(): boolean {
    return this.#stopTimer !== undefined;
  }

  /** Stops the timer; pending deadlines never fall. */
  stop(): void {
    this.#pending.clear();
    this.#stopTimer?.();
    this.#stopTimer = undefined;
  }

  #tick(): void {
    const now = this.#now();
    for (const deadline of this.#pending) {
      if (deadline.due > now) break;
      this.#pending.delete(deadline);
      deadline.fn();
    }
    // Kept while requests come, so a busy server sets no timer per request; stopped once idle.
    if (this.#pending.size === 0) this.stop();
  }
}
