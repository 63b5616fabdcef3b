// The HTTP handler's (handler.ts) request-level pieces: the headers only the server sets, the
// client's address, answers for a wrong method or path, and the OAuth resource server the
// settings ask for.
import type { ServedApp } from "../served_app.ts";
import type { Clock } from "../../clock.ts";
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import { isLoopbackHost } from "./_security.ts";
import type { OAuthResourceServer } from "./oauth.ts";
import { ConfigError } from "../../errors.ts";

/** What `Deno.serve` tells a handler about the connection (only the peer address is read). */
export interface ConnectionInfo {
  remoteAddr?: { hostname?: string };
  /**
   * The URL the client asked for, when the request's own is another (a server in front that
   * names its own address): used in its place, so the request need not be copied to change it.
   */
  url?: string;
  /**
   * The request came through the connection guard: its body may be read whole, since a body
   * that stalls is answered 408 with `Connection: close` and its connection then ends, which
   * ends a read still pending.
   */
  guarded?: boolean;
  /**
   * Settles when the HTTP server has sent the response, or failed to (Deno.serve's
   * `info.completed`): what is in flight is then counted without following the body.
   */
  completed?: Promise<void>;
}

/**
 * Headers only this server once set on forwarded requests (whose work, which client, which
 * toolsets, the request id): that now travels in the request's context, and a client's own
 * values are dropped so that nothing past the handler can mistake them for the server's.
 */
export const SERVER_SET = new Set([
  "x-request-id",
  "x-opendata-owner",
  "x-opendata-toolsets",
  "x-opendata-client",
]);
/**
 * Client credentials, dropped once checked: nothing past the handler (the SDK, tools, upstream
 * requests) ever sees a client's token.
 */
export const CREDENTIALS = new Set(["authorization", "cookie", "proxy-authorization"]);

/** Whether header `name` goes no further than the handler (see {@linkcode forwardedRequest}). */
export function isDroppedHeader(name: string): boolean {
  return CREDENTIALS.has(name) || SERVER_SET.has(name);
}

/** A request's headers split as {@linkcode forwardedRequest} needs them (from one pass over them). */
export interface HeaderSplit {
  /** The headers that go on. */
  kept: [string, string][];
  /** Whether any header is dropped. */
  drops: boolean;
}

/** `req`'s headers, split into those that go on and whether any is dropped. */
export function splitHeaders(req: Request): HeaderSplit {
  const split: HeaderSplit = { kept: [], drops: false };
  req.headers.forEach((v, k) => splitHeader(split, k, v));
  return split;
}

/** Files header `k: v` in `split`: kept to go on past the handler, or noted as dropped. */
export function splitHeader(split: HeaderSplit, k: string, v: string): void {
  if (isDroppedHeader(k)) split.drops = true;
  else split.kept.push([k, v]);
}

/**
 * The request as the SDK and the core see it, its body already read by the handler: `req`
 * itself when it carries nothing to drop and its URL is `url`, else a header-only copy without
 * the client's credentials and the headers only this server may set. `split`
 * is its headers' split when already made (the admission step makes it).
 */
export function forwardedRequest(
  req: Request,
  url: string = req.url,
  split: HeaderSplit = splitHeaders(req),
): Request {
  if (!split.drops && url === req.url) return req;
  // Built from the list (cheaper than copying the headers and then deleting names, each of
  // which scans the whole list).
  return new Request(url, { method: req.method, headers: split.kept });
}

export function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function clientIp(req: Request, info: ConnectionInfo | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    // The last entry is the one our own proxy appended; earlier ones are the client's to forge.
    const forwarded = req.headers.get("x-forwarded-for")?.split(",").map((s) => s.trim()).filter(Boolean);
    const last = forwarded?.at(-1);
    if (last) return last;
  }
  return info?.remoteAddr?.hostname ?? "unknown";
}

export function isJson(contentType: string | null): boolean {
  return contentType?.split(";")[0]?.trim().toLowerCase() === "application/json";
}

export function allowOf(path: string): string {
  if (path === "/mcp") return "GET, POST, DELETE, OPTIONS";
  if (path === "/message") return "POST, OPTIONS";
  return "GET, HEAD, OPTIONS";
}

export function methodIs(req: Request, allowed: readonly string[]): Response | undefined {
  if (allowed.includes(req.method)) return undefined;
  return jsonRpcError(405, SERVER_ERROR, `Method not allowed: use ${allowed.join(" or ")}`, {
    headers: { "Allow": [...allowed, "OPTIONS"].join(", ") },
  });
}

export function notFound(path: string): Response {
  return Response.json(
    { error: `Not found: "${path}"`, endpoints: ["/mcp", "/sse", "/message", "/health", "/"] },
    { status: 404 },
  );
}

/**
 * A handler's OAuth resource server: its issuer at once, its code (oauth.ts, oauth_claims.ts)
 * loaded on the first readiness check or request that needs it, so a start without OAuth never
 * loads it.
 */
export interface LazyOAuth {
  issuer: string;
  /** {@linkcode OAuthResourceServer.discover} */
  discover(): Promise<unknown>;
  /** {@linkcode OAuthResourceServer.verify} */
  verify(...args: Parameters<OAuthResourceServer["verify"]>): ReturnType<OAuthResourceServer["verify"]>;
}

/** `server` (made now, or on the first call of `make`) as a {@linkcode LazyOAuth}. */
export function lazyOAuth(issuer: string, make: () => Promise<OAuthResourceServer>): LazyOAuth {
  let made: Promise<OAuthResourceServer> | undefined;
  // A failed load is not kept: the next request tries again instead of failing until a restart.
  const server = (): Promise<OAuthResourceServer> =>
    made ??= make().catch((e) => {
      made = undefined;
      throw e;
    });
  return {
    issuer,
    discover: async () => await (await server()).discover(),
    verify: async (...args) => await (await server()).verify(...args),
  };
}

/** A resource server made beforehand (tests) as a {@linkcode LazyOAuth}. */
export function givenOAuth(server: OAuthResourceServer): LazyOAuth {
  return lazyOAuth(server.options.issuer, () => Promise.resolve(server));
}

/**
 * The OAuth resource server `oauth_issuer` asks for, or null. Refuses settings that cannot work
 * together, naming the fix.
 */
export function oauthOf(
  app: ServedApp,
  clock: Clock,
  isNetAllowed: ((host: string) => boolean) | undefined,
): LazyOAuth | null {
  const s = app.config.server;
  if (!s.oauth_issuer) return null;
  if (s.auth_token) {
    throw new ConfigError(
      "server.oauth_issuer",
      "Cannot use both MCP_AUTH_TOKEN and MCP_OAUTH_ISSUER: unset MCP_AUTH_TOKEN to take OAuth access tokens",
    );
  }
  if ((s.oauth_client_id === null) !== (s.oauth_client_secret === null)) {
    throw new ConfigError(
      "server.oauth_client_id",
      "Token introspection needs both MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET (or neither, for JWT tokens only)",
    );
  }
  if (!s.public_url && !isLoopbackHost(s.http_host)) {
    throw new ConfigError(
      "server.public_url",
      "With MCP_OAUTH_ISSUER on a non-loopback address, set MCP_PUBLIC_URL to the URL clients reach this " +
        "server at (e.g. https://mcp.example.com): access tokens are checked against it, never against a Host header",
    );
  }
  const issuer = s.oauth_issuer;
  return lazyOAuth(issuer, async () => {
    const { OAuthResourceServer } = await import("./oauth.ts");
    return new OAuthResourceServer({
      issuer,
      audiences: s.oauth_audience,
      scopes: s.oauth_scopes,
      clockSkewS: s.oauth_clock_skew,
      clock,
      logger: app.http.logger,
      ...(isNetAllowed ? { isNetAllowed } : {}),
      ...(s.oauth_client_id && s.oauth_client_secret
        ? { introspection: { clientId: s.oauth_client_id, clientSecret: s.oauth_client_secret } }
        : {}),
    });
  });
}

export function plain(status: number, message: string): Response {
  return Response.json({ error: message }, { status });
}
