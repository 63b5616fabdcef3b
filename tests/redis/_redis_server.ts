// A real redis-server for tests, on a free loopback port, with no persistence. When the binary is
// missing the test fails loudly with the install hint: Redis tests are never skipped (.ci/run
// installs redis-server from Debian's packages).

/** A running redis-server. */
export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:PORT` */
  url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>;
  /** Sends one command (RESP, inline arguments) and returns the raw reply text. */
  command(...args: string[]): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

const INSTALL_HINT = "redis-server is not installed: run `apt-get install -y redis-server` " +
  "(sudo when not root); .ci/run installs it when missing";

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Starts redis-server on 127.0.0.1 and waits until it answers PING. */
export async function startRedis(): Promise<RedisServer> {
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    try {
      child = new Deno.Command("redis-server", {
        args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new Error(INSTALL_HINT);
      throw e;
    }
    for (let i = 0; i < 200; i++) {
      try {
        if ((await send(port, ["PING"])).startsWith("+PONG")) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server did not answer on port ${port} within 5 s`);
  };
  const stop = async (): Promise<void> => {
    if (!child) return;
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await child.status;
    child = undefined;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    restart: launch,
    command: (...args: string[]) => send(port, args),
    [Symbol.asyncDispose]: stop,
  };
}

/** One RESP command over a fresh connection; the reply's raw text (enough for tests). */
async function send(port: number, args: string[]): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const enc = new TextEncoder();
    const parts = [`*${args.length}\r\n`, ...args.map((a) => `$${enc.encode(a).length}\r\n${a}\r\n`)];
    await conn.write(enc.encode(parts.join("")));
    const buffer = new Uint8Array(1 << 20);
    const n = await conn.read(buffer);
    return new TextDecoder().decode(buffer.subarray(0, n ?? 0));
  } finally {
    conn.close();
  }
}
