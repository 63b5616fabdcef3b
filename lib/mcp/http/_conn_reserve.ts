// The health reserve of the connection guard (_conn_guard.ts): connections admitted over a cap
// only to answer a health probe, how many each client holds, and which give way to a newcomer.
import type { Guarded } from "./_conn_types.ts";
import { decrement } from "./_conn_types.ts";

/**
 * Connections over a cap kept in reserve until their first request head shows whether it is a
 * health probe (`GET`/`HEAD /health`, passed on) or not (refused), so a full server still
 * answers its health check; and how many of those one client may hold (IPv6 counted by the
 * wider `reserveClientOf` group, so the /64s of one site share two).
 */
export const HEALTH_RESERVE = 16;
const PER_GROUP = 2;
/**
 * Time a reserve connection has to send its head: a probe sends it in its first packet, so the
 * guard has usually read it by the time it looks; far shorter than the normal head deadline.
 */
export const RESERVE_HEAD_MS = 500;
/**
 * After this long without a complete head, a reserve connection gives its slot to any newcomer:
 * a probe's head has arrived by then, a squatter's never does. A client that holds more regular
 * connections than the newcomer's loses its waiting reserve slots at once (see HealthReserve.room).
 */
const RESERVE_GRACE_MS = 100;
/**
 * How long a client whose reserve connection was closed without a probe's head (evicted or
 * timed out) counts as a squatter: its reserve connections then give way at once to a client
 * that is not one, however fast it reconnects. Remembered for this many clients at most.
 */
const SQUATTER_MEMORY_MS = 10_000;
const MAX_SQUATTERS = 10_000;
/**
 * The reserve's counts and its memory of squatters (clients whose reserve connections closed
 * without a probe's head). The guard owns the connections; this decides which may stay.
 */
export class HealthReserve {
  #now: () => number;
  /** Reserve groups seen squatting, until when (see SQUATTER_MEMORY_MS). */
  #squatters = new Map<string, number>();
  /** Reserve connections by group, and in all. */
  #byGroup = new Map<string, number>();
  #count = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Counts a connection of `group` into the reserve. */
  add(group: string): void {
    this.#count++;
    this.#byGroup.set(group, (this.#byGroup.get(group) ?? 0) + 1);
  }

  /** Counts a connection of `group` out of the reserve. */
  remove(group: string): void {
    this.#count--;
    decrement(this.#byGroup, group);
  }

  /** Remembers `group` as a squatter for a while. */
  markSquatter(group: string): void {
    this.#squatters.delete(group);
    if (this.#squatters.size >= MAX_SQUATTERS) {
      const oldest = this.#squatters.keys().next().value;
      if (oldest !== undefined) this.#squatters.delete(oldest);
    }
    this.#squatters.set(group, this.#now() + SQUATTER_MEMORY_MS);
  }

  /** Forgets squatters whose time is up. */
  forgetExpired(): void {
    const now = this.#now();
    for (const [group, until] of this.#squatters) if (until <= now) this.#squatters.delete(group);
  }

  /**
   * Whether `group` may take a reserve slot, making room if needed (`evict` closes a connection
   * of `conns`): its own share is two, and a full reserve gives up a slot whose holder has not
   * sent a probe's head. `regular` counts the groups' regular connections.
   */
  room(
    group: string,
    conns: Iterable<Guarded>,
    regular: ReadonlyMap<string, number>,
    evict: (c: Guarded) => void,
  ): boolean {
    const squat = (c: Guarded): void => {
      this.markSquatter(c.group);
      evict(c);
    };
    while ((this.#byGroup.get(group) ?? 0) >= PER_GROUP) {
      const own = this.#victim(group, conns, regular, (c) => c.group === group);
      if (!own) return false;
      squat(own);
    }
    while (this.#count >= HEALTH_RESERVE) {
      const other = this.#victim(group, conns, regular);
      if (!other) return false;
      squat(other);
    }
    return true;
  }

  /**
   * How strongly a group's reserve connections hold their slots, lowest first: a squatter's
   * weakest of all, then by the regular connections the group holds.
   */
  #rank(group: string, regular: ReadonlyMap<string, number>): number {
    const load = regular.get(group) ?? 0;
    return (this.#squatters.get(group) ?? 0) > this.#now() ? load + 1e9 : load;
  }

  /**
   * The reserve connection to close for a newcomer of `group`: one still waiting for its first
   * head whose client ranks above the newcomer's (see #rank: a squatter's, or a flooder's, gives
   * way at once to a client that is neither), the highest first; else the oldest waiting past
   * {@linkcode RESERVE_GRACE_MS}. A probe whose head has arrived is never closed, so squatters
   * cannot push a probe out before it is served.
   */
  #victim(
    group: string,
    conns: Iterable<Guarded>,
    regular: ReadonlyMap<string, number>,
    eligible: (c: Guarded) => boolean = () => true,
  ): Guarded | undefined {
    const graceBefore = this.#now() - RESERVE_GRACE_MS;
    let heaviest: Guarded | undefined;
    let heaviestLoad = this.#rank(group, regular);
    let stale: Guarded | undefined;
    for (const c of conns) {
      if (!c.reserve || c.served > 0 || c.finishingSince !== undefined || !eligible(c)) continue;
      const load = this.#rank(c.group, regular);
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
}
