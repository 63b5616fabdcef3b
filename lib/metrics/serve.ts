// `GET /metrics`: the answer itself (shared by the HTTP server's route and the listener of its
// own), and that listener (`metrics_port`), which serves over any transport, stdio included.
import { ConfigError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { BearerAuth } from "../bearer_auth.ts";
import type { ServerSettings } from "../config/server_settings.ts";
import { EXPOSITION_CONTENT_TYPE } from "./registry.ts";
import type { ServerMetrics } from "./mod.ts";

/** Answers one request for `/metrics`: method, then the bearer token when one is required. */
export async function metricsResponse(
  req: Request,
  metrics: ServerMetrics,
  auth: BearerAuth | null,
  realm: string,
): Promise<Response> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return new Response("Method not allowed: /metrics answers GET and HEAD\n", {
      status: 405,
      headers: { "Allow": "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" },
    });
  }
  if (auth) {
    const verdict = await auth.check(req.headers.get("authorization"));
    if (verdict !== "ok") {
      return new Response(
        verdict === "missing"
          ? "Unauthorized: send the header Authorization: Bearer <token> (the metrics token)\n"
          : "Unauthorized: the bearer token is not valid for /metrics\n",
        {
          status: 401,
          headers: {
            "Content-Type": "text/plain; charset=utf-8",
            "WWW-Authenticate": verdict === "missing"
              ? `Bearer realm="${realm}"`
              : `Bearer realm="${realm}", error="invalid_token"`,
          },
        },
      );
    }
  }
  const body = await metrics.render();
  return new Response(req.method === "HEAD" ? null : body, {
    headers: { "Content-Type": EXPOSITION_CONTENT_TYPE, "Cache-Control": "no-store" },
  });
}

/** The token `/metrics` on the MCP HTTP server requires: `metrics_token`, else `auth_token`, else none. */
export function metricsAuth(settings: ServerSettings): BearerAuth | null {
  const token = settings.metrics_token ?? settings.auth_token;
  return token ? new BearerAuth(token) : null;
}

/** A running metrics listener. */
export interface MetricsListener {
  /** The port it listens on (the one chosen when `metrics_port` is 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `/metrics` alone on `metrics_host:metrics_port`, with `metrics_token` when set (the
 * listen address is its own protection otherwise: loopback by default).
 */
export function serveMetrics(
  metrics: ServerMetrics,
  settings: ServerSettings,
  logger: Logger,
  isNetAllowed: (host: string) => boolean,
): MetricsListener {
  const host = settings.metrics_host;
  const port = settings.metrics_port ?? 0;
  const address = `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
  if (!isNetAllowed(address)) {
    throw new ConfigError(
      "server.metrics_port",
      `Not allowed to listen on "${address}" for metrics: this process's --allow-net does not include it. ` +
        "deno task start allows loopback and wildcard addresses on any port; choose one, or add the host to " +
        "permissions.default.net in deno.json",
    );
  }
  const auth = settings.metrics_token ? new BearerAuth(settings.metrics_token) : null;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({ hostname: host, port, onListen: () => {} }, (req) => {
      const path = new URL(req.url).pathname;
      if (path !== "/metrics") {
        return new Response(`Not found: "${path}"; this listener serves only /metrics\n`, { status: 404 });
      }
      return metricsResponse(req, metrics, auth, settings.name);
    });
  } catch (e) {
    throw new ConfigError(
      "server.metrics_port",
      `Cannot listen on "${address}" for metrics: ${e instanceof Error ? e.message : String(e)}. ` +
        "Choose another metrics_port (0 picks a free one)",
    );
  }
  const loopback = /^(127\.|::1$|\[::1\]$|localhost$)/.test(host);
  if (!auth && !loopback) {
    logger.warn(
      "the metrics listener is reachable beyond this machine without a token: set metrics_token " +
        "(MCP_METRICS_TOKEN), or bind metrics_host to 127.0.0.1",
      { host },
    );
  }
  logger.info("serving metrics", {
    url: `http://${address.replace(/:\d+$/, "")}:${server.addr.port}/metrics`,
    port: server.addr.port,
    auth: auth ? "bearer" : "none",
  });
  return {
    port: server.addr.port,
    close: () => server.shutdown(),
  };
}
