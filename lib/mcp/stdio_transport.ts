import { Buffer } from "node:buffer";
import { writeAllSync } from "../log.ts";
import type { SyncWriter } from "../log.ts";
import { invalidMessage } from "./jsonrpc_errors.ts";
import { nestingDepth } from "./shaping.ts";
import { parseJSONRPCMessage } from "./sdk.ts";
import type { JSONRPCMessage, Transport } from "./sdk.ts";

/** Options for {@linkcode LineStdioTransport}. */
export interface LineStdioOptions {
  /**
   * Where messages come from and answers go; default `Deno.stdin` and `Deno.stdout`, used
   * directly (building Node's `process.stdin` and `process.stdout` streams instead would add
   * about 3 ms to every start).
   */
  stdin?: ByteReader;
  stdout?: ByteWriter;
  /** The longest line accepted; longer ones are answered with -32600 and skipped. */
  maxLineBytes?: number;
  /** The deepest nesting of objects and arrays accepted in a message (-32600 beyond). */
  maxDepth?: number;
  /**
   * When stdin ends, how long requests still being answered may take before the transport
   * closes (their answers are written meanwhile); default 10 s, `shutdown_grace`.
   */
  drainMs?: number;
  /** Told once when stdout fails (the client stopped reading); the transport then closes. */
  onOutputError?: (error: Error) => void;
}

/** A source read like `Deno.stdin`: `read` fills `p` and says how much, or null at the end. */
export interface ByteReader {
  read(p: Uint8Array): Promise<number | null>;
}

/**
 * A sink written like `Deno.stdout`: synchronously, as Node's `process.stdout` writes to it too
 * (a client that stops reading holds the writer, as it would hold any stdio server).
 */
export type ByteWriter = SyncWriter;

const encoder = new TextEncoder();

/** How deeply a message may nest before it is refused: far beyond any real request. */
export const DEFAULT_MAX_DEPTH = 64;

type RequestId = string | number;

/** The `_meta` key of the 2026-07-28 per-request envelope. */
const ENVELOPE_KEY = "io.modelcontextprotocol/protocolVersion";

/**
 * MCP over newline-delimited JSON on stdin/stdout. Unlike the SDK's stdio transport, a line
 * that is not JSON gets a -32700 answer, a line that is not JSON-RPC, nests too deeply or reuses
 * the id of a request still being answered a -32600 answer, and an oversized line is skipped
 * with -32600, instead of being dropped, closing the session or never being answered. A
 * client that stops reading (EPIPE) ends the session quietly.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #stdin: ByteReader;
  #stdout: ByteWriter;
  #max: number;
  #maxDepth: number;
  #onOutputError: ((error: Error) => void) | undefined;
  #chunks: Buffer[] = [];
  #size = 0;
  #skipping = false;
  #closed = false;
  /** The era the first request fixed (see #refusedForEra). */
  #era: "legacy" | "modern" | undefined;
  /** Requests received and not answered yet. */
  #inflight = new Set<RequestId>();
  readonly #done = Promise.withResolvers<void>();
  #drainMs: number;
  /** Called when the last request in flight is answered (while draining). */
  #idle: (() => void) | undefined;

  constructor(options: LineStdioOptions = {}) {
    this.#stdin = options.stdin ?? Deno.stdin;
    this.#stdout = options.stdout ?? Deno.stdout;
    this.#max = options.maxLineBytes ?? 4 * 1024 * 1024;
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#onOutputError = options.onOutputError;
    this.#drainMs = options.drainMs ?? 10_000;
  }

  /** Settles when the transport has closed (stdin ended, stdout failed, or `close()`). */
  get closed(): Promise<void> {
    return this.#done.promise;
  }

  start(): Promise<void> {
    void this.#readLoop(this.#stdin);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (("result" in message || "error" in message) && message.id !== undefined && message.id !== null) {
      this.#inflight.delete(message.id as RequestId);
      if (this.#inflight.size === 0) this.#idle?.();
    }
    return this.#write(message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    // The read loop stops at its next chunk (a read already waiting cannot be called off).
    this.#done.resolve();
    this.onclose?.();
    return Promise.resolve();
  }

  /** Reads `source` until it ends, fails or this transport closes. */
  async #readLoop(source: ByteReader): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    try {
      while (!this.#closed) {
        const n = await source.read(buf);
        if (n === null) {
          // The client closed stdin: what it asked before still gets answered, within the grace.
          await this.#drain();
          break;
        }
        // The buffer is read into again: what is kept of it is copied.
        if (!this.#closed && n > 0) this.#onData(Buffer.from(buf.subarray(0, n)));
      }
    } catch (e) {
      if (!this.#closed) this.#onError(e instanceof Error ? e : new Error(String(e)));
    }
    void this.close();
  }

  /** Waits until every request in flight is answered, or the drain grace runs out. */
  async #drain(): Promise<void> {
    if (this.#closed || this.#inflight.size === 0) return;
    const idle = Promise.withResolvers<void>();
    this.#idle = idle.resolve;
    const timer = setTimeout(idle.resolve, this.#drainMs);
    try {
      await Promise.race([idle.promise, this.#done.promise]);
    } finally {
      clearTimeout(timer);
      this.#idle = undefined;
    }
  }

  #onError(error: Error): void {
    this.onerror?.(error);
  }

  #onStdoutError = (error: Error): void => {
    // EPIPE and friends: nobody reads our answers any more, so there is nothing left to serve.
    if (this.#closed) return;
    this.#onOutputError?.(error);
    void this.close();
  };

  #onData(chunk: Buffer): void {
    let data = chunk;
    for (;;) {
      const nl = data.indexOf(0x0a);
      if (nl === -1) {
        this.#append(data);
        return;
      }
      this.#append(data.subarray(0, nl));
      data = data.subarray(nl + 1);
      this.#line();
    }
  }

  #append(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    this.#size += part.length;
    if (this.#size > this.#max) {
      this.#skipping = true;
      this.#chunks = [];
      return;
    }
    this.#chunks.push(part);
  }

  #line(): void {
    if (this.#skipping) {
      this.#skipping = false;
      this.#size = 0;
      void this.#reply(null, -32600, `Invalid Request: message larger than ${this.#max} bytes`);
      return;
    }
    const text = Buffer.concat(this.#chunks).toString("utf8").replace(/\r$/, "");
    this.#chunks = [];
    this.#size = 0;
    if (text.trim() === "") return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      void this.#reply(null, -32700, "Parse error: the line is not valid JSON");
      return;
    }
    const id = typeof raw === "object" && raw !== null && "id" in raw ? (raw as { id: unknown }).id : null;
    const safeId = typeof id === "string" || typeof id === "number" ? id : null;
    // Checked before anything walks the message recursively (schema parsing, handlers, replies).
    if (nestingDepth(raw, this.#maxDepth) > this.#maxDepth) {
      void this.#reply(
        safeId,
        -32600,
        `Invalid Request: the message nests objects and arrays more than ${this.#maxDepth} levels deep`,
      );
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(raw);
    } catch {
      const { code, message } = invalidMessage(raw);
      void this.#reply(safeId, code, message);
      return;
    }
    if ("method" in message && "id" in message && this.#refusedForEra(message)) return;
    if ("method" in message && "id" in message) {
      const requestId = message.id as RequestId;
      if (this.#inflight.has(requestId)) {
        void this.#reply(
          requestId,
          -32600,
          `Invalid Request: request id ${JSON.stringify(requestId)} is already in use by a request still ` +
            "being answered; use a new id for each request",
        );
        return;
      }
      this.#inflight.add(requestId);
    }
    this.onmessage?.(message);
    if ("method" in message && message.method === "notifications/cancelled" && !("id" in message)) {
      // A cancelled request gets no answer: it is no longer in flight (nor holding its id).
      const cancelled = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof cancelled === "string" || typeof cancelled === "number") {
        this.#inflight.delete(cancelled);
        if (this.#inflight.size === 0) this.#idle?.();
      }
    }
  }

  /**
   * The first request other than a `server/discover` probe fixes the connection's era, as
   * docs/MCP.md says: `initialize` opens a
   * 2025-era session, a request with the 2026-07-28 envelope (`params._meta`) pins 2026-07-28.
   * After that a second `initialize` (-32600), a 2026 request on a 2025 session (-32600) and a
   * 2025-era request on a 2026 connection (-32022, as the SDK answers it) are refused here, so
   * the eras never mix on one connection. Whether it answered the request.
   */
  #refusedForEra(message: JSONRPCMessage & { method: string; id: unknown }): boolean {
    const id = message.id as RequestId;
    const meta = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
    const modern = typeof meta === "object" && meta !== null && ENVELOPE_KEY in meta;
    const initialize = message.method === "initialize" && !modern;
    if (this.#era === undefined) {
      // A discovery probe is answered but fixes nothing: a client whose probe timed out (the
      // server was slow to start) falls back to initialize on the same pipe, as @ai-sdk/mcp does.
      if (message.method === "server/discover") return false;
      if (initialize) this.#era = "legacy";
      else if (modern) this.#era = "modern";
      return false;
    }
    if (this.#era === "legacy") {
      if (initialize) {
        void this.#reply(
          id,
          -32600,
          "Invalid Request: this connection is already initialized; keep using it (start the server again for a new session)",
        );
        return true;
      }
      if (modern) {
        void this.#reply(
          id,
          -32600,
          "Invalid Request: this connection opened with initialize and speaks the 2025 era; send the request without " +
            "the 2026-07-28 envelope in params._meta, or use a new connection for 2026-07-28",
        );
        return true;
      }
      return false;
    }
    if (modern) return false;
    void this.#reply(
      id,
      -32022,
      `Unsupported protocol version: this connection speaks 2026-07-28 (its first request said so); ${
        initialize
          ? "initialize belongs to the 2025 era, which needs a new connection"
          : "every request needs the " +
            "2026-07-28 envelope in params._meta"
      }`,
      { supported: ["2026-07-28"] },
    );
    return true;
  }

  #reply(id: RequestId | null, code: number, message: string, data?: unknown): Promise<void> {
    const error = data === undefined ? { code, message } : { code, message, data };
    return this.#write({ jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage);
  }

  #write(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const bytes = encoder.encode(`${JSON.stringify(message)}\n`);
    try {
      writeAllSync(this.#stdout, bytes);
    } catch (e) {
      this.#onStdoutError(e instanceof Error ? e : new Error(String(e)));
    }
    return Promise.resolve();
  }
}
