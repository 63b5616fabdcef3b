// Who may call: Host and Origin checks against DNS rebinding, CORS, and the bearer token
// (lib/bearer_auth.ts, shared with the metrics listener).

export { BearerAuth } from "../../bearer_auth.ts";

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether `host` (a name or address, without port) is a loopback name. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.has(h) || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** A `Host` value: a name or bracketed IPv6 address, then an optional numeric port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^\s:@/?#\[\]]+)(?::\d{1,5})?$/;

/**
 * The host name of a `Host` header value (`[::1]:8000` -> `[::1]`, `a.b:80` -> `a.b`), or ""
 * when the value is not a host and port (`localhost:8000@evil.example` names no loopback host).
 */
export function hostnameOf(hostHeader: string): string {
  return HOST_HEADER.exec(hostHeader.trim().toLowerCase())?.[1] ?? "";
}

/** The settings the access checks read. */
export interface AccessPolicy {
  /** The listen address: Host checking is on by default only for loopback. */
  bindHost: string;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  corsOrigins: readonly string[];
}

/**
 * Why a `Host` header is refused, or undefined when it is accepted. When bound to a loopback
 * address only loopback names (and `allowed_hosts`) are accepted, which defeats DNS rebinding;
 * otherwise only a configured `allowed_hosts` list is enforced.
 */
export function hostRefusal(host: string | null, policy: AccessPolicy): string | undefined {
  const loopbackBind = isLoopbackHost(policy.bindHost);
  if (!loopbackBind && policy.allowedHosts.length === 0) return undefined;
  if (host === null || host === "") return "A Host header is required";
  const name = hostnameOf(host);
  const listed = policy.allowedHosts.some((h) => {
    const entry = h.toLowerCase();
    return entry === "*" || entry === host.toLowerCase() || entry === name;
  });
  if (listed || (loopbackBind && isLoopbackHost(name))) return undefined;
  return `Host "${host}" is not allowed: this server accepts ${
    loopbackBind
      ? "only loopback host names (localhost, 127.0.0.1, [::1])"
      : "only the hosts in MCP_ALLOWED_HOSTS"
  }; add the name to MCP_ALLOWED_HOSTS (server.allowed_hosts) to accept it`;
}

/**
 * Why an `Origin` header is refused, or undefined when it is accepted. Requests without an
 * Origin (non-browser clients) pass; browser origins pass when they are loopback pages, listed
 * in `allowed_origins` or `cors_origins`, or when `allowed_origins` holds `*`.
 */
export function originRefusal(origin: string | null, policy: AccessPolicy): string | undefined {
  if (origin === null) return undefined;
  if (policy.allowedOrigins.includes("*") || policy.allowedOrigins.includes(origin)) return undefined;
  if (policy.corsOrigins.includes(origin)) return undefined;
  try {
    const url = new URL(origin);
    if ((url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname)) {
      return undefined;
    }
  } catch {
    // "null" and other opaque origins fall through to the refusal.
  }
  return `Origin "${origin}" is not allowed: add it to MCP_ALLOWED_ORIGINS (server.allowed_origins), ` +
    `or to MCP_CORS_ORIGINS for a browser client`;
}

const EXPOSED = "Mcp-Session-Id, Mcp-Protocol-Version, X-Request-Id, WWW-Authenticate, Retry-After";
const ALLOWED_REQUEST_HEADERS =
  "Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, X-Request-Id";

/** CORS headers for a response to `origin`, or none when the origin is not a CORS origin. */
export function corsHeaders(origin: string | null, corsOrigins: readonly string[]): Record<string, string> {
  if (origin === null || !(corsOrigins.includes("*") || corsOrigins.includes(origin))) return {};
  return {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Expose-Headers": EXPOSED,
    "Vary": "Origin",
  };
}

/** Extra headers of a CORS preflight answer. */
export function preflightHeaders(): Record<string, string> {
  return {
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": ALLOWED_REQUEST_HEADERS,
    "Access-Control-Max-Age": "600",
  };
}
