/** The three states of a circuit breaker. */
export type BreakerState = "closed" | "open" | "half_open";

/** Options for {@linkcode CircuitBreaker}. */
export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  threshold: number;
  /** How long the circuit stays open before one trial request is let through. */
  cooldownMs: number;
}

/** A snapshot for `/health` and logs. */
export interface BreakerSnapshot {
  state: BreakerState;
  consecutive_failures: number;
  /** Seconds until a trial request is allowed, when open. */
  retry_in_s?: number;
}

/**
 * Per-host circuit breaker: opens after `threshold` consecutive failures, lets one trial through
 * after the cooldown, closes on its success and reopens on its failure.
 */
export class CircuitBreaker {
  #options: BreakerOptions;
  #state: BreakerState = "closed";
  #failures = 0;
  #openedAt = 0;
  #trialInFlight = false;

  constructor(options: BreakerOptions) {
    this.#options = options;
  }

  /** The state as of `now` (an open breaker past its cooldown reads as half-open). */
  state(now: number): BreakerState {
    if (this.#state === "open" && now - this.#openedAt >= this.#options.cooldownMs) {
      return "half_open";
    }
    return this.#state;
  }

  /**
   * Asks to send a request. Returns 0 when allowed, else the milliseconds until a trial
   * request will be.
   */
  acquire(now: number): number {
    const state = this.state(now);
    if (state === "closed") return 0;
    if (state === "half_open") {
      if (this.#trialInFlight) return Math.max(1, this.#options.cooldownMs);
      this.#state = "half_open";
      this.#trialInFlight = true;
      return 0;
    }
    return this.#openedAt + this.#options.cooldownMs - now;
  }

  /** Records a healthy answer. */
  success(): void {
    this.#state = "closed";
    this.#failures = 0;
    this.#trialInFlight = false;
  }

  /** Records a failure (network error, timeout, 5xx or 429). */
  failure(now: number): void {
    this.#trialInFlight = false;
    if (this.#state === "half_open") {
      this.#state = "open";
      this.#openedAt = now;
      return;
    }
    this.#failures += 1;
    if (this.#failures >= this.#options.threshold) {
      this.#state = "open";
      this.#openedAt = now;
    }
  }

  /** Releases a trial slot without a verdict (the caller cancelled). */
  release(): void {
    this.#trialInFlight = false;
  }

  snapshot(now: number): BreakerSnapshot {
    const state = this.state(now);
    const snap: BreakerSnapshot = { state, consecutive_failures: this.#failures };
    if (state === "open") {
      snap.retry_in_s = Math.ceil((this.#openedAt + this.#options.cooldownMs - now) / 1000);
    }
    return snap;
  }
}
