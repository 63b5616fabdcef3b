import type { MaybePromise } from "./maybe_promise.ts";

/** One cached upstream answer. */
export interface CacheEntry {
  status: number;
  contentType: string;
  body: Uint8Array;
  storedAt: number;
  expiresAt: number;
}

/**
 * Where cached answers live. The in-memory {@linkcode ResponseCache} serves one process; a shared
 * store (Redis) can implement the same two operations so replicas share answers.
 */
export interface CacheStore {
  /** The live entry for `key`, or undefined (missing or expired as of `now`). */
  get(key: string, now: number): MaybePromise<CacheEntry | undefined>;
  /** Stores `entry` until its `expiresAt`. */
  set(key: string, entry: CacheEntry): MaybePromise<void>;
}

/** A least-recently-used cache in memory, bounded by the bytes of the bodies it holds. */
export class ResponseCache implements CacheStore {
  #maxBytes: number;
  #bytes = 0;
  #entries = new Map<string, CacheEntry>();

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The live entry for `key`, refreshed as most recently used; expired entries are dropped. */
  get(key: string, now: number): CacheEntry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= now) {
      this.#bytes -= sizeOf(key, entry);
      return undefined;
    }
    this.#entries.set(key, entry);
    return entry;
  }

  /** Stores `entry`, evicting the least recently used until the total fits. */
  set(key: string, entry: CacheEntry): void {
    const size = sizeOf(key, entry);
    if (size > this.#maxBytes) return;
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= sizeOf(key, old);
    }
    this.#entries.set(key, entry);
    this.#bytes += size;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= sizeOf(k, e);
    }
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }
}

function sizeOf(key: string, entry: CacheEntry): number {
  return entry.body.byteLength + key.length * 2 + 64;
}
