// Socket I/O of the connection guard (_conn_guard.ts): writing whole, draining, answering a
// connection the guard refuses and closing without throwing.

/** An answer the guard gives in place of the server: a status and a message for the client. */
export interface Refusal {
  status: number;
  message: string;
}

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

/** The JSON-RPC error body of a refusal. */
export function refusalBody(error: Refusal): string {
  return JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: error.message } });
}

/** The headers of a refusal's answer, besides its length: the connection ends with it. */
export function refusalHeaders(error: Refusal): Record<string, string> {
  return {
    "Content-Type": "application/json",
    ...(error.status === 503 ? { "Retry-After": "1" } : {}),
    "Connection": "close",
  };
}

/** A refusal as the bytes of an HTTP/1.1 answer, for a connection the server never sees. */
export function errorResponse(error: Refusal): Uint8Array {
  const body = refusalBody(error);
  const headers = Object.entries(refusalHeaders(error)).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return encoder.encode(
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? "Error"}\r\n` +
      `Content-Length: ${encoder.encode(body).length}\r\n${headers}\r\n${body}`,
  );
}

/** Answers a connection never admitted, then closes it after a short drain (see LINGER_MS). */
export async function answerAndClose(conn: Deno.Conn, error: Refusal): Promise<void> {
  try {
    await writeAll(conn, errorResponse(error));
    await conn.closeWrite();
    await within(drain(conn), REFUSED_LINGER_MS);
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

/** True once `event` settles, false if `ms` milliseconds pass first. */
export async function within(event: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = await Promise.race([
    event.then(() => true, () => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return done;
}

export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

const REASONS: Record<number, string> = {
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};
