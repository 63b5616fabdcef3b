// Reading an upstream body under a byte cap, counted after decompression, in bounded memory.
//
// Deno's fetch decodes `Content-Encoding: gzip`, `deflate` and `br` itself, so the body stream
// yields decoded bytes: a 200 KB gzip body can yield gigabytes. The cap is checked after every
// read and the stream is cancelled as soon as it is passed, so memory never holds more than the
// cap. Reads go straight into our own buffers (a BYOB reader) where the stream allows it:
// Deno's default reader hands out 4 KiB views of fresh 64 KiB buffers, and keeping those views
// kept 16 times the bytes read (a 64 MiB cap cost about 1 GiB). A `Content-Length` says
// nothing about the decoded size, so it only refuses early (above the cap) and sizes the first
// buffer of an unencoded body; a stacked encoding (`gzip, gzip`) is not decoded by fetch at
// all, so its bytes are counted as they come.

/** The body is larger than the cap. */
export class BodyTooLargeError extends Error {
  constructor(max: number) {
    super(`The body is larger than ${max} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/** Options for {@linkcode readCapped}. */
export interface ReadCappedOptions {
  /** Return the first `max` bytes instead of failing (for error snippets). */
  truncate?: boolean;
}

const FIRST_BLOCK = 16 * 1024;
const MAX_BLOCK = 1024 * 1024;

/**
 * Reads `response`'s body, at most `max` bytes after decompression. Throws
 * {@linkcode BodyTooLargeError} (having cancelled the stream) when there are more, unless
 * `truncate` is set.
 */
export async function readCapped(
  response: Response,
  max: number,
  options: ReadCappedOptions = {},
): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared > max && !options.truncate) {
    await response.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(max);
  }
  const stream = response.body;
  if (!stream) return new Uint8Array();
  const encoded = !/^\s*(identity)?\s*$/i.test(response.headers.get("content-encoding") ?? "");
  const sink = new Blocks(max + 1, !encoded && declared >= 0 ? declared + 1 : undefined);
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (a Response built in JS): read chunks and copy them.
  }
  const reader = byob ?? stream.getReader();
  try {
    while (sink.total <= max) {
      if (byob) {
        const { done, value } = await byob.read(sink.space());
        if (value) sink.adopt(value);
        if (done) break;
      } else {
        const { done, value } = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
        if (done) break;
        sink.write(value);
      }
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
  if (sink.total > max) {
    await reader.cancel().catch(() => {});
    if (!options.truncate) throw new BodyTooLargeError(max);
    return sink.bytes().subarray(0, max);
  }
  reader.releaseLock();
  return sink.bytes();
}

/** Bytes in a list of blocks, growing block by block up to `limit` bytes in all. */
class Blocks {
  #limit: number;
  #full: Uint8Array[] = [];
  #current: Uint8Array;
  #used = 0;
  total = 0;

  constructor(limit: number, exact?: number) {
    this.#limit = limit;
    this.#current = new Uint8Array(Math.max(1, Math.min(limit, exact ?? FIRST_BLOCK)));
  }

  /** Free space to read into: never more than the bytes left under the limit. */
  space(): Uint8Array {
    if (this.#used === this.#current.byteLength) this.#next();
    const room = Math.min(this.#current.byteLength - this.#used, this.#limit - this.total);
    return this.#current.subarray(this.#used, this.#used + Math.max(1, room));
  }

  /** Takes back the buffer a BYOB read transferred, with `view.byteLength` new bytes in it. */
  adopt(view: Uint8Array): void {
    this.#current = new Uint8Array(view.buffer as ArrayBuffer);
    this.#used += view.byteLength;
    this.total += view.byteLength;
  }

  /** Copies a chunk in (the default reader's chunks are not kept). */
  write(chunk: Uint8Array): void {
    let rest = chunk.subarray(0, Math.max(0, this.#limit - this.total));
    this.total += chunk.byteLength;
    while (rest.byteLength > 0) {
      if (this.#used === this.#current.byteLength) this.#next();
      const n = Math.min(rest.byteLength, this.#current.byteLength - this.#used);
      this.#current.set(rest.subarray(0, n), this.#used);
      this.#used += n;
      rest = rest.subarray(n);
    }
  }

  /** The bytes held, in one array. */
  bytes(): Uint8Array {
    if (this.#full.length === 0) {
      // Keep the buffer when little of it is unused; copy otherwise, so the cache holds no slack.
      return this.#current.byteLength - this.#used <= 1
        ? this.#current.subarray(0, this.#used)
        : this.#current.slice(0, this.#used);
    }
    const out = new Uint8Array(this.#full.reduce((n, b) => n + b.byteLength, 0) + this.#used);
    let offset = 0;
    for (const block of this.#full) {
      out.set(block, offset);
      offset += block.byteLength;
    }
    out.set(this.#current.subarray(0, this.#used), offset);
    return out;
  }

  #next(): void {
    this.#full.push(this.#current);
    const held = this.total;
    const size = Math.min(MAX_BLOCK, Math.max(FIRST_BLOCK, this.#current.byteLength * 2), this.#limit - held);
    this.#current = new Uint8Array(Math.max(1, size));
    this.#used = 0;
  }
}
