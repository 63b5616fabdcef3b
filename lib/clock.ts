/** Time and randomness, injected so tests never sleep and never depend on chance. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits `ms` milliseconds; rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A source of numbers in [0, 1). */
export type Random = () => number;

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

/** A clock for tests: `sleep` advances time at once and records how long it was asked to wait. */
export class FakeClock implements Clock {
  #now: number;
  /** Every wait requested, in order. */
  readonly sleeps: number[] = [];

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Moves time forward without a sleep call. */
  advance(ms: number): void {
    this.#now += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.#now += Math.max(0, ms);
    return Promise.resolve();
  }
}
