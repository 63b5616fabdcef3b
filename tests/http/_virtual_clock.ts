// A clock for tests where many calls wait at once: `sleep` resolves only when the test moves
// time past its end, so concurrent waits overlap as they do in real time (FakeClock instead
// adds every sleep to the time, one after another).
import type { Clock } from "../../lib/clock.ts";

interface Timer {
  at: number;
  resolve: () => void;
}

/** Virtual time that moves only when the test says so. */
export class VirtualClock implements Clock {
  #now: number;
  #timers: Timer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** How many sleeps are waiting. */
  get sleepers(): number {
    return this.#timers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer: Timer = { at: this.#now + ms, resolve };
      this.#timers.push(timer);
      signal?.addEventListener("abort", () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        reject(signal.reason);
      }, { once: true });
    });
  }

  /** Moves time to the earliest waiting sleep and wakes every sleep due by then; false when none waits. */
  next(): boolean {
    if (this.#timers.length === 0) return false;
    const at = Math.min(...this.#timers.map((t) => t.at));
    this.#now = Math.max(this.#now, at);
    const due = this.#timers.filter((t) => t.at <= this.#now);
    this.#timers = this.#timers.filter((t) => t.at > this.#now);
    for (const t of due) t.resolve();
    return true;
  }
}

/**
 * Settles `work` under virtual time: whenever every unfinished task is asleep, time jumps to
 * the next wake-up. `busy()` says how many tasks are still running (asleep or doing real I/O).
 */
export async function runVirtual(clock: VirtualClock, busy: () => number, maxSteps = 10_000): Promise<void> {
  for (let step = 0; step < maxSteps; step++) {
    const running = busy();
    if (running === 0) return;
    if (clock.sleepers === running) {
      clock.next();
    }
    // Let fetches and promise chains move on (real time: a loopback round trip).
    await new Promise((resolve) => setTimeout(resolve, clock.sleepers === busy() ? 0 : 1));
  }
  throw new Error(`runVirtual: still ${busy()} task(s) running after ${maxSteps} steps`);
}
