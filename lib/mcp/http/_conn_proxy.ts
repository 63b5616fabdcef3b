// The connection guard's proxy way (_conn_guard.ts): each connection's bytes are copied to
// Deno's HTTP server over a loopback connection the guard opens with the first head, and its
// answers copied back. Seeing the bytes, the guard can answer an unfinished head 408, serve a
// client that half-closes after its request, and time an answer no byte of which moves.
import { errorText, isFdExhaustion, writeAll } from "./_conn_io.ts";
import type { Refusal } from "./_conn_io.ts";
import { BUFFER_BYTES, CLIENT_BUFFER_BYTES, holdFirstHead } from "./_conn_types.ts";
import type { Guarded } from "./_conn_types.ts";

/** What the copy loops need of the guard. */
export interface ProxyHost {
  now(): number;
  /** Opens a loopback connection to the HTTP server behind the guard. */
  connect(): Promise<Deno.TcpConn>;
  /** Files `c` under its inner connection's local address (for `dispatch`). */
  register(c: Guarded): void;
  close(c: Guarded): void;
  /** Answers `error` with `Connection: close`, then finishes the connection. */
  refuse(c: Guarded, error: Refusal): Promise<void>;
  /** Ends a connection whose last answer went out. */
  finish(c: Guarded): void;
  /** Tells the server no more requests come on this connection. */
  endInner(c: Guarded): void;
  exhausted(): void;
  warn(kind: string, msg: string, fields: Record<string, unknown>): void;
}

/** Copies what the client sends to the server, opening the connection to it with the first head. */
export async function copyFromClient(host: ProxyHost, c: Guarded): Promise<void> {
  const buf = new Uint8Array(CLIENT_BUFFER_BYTES);
  try {
    for (;;) {
      const n = await c.client.read(buf);
      if (n === null) {
        // A half-closed client may still wait for its answers. The server behind the guard
        // drops a request whose connection half-closes, so it is told only once nothing is
        // owed: now, or when the last answer has gone out (see `done` in dispatch).
        c.clientDone = true;
        if (!c.inner || c.finishingSince !== undefined) host.close(c);
        else if (c.inflight === 0 && !c.partial) host.endInner(c);
        return;
      }
      if (c.finishingSince !== undefined || c.pendingError) continue;
      const now = host.now();
      c.lastProgress = now;
      if (!c.partial && c.inflight === 0) {
        // A head begins: its deadline runs from here (from accept, for the first).
        c.partial = true;
        if (c.served > 0) c.headStartedAt = now;
      }
      let bytes: Uint8Array = buf.subarray(0, n);
      if (!c.inner) {
        // Until its first head is whole, a connection costs one descriptor, not three.
        const head = holdFirstHead(c, bytes);
        if (head === "wait") continue;
        if (!(head instanceof Uint8Array)) {
          await host.refuse(c, head);
          continue;
        }
        bytes = head;
      }
      const inner = c.inner ?? await open(host, c);
      if (!inner) return;
      try {
        await writeAll(inner, bytes);
      } catch {
        // The server closed its side (an answer with `Connection: close`): what it wrote is
        // still passed on by #fromServer, which then ends the connection.
        c.finishingSince ??= host.now();
        continue;
      }
      c.lastProgress = host.now();
    }
  } catch {
    host.close(c);
  } finally {
    c.reading = false;
  }
}

/** Copies what the server answers to the client, until the server ends its side. */
async function copyFromServer(host: ProxyHost, c: Guarded, inner: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(BUFFER_BYTES);
  try {
    for (;;) {
      const n = await inner.read(buf);
      if (n === null) break;
      c.sending = true;
      await writeAll(c.client, buf.subarray(0, n));
      c.sending = false;
      c.lastProgress = c.lastSent = host.now();
    }
  } catch {
    // The client or the server went away: nothing more to pass on.
    host.close(c);
    return;
  }
  // Every answer the server wrote has been passed on.
  if (c.pendingError) await host.refuse(c, c.pendingError);
  else host.finish(c);
}

/** Opens the connection to the server behind the guard for `c`; null when it could not. */
async function open(host: ProxyHost, c: Guarded): Promise<Deno.TcpConn | null> {
  try {
    const inner = await host.connect();
    if (c.closed) {
      inner.close();
      return null;
    }
    try {
      inner.setNoDelay(true);
    } catch {
      // Already gone: the first write says so.
    }
    const local = inner.localAddr as Deno.NetAddr;
    c.inner = inner;
    c.innerKey = `${local.hostname}:${local.port}`;
    host.register(c);
    void copyFromServer(host, c, inner);
    return inner;
  } catch (e) {
    if (isFdExhaustion(e)) host.exhausted();
    else host.warn("connect", "cannot reach the HTTP server behind the guard", { error: errorText(e) });
    await host.refuse(c, {
      status: 503,
      message: "Service Unavailable: the server is at its connection limit; retry shortly",
    });
    return null;
  }
}
