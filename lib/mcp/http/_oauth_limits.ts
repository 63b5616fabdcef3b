// Bounds on what the OAuth resource server (oauth.ts) spends on an authorization server and on
// made-up tokens: answers read with a size cap, introspection requests limited in flight, and
// refusals remembered briefly so a repeated bad token costs no request.

/** Most bytes read of any one answer from the authorization server (metadata, keys, introspection). */
export const AUTH_BODY_MAX_BYTES = 1024 * 1024;

/** An answer from the authorization server that went past {@linkcode AUTH_BODY_MAX_BYTES}. */
export class AuthBodyTooLarge extends Error {
  constructor(readonly url: string, readonly maxBytes: number) {
    super(`The authorization server's answer at ${url} is larger than ${maxBytes} bytes`);
    this.name = "AuthBodyTooLarge";
  }
}

/**
 * Reads `res`'s body as JSON, at most `maxBytes` of it: a longer body (by Content-Length or as it
 * streams) is cancelled at the cap and {@linkcode AuthBodyTooLarge} thrown, so a hostile server
 * cannot make the process hold hundreds of megabytes.
 */
export async function readJsonCapped(
  res: Response,
  url: string,
  maxBytes = AUTH_BODY_MAX_BYTES,
): Promise<unknown> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new AuthBodyTooLarge(url, maxBytes);
  }
  const parts: Uint8Array[] = [];
  let length = 0;
  const reader = res.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > maxBytes) {
        await reader.cancel();
        throw new AuthBodyTooLarge(url, maxBytes);
      }
      parts.push(value);
    }
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return JSON.parse(new TextDecoder().decode(bytes));
}

/**
 * Runs at most `concurrency` tasks at once with at most `queue` more waiting; past that,
 * {@linkcode run} answers null at once (the caller refuses: retry shortly).
 */
export class Gate {
  #running = 0;
  #waiting: (() => void)[] = [];
  #concurrency: number;
  #queue: number;

  constructor(concurrency: number, queue: number) {
    this.#concurrency = concurrency;
    this.#queue = queue;
  }

  /** `task`'s result, or null when the gate and its queue are full. */
  async run<T>(task: () => Promise<T>): Promise<T | null> {
    if (this.#running >= this.#concurrency) {
      if (this.#waiting.length >= this.#queue) return null;
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so #running stays counted for it.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/**
 * Values kept until a deadline, at most `max` of them: the oldest goes first when full (a Map
 * keeps insertion order), so a flood of new keys pushes out only what it added.
 */
export class BoundedTtlCache<V> {
  #entries = new Map<string, { value: V; until: number }>();
  #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The value of `key` if it is still valid at `now`. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value` under `key` until `until`. */
  set(key: string, value: V, until: number): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, until });
  }

  /** Entries held now (expired ones included until looked up or pushed out). */
  get size(): number {
    return this.#entries.size;
  }
}
