// The 2024-11-05 HTTP+SSE transport, for clients that speak only it (docs/MCP.md): GET /sse opens a
// stream that first names the POST endpoint, then carries every server message as `event: message`.
import type { JSONRPCMessage, Transport } from "../sdk.ts";

/** What the transport hands the SDK with each incoming message (headers, URL). */
export type IncomingInfo = Parameters<NonNullable<Transport["onmessage"]>>[1];

/** Options for {@linkcode LegacySseTransport}. */
export interface LegacySseOptions {
  /** The URL clients POST to (relative to the stream's URL). */
  endpoint: string;
  /** Starts the keep-alive timer; returns its cancel function. */
  every: (ms: number, fn: () => void) => () => void;
  keepAliveMs: number;
  /** Bytes queued for a client that does not read before the session is dropped. */
  maxBacklogBytes: number;
  /** Called when the session is dropped for a client that stopped reading. */
  onSlowClient?: () => void;
}

const encoder = new TextEncoder();

/**
 * One legacy SSE session as an SDK `Transport`: `stream` is the response body of `GET /sse`,
 * `receive()` takes what arrives at `POST /message`.
 */
export class LegacySseTransport implements Transport {
  readonly sessionId: string;
  readonly stream: ReadableStream<Uint8Array>;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #options: LegacySseOptions;
  #closed = false;
  #stopKeepAlive?: () => void;
  #pending = new Set<string | number>();

  constructor(sessionId: string, options: LegacySseOptions) {
    this.sessionId = sessionId;
    this.#options = options;
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        // The client went away: the session ends with its stream.
        cancel: () => this.close(),
      },
      { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
    );
  }

  /** Requests received whose response has not been sent yet. */
  get pending(): number {
    return this.#pending.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  start(): Promise<void> {
    this.#write(`event: endpoint\ndata: ${this.#options.endpoint}\n\n`);
    this.#stopKeepAlive = this.#options.every(
      this.#options.keepAliveMs,
      () => this.#write(": keepalive\n\n"),
    );
    return Promise.resolve();
  }

  /** Hands one message from `POST /message` to the server. */
  receive(message: JSONRPCMessage, info: IncomingInfo): void {
    if ("method" in message && "id" in message) {
      if (this.#pending.has(message.id)) {
        // Two requests in flight with one id would have their answers crossed: refuse the newcomer.
        const refusal = {
          jsonrpc: "2.0",
          id: message.id,
          error: {
            code: -32600,
            message:
              `Invalid Request: request id ${JSON.stringify(message.id)} is already in use by a request ` +
              "still being answered in this session; use a new id for each request",
          },
        };
        this.#write(`event: message\ndata: ${JSON.stringify(refusal)}\n\n`);
        return;
      }
      this.#pending.add(message.id);
    }
    if ("method" in message && message.method === "notifications/cancelled") {
      // A cancelled request is never answered: without this the session would stay busy.
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === "string" || typeof requestId === "number") this.#pending.delete(requestId);
    }
    this.onmessage?.(message, info);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("The SSE stream of this session is closed"));
    if (("result" in message || "error" in message) && message.id !== undefined && message.id !== null) {
      this.#pending.delete(message.id);
    }
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#end(false);
    return Promise.resolve();
  }

  /** Ends the session; `discard` drops what is still queued instead of letting it drain. */
  #end(discard: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopKeepAlive?.();
    this.#pending.clear();
    try {
      if (discard) this.#controller.error(new Error("The client stopped reading"));
      else this.#controller.close();
    } catch {
      // Already cancelled by the client.
    }
    this.onclose?.();
  }

  #write(text: string): void {
    if (this.#closed) return;
    try {
      this.#controller.enqueue(encoder.encode(text));
    } catch {
      this.#end(true);
      return;
    }
    // A client that stops reading would otherwise make the queue grow without bound.
    const desired = this.#controller.desiredSize;
    if (desired !== null && desired < -this.#options.maxBacklogBytes) {
      this.#options.onSlowClient?.();
      this.#end(true);
    }
  }
}
