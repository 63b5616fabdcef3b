// Raw-socket helpers for the connection guard's tests (conn_direct_test.ts, conn_guard_copy_test.ts).

const enc = new TextEncoder();

/** The limits the guard's tests start from: ten connections, 1 s for heads, idling and bodies. */
export const GUARD_LIMITS = {
  maxConnections: 10,
  headerTimeoutMs: 1000,
  idleTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
} as const;
const dec = new TextDecoder();

/** A new connection to `port` on loopback, `text` sent on it. */
export async function sendOn(port: number, text: string): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(enc.encode(text));
  return conn;
}

/** Everything `conn` receives until it closes or `ms` pass (the first 4 KiB of it as text). */
export async function readFor(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; bytes: number; closed: boolean }> {
  const buf = new Uint8Array(1 << 20);
  let text = "";
  let bytes = 0;
  const timer = setTimeout(() => conn.close(), ms);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return { text, bytes, closed: true };
      bytes += n;
      if (text.length < 4096) text += dec.decode(buf.subarray(0, n));
    }
  } catch {
    return { text, bytes, closed: false };
  } finally {
    clearTimeout(timer);
  }
}

/** Reads from `conn` until `total` bytes have come (counting `already`) or it closes; the count. */
export async function readUpTo(conn: Deno.Conn, total: number, already = 0): Promise<number> {
  let got = already;
  const buf = new Uint8Array(1 << 20);
  while (got < total) {
    const n = await conn.read(buf);
    if (n === null) break;
    got += n;
  }
  return got;
}
