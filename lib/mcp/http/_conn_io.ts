// Socket I/O of the connection guard (_conn_guard.ts): writing whole, draining, answering a
// malformed request head and closing without throwing.
import type { FramingError } from "./_http1.ts";

const encoder = new TextEncoder();

/**
 * How long a connection refused at the cap keeps being read before it is closed (as the guard's
 * LINGER_MS: closing a socket with unread input resets it), while it holds a descriptor.
 */
const REFUSED_LINGER_MS = 500;

/** Whether `e` says the process (EMFILE) or the system (ENFILE) ran out of file descriptors. */
export function isFdExhaustion(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "EMFILE" || code === "ENFILE") return true;
  return /\(os error 2[34]\)|too many open files/i.test(errorText(e));
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function errorResponse(error: FramingError): Uint8Array {
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: error.message } });
  return encoder.encode(
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? "Error"}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${encoder.encode(body).length}\r\n` +
      (error.status === 503 ? "Retry-After: 1\r\n" : "") + `Connection: close\r\n\r\n${body}`,
  );
}

/** Answers a connection never admitted, then closes it after a short drain (see LINGER_MS). */
export async function answerAndClose(conn: Deno.Conn, error: FramingError): Promise<void> {
  try {
    await writeAll(conn, errorResponse(error));
    await conn.closeWrite();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      drain(conn),
      new Promise((resolve) => {
        timer = setTimeout(resolve, REFUSED_LINGER_MS);
      }),
    ]);
    clearTimeout(timer);
  } catch {
    // The client is gone already.
  }
  closeQuietly(conn);
}

/** Reads and drops what the client sends until it closes or the connection fails. */
export async function drain(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(4096);
  try {
    while ((await conn.read(buf)) !== null) {
      // Dropped.
    }
  } catch {
    // Closed under us: done.
  }
}

export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

export function join(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  405: "Method Not Allowed",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};
