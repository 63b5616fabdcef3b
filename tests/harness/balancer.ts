// A real HAProxy (Debian's `haproxy` package) on loopback in front of server replicas: round
// robin, no stickiness, a health check on /health, and a failed connection retried on another
// replica; legacy SSE (/sse + /message) by client address, as deploy/haproxy.cfg routes it. Every answer names the replica that gave it in `X-Served-By` (r0, r1, ...), so tests
// can see the calls spread. The config goes to a temp dir; `stop()` ends HAProxy and removes it.

/** A running HAProxy. */
export interface Balancer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** Stops HAProxy (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const INSTALL_HINT = "haproxy is not installed: run `apt-get install -y haproxy` (sudo when not root)";

/** A loopback port free now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The HAProxy configuration for `backends` (loopback ports) behind `port`. */
export function haproxyConfig(port: number, backends: readonly number[]): string {
  return [
    "global",
    "  maxconn 2000",
    "defaults",
    "  mode http",
    "  timeout connect 1s",
    "  timeout client 60s",
    "  timeout server 60s",
    "  timeout tunnel 60s",
    // A replica that refuses the connection (killed) is skipped: the request goes to another.
    "  retries 3",
    "  option redispatch 1",
    "  retry-on conn-failure empty-response",
    "frontend mcp",
    `  bind 127.0.0.1:${port}`,
    "  use_backend legacy_sse if { path /sse /message }",
    "  default_backend replicas",
    ...["replicas", "legacy_sse"].flatMap((name) => [
      `backend ${name}`,
      name === "replicas" ? "  balance roundrobin" : "  balance source",
      "  option httpchk",
      "  http-check send meth GET uri /health ver HTTP/1.1 hdr Host 127.0.0.1",
      "  http-response set-header X-Served-By %s",
      ...backends.map((p, i) => `  server r${i} 127.0.0.1:${p} check inter 300ms fall 1 rise 1`),
    ]),
    "",
  ].join("\n");
}

/**
 * The haproxy executable: on PATH, else where Debian's package puts it (/usr/sbin, which a
 * non-root user's PATH often lacks).
 */
export const HAPROXY = (() => {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir && Deno.statSync(`${dir}/haproxy`).isFile) return `${dir}/haproxy`;
    } catch {
      // Not there.
    }
  }
  return "/usr/sbin/haproxy";
})();

/** Starts HAProxy in front of `backends` and waits (up to 5 s) until it accepts connections. */
export async function startBalancer(backends: readonly number[]): Promise<Balancer> {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-haproxy-" });
  const port = freePort();
  const config = `${dir}/haproxy.cfg`;
  Deno.writeTextFileSync(config, haproxyConfig(port, backends));
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(HAPROXY, {
      args: ["-db", "-f", config],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    Deno.removeSync(dir, { recursive: true });
    if (e instanceof Deno.errors.NotFound) throw new Error(INSTALL_HINT);
    throw e;
  }
  let stderr = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      await child.status;
      await reading.catch(() => {});
      Deno.removeSync(dir, { recursive: true });
    })();
    return stopped;
  };
  for (let i = 0;; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      if (i >= 200) {
        await stop();
        throw new Error(`haproxy did not listen on port ${port} within 5 s:\n${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return { origin: `http://127.0.0.1:${port}`, port, stop, [Symbol.asyncDispose]: stop };
}
