// Middleware: who calls (the OAuth access token, or the shared bearer token) and which toolsets
// the request's server lists; a request without valid credentials or with an unknown toolset is
// answered here. Also where the server's public URL and its protected resources are worked out.
import { clientKey } from "./_client_key.ts";
import { INVALID_PARAMS, jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import { ownerHash } from "../../output/owner_hash.ts";
import { parseToolsetList, UnknownToolsetError } from "../toolsets.ts";
import type { HttpState, RequestContext } from "./_context.ts";

/** Where the protected resource metadata is (RFC 9728), in root and path (`/mcp`) forms. */
export const PRM_PATH = "/.well-known/oauth-protected-resource";

/** Whether `path` is a legacy SSE endpoint, a protected resource of its own (`/sse`). */
function isLegacyPath(path: string): boolean {
  return path === "/sse" || path === "/message";
}

/**
 * The resources a token may name: legacy SSE is its own protected resource (RFC 9728: one per
 * path), so a client that starts there gets metadata naming its URL; a token for /mcp works there
 * too (one server).
 */
function accepted(base: string, legacy: boolean): string | string[] {
  return legacy ? [`${base}/sse`, `${base}/mcp`] : `${base}/mcp`;
}

/**
 * The server's public base URL: `public_url` behind a proxy, else the URL the request reached
 * (with OAuth off loopback, `public_url` is required: see oauthOf).
 */
export function publicBase(state: HttpState, url: URL): string {
  const settings = state.settings;
  if (settings.public_url) return settings.public_url.replace(/\/+$/, "");
  // On loopback the Host names the host, but the port is this server's own: otherwise a token
  // another local server of the same issuer received would pass here with its port in Host.
  if (settings.http_port === 0) return url.origin;
  const own = new URL(url.origin);
  own.port = String(settings.http_port);
  return own.origin;
}

/**
 * Who calls: the OAuth principal (its id is then the client key) or the bearer token's holder,
 * set on `ctx.caller`; a request without valid credentials is answered 401 or 403 with the
 * challenge.
 */
export async function authenticate(state: HttpState, ctx: RequestContext): Promise<Response | undefined> {
  const { oauth, auth, settings } = state;
  const { req, url, path, fields } = ctx;
  if (oauth) {
    const legacy = isLegacyPath(path);
    const verdict = await oauth.verify(
      req.headers.get("authorization"),
      accepted(publicBase(state, url), legacy),
    );
    if (!verdict.ok) {
      fields["refused"] = "auth";
      ctx.log().warn("unauthorized request", {
        path,
        client_ip: fields["client_ip"],
        reason: verdict.error ?? "missing",
        detail: verdict.description,
      });
      return jsonRpcError(
        verdict.status,
        SERVER_ERROR,
        `${verdict.status === 401 ? "Unauthorized" : "Forbidden"}: ${verdict.description}`,
        {
          headers: {
            "WWW-Authenticate": (await import("./oauth_claims.ts")).challenge(
              verdict,
              `${publicBase(state, url)}${PRM_PATH}${legacy ? "/sse" : "/mcp"}`,
              settings.oauth_scopes,
            ),
          },
        },
      );
    }
    ctx.caller = {
      principal: verdict.principal,
      clientKey: clientKey("", { principal: verdict.principal.id }),
    };
    // Who it was, without naming them: the hash their files are kept under.
    fields["user"] = ownerHash(verdict.principal.id);
    if (verdict.principal.clientId) fields["oauth_client"] = verdict.principal.clientId;
  }
  if (auth) {
    const verdict = await auth.check(req.headers.get("authorization"));
    if (verdict !== "ok") {
      fields["refused"] = "auth";
      ctx.log().warn("unauthorized request", { path, client_ip: fields["client_ip"], reason: verdict });
      return jsonRpcError(
        401,
        SERVER_ERROR,
        verdict === "missing"
          ? "Unauthorized: send the header Authorization: Bearer <token>"
          : "Unauthorized: the bearer token is not valid",
        {
          headers: {
            "WWW-Authenticate": verdict === "missing"
              ? `Bearer realm="${settings.name}"`
              : `Bearer realm="${settings.name}", error="invalid_token"`,
          },
        },
      );
    }
  }
  return undefined;
}

/**
 * Which toolsets this request's server lists, set on `ctx.toolsets`: the path, else the header
 * (or, for legacy SSE, the query), else the configured default; unknown toolsets are refused.
 */
export function requestToolsets(
  state: HttpState,
  ctx: RequestContext,
  pathToolsets: string | undefined,
): Response | undefined {
  const { req, url, path } = ctx;
  const asked = pathToolsets ?? req.headers.get("x-mcp-toolsets") ??
    (path === "/sse" ? url.searchParams.get("toolsets") : null);
  if (asked === null || asked.trim() === "") return undefined;
  try {
    ctx.toolsets = state.app.catalog.resolve(parseToolsetList(asked));
  } catch (e) {
    if (!(e instanceof UnknownToolsetError)) throw e;
    ctx.fields["refused"] = "toolsets";
    return jsonRpcError(400, INVALID_PARAMS, `Invalid toolsets: ${e.message}`);
  }
  return undefined;
}
