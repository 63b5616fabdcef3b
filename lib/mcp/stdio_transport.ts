import { Buffer } from "node:buffer";
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { JSONRPCMessageSchema } from "./sdk.ts";
import type { JSONRPCMessage, Transport } from "./sdk.ts";

/** Options for {@linkcode LineStdioTransport}. */
export interface LineStdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** The longest line accepted; longer ones are answered with -32600 and skipped. */
  maxLineBytes?: number;
}

/**
 * MCP over newline-delimited JSON on stdin/stdout. Unlike the SDK's stdio transport, a line
 * that is not JSON gets a -32700 answer, a line that is not JSON-RPC a -32600 answer, and an
 * oversized line is skipped with -32600, instead of being dropped or closing the session.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #stdin: Readable;
  #stdout: Writable;
  #max: number;
  #chunks: Buffer[] = [];
  #size = 0;
  #skipping = false;
  #closed = false;

  constructor(options: LineStdioOptions = {}) {
    this.#stdin = options.stdin ?? process.stdin;
    this.#stdout = options.stdout ?? process.stdout;
    this.#max = options.maxLineBytes ?? 4 * 1024 * 1024;
  }

  start(): Promise<void> {
    this.#stdin.on("data", this.#onData);
    this.#stdin.on("error", this.#onError);
    this.#stdin.once("end", this.#onEnd);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#stdin.off("data", this.#onData);
    this.#stdin.off("error", this.#onError);
    this.#stdin.off("end", this.#onEnd);
    if (this.#stdin.listenerCount("data") === 0) this.#stdin.pause();
    this.onclose?.();
    return Promise.resolve();
  }

  #onEnd = (): void => {
    void this.close();
  };

  #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  #onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
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
  };

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
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const id = typeof raw === "object" && raw !== null && "id" in raw ? (raw as { id: unknown }).id : null;
      const safeId = typeof id === "string" || typeof id === "number" ? id : null;
      void this.#reply(
        safeId,
        -32600,
        'Invalid Request: expected a JSON-RPC 2.0 message with "jsonrpc": "2.0" and a "method", "result" or "error"',
      );
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #reply(id: string | number | null, code: number, message: string): Promise<void> {
    return this.#write({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }

  #write(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#stdout.once("drain", resolve);
    });
  }
}
