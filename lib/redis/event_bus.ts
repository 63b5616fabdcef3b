// The change events of 2026-07-28 `subscriptions/listen` streams across replicas: the SDK's
// `ServerEventBus` (createMcpHandler's `bus` option) on Redis pub/sub. An event published on one
// replica reaches the listeners of this replica at once (as the SDK's in-memory bus does) and
// those of every other replica through Redis; a replica never hears its own events back.
import type { ServerEvent, ServerEventBus } from "../mcp/sdk.ts";
import type { RedisConnection } from "./connection.ts";

const CHANNEL = "listen-events";

/** {@linkcode ServerEventBus} on Redis pub/sub; see the module comment. */
export class RedisServerEventBus implements ServerEventBus {
  #conn: RedisConnection;
  #replica: string;
  #listeners = new Set<(event: ServerEvent) => void>();
  #subscribed: Promise<() => void> | undefined;
  #onerror: ((e: Error) => void) | undefined;

  constructor(conn: RedisConnection, replica: string, onerror?: (e: Error) => void) {
    this.#conn = conn;
    this.#replica = replica;
    this.#onerror = onerror;
  }

  publish(event: ServerEvent): void {
    this.#dispatch(event);
    void this.#conn.publish(CHANNEL, JSON.stringify({ from: this.#replica, event }));
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    this.#listeners.add(listener);
    this.#subscribed ??= this.#conn.subscribe(CHANNEL, (raw) => this.#received(raw));
    return () => void this.#listeners.delete(listener);
  }

  /** Resolves once this replica hears the other replicas' events. */
  async ready(): Promise<void> {
    this.#subscribed ??= this.#conn.subscribe(CHANNEL, (raw) => this.#received(raw));
    await this.#subscribed;
  }

  #received(raw: string): void {
    let m: { from?: unknown; event?: unknown };
    try {
      m = JSON.parse(raw);
    } catch {
      return;
    }
    if (m.from === this.#replica || typeof m.event !== "object" || m.event === null) return;
    const kind = (m.event as { kind?: unknown }).kind;
    if (typeof kind !== "string") return;
    this.#dispatch(m.event as ServerEvent);
  }

  #dispatch(event: ServerEvent): void {
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch (e) {
        this.#onerror?.(e instanceof Error ? e : new Error(String(e)));
      }
    }
  }
}
