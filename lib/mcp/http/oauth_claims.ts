// What the OAuth resource server (oauth.ts) reads and answers: who a token speaks for (the
// principal and its scopes), why a JWT or an introspection answer is refused, and the
// WWW-Authenticate challenge and protected-resource metadata a client discovers the server by.
import { ConfigError } from "../../errors.ts";
import { isLoopbackHost } from "./_security.ts";

type Jose = typeof import("jose");

/** Who a valid access token speaks for. */
export interface Principal {
  issuer: string;
  subject: string;
  /** The scopes the token grants. */
  scopes: readonly string[];
  /** The OAuth client the token was issued to, when the token says. */
  clientId?: string;
  /**
   * The stable key of this user (issuer and subject): the owner of their jobs, files and
   * projects, and the client key for per-client limits.
   */
  id: string;
}

/** The outcome of checking a request's credentials. */
export type Verdict =
  | { ok: true; principal: Principal }
  | {
    ok: false;
    /** 401: no or a bad token; 403: a good token without the scopes needed. */
    status: 401 | 403;
    /** RFC 6750 error code; absent when no credentials were sent. */
    error?: "invalid_request" | "invalid_token" | "insufficient_scope";
    /** What went wrong and what to do, for the client (never the token). */
    description: string;
  };

/**
 * Refuses plain HTTP to the authorization server except on loopback: keys or introspection
 * answers fetched in clear text could be swapped on the way (MCP: its endpoints MUST be HTTPS).
 */
export function checkTls(raw: string, what: string): void {
  const url = URL.parse(raw);
  if (url && (url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname)))) {
    return;
  }
  throw new ConfigError(
    "server.oauth_issuer",
    `${what} must use https:// (plain http:// is accepted on loopback only): a key set or token check ` +
      `fetched in clear text could be forged on the way`,
  );
}

export function notAllowedMessage(host: string, what: string): string {
  return `The authorization server host "${host}" (${what}) is outside this process's network allowlist. ` +
    `Add it to "permissions.default.net" in deno.json (deno task start, deno task compile), or run with a flag ` +
    `that replaces that list, e.g. deno run -P --allow-net=${host},<the list> main.ts`;
}

export function invalid(description: string): Verdict {
  return { ok: false, status: 401, error: "invalid_token", description };
}

export function isJwtShaped(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** The scopes of a token or introspection answer: `scope` (RFC 9068) or `scp` (Okta, Entra ID). */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const value of [claims["scope"], claims["scp"]]) {
    if (typeof value === "string") out.push(...value.split(" ").filter(Boolean));
    else if (Array.isArray(value)) out.push(...value.filter((v): v is string => typeof v === "string"));
  }
  return [...new Set(out)];
}

/** The principal of checked claims; callers have made sure `sub` is a non-empty string. */
export function principalOf(issuer: string, claims: Record<string, unknown>): Principal {
  const subject = claims["sub"] as string;
  const clientId = claims["client_id"] ?? claims["azp"] ?? claims["appid"];
  return {
    issuer,
    subject,
    scopes: scopesOf(claims),
    ...(typeof clientId === "string" ? { clientId } : {}),
    id: `oauth:${issuer} ${subject}`,
  };
}

export function jwtProblem(e: unknown, jose: Jose, audiences: readonly string[]): string {
  const { errors } = jose;
  if (e instanceof errors.JWTExpired) {
    return "The access token expired: get a new one (refresh or authorize again)";
  }
  if (e instanceof errors.JWTClaimValidationFailed) {
    switch (e.claim) {
      case "aud":
        return `The access token was not issued for this server: its audience must be ${
          audiences.join(" or ")
        } (ask for it with the resource parameter)`;
      case "iss":
        return "The access token was not issued by the authorization server this server trusts";
      case "nbf":
        return "The access token is not valid yet";
      case "sub":
        return "The access token names no subject (sub)";
      case "exp":
        return "The access token has no expiry (exp)";
      default:
        return `The access token's "${e.claim}" claim is not acceptable`;
    }
  }
  if (e instanceof errors.JOSEAlgNotAllowed) {
    return "The access token is signed with an algorithm this server does not accept";
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) {
    return "The access token's signature does not verify";
  }
  if (e instanceof errors.JWKSNoMatchingKey) {
    return "The access token is signed with a key the authorization server does not publish";
  }
  return "The access token is not a well-formed, signed JWT";
}

export function introspectionVerdict(
  body: Record<string, unknown>,
  issuer: string,
  audiences: readonly string[],
  now: number,
  skewS: number,
): Verdict {
  if (body["active"] !== true) {
    return invalid("The access token is not active (expired or revoked): get a new one");
  }
  if (typeof body["iss"] === "string" && body["iss"] !== issuer) {
    return invalid("The access token was not issued by the authorization server this server trusts");
  }
  const aud = body["aud"];
  const auds = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  if (!auds.some((a) => audiences.includes(a))) {
    return invalid(
      `The access token was not issued for this server: its audience must be ${audiences.join(" or ")}`,
    );
  }
  if (typeof body["exp"] === "number" && body["exp"] * 1000 + skewS * 1000 < now) {
    return invalid("The access token expired: get a new one (refresh or authorize again)");
  }
  // A subject or client id that is not a string would name no one, or everyone alike.
  for (const claim of ["sub", "client_id"]) {
    if (body[claim] !== undefined && typeof body[claim] !== "string") {
      return invalid(`The token check names a ${claim} that is not a string: the token is refused`);
    }
  }
  // A client-credentials token may name no user: the client is then its own subject.
  const subject = typeof body["sub"] === "string" && body["sub"] !== ""
    ? body["sub"]
    : typeof body["client_id"] === "string" && body["client_id"] !== ""
    ? `client:${body["client_id"]}`
    : undefined;
  if (subject === undefined) {
    return invalid("The access token names no subject (sub) and no client (client_id)");
  }
  return { ok: true, principal: principalOf(issuer, { ...body, sub: subject }) };
}

export async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A `WWW-Authenticate` parameter value in quotes. */
export function quoted(value: string): string {
  // RFC 6750 §3 allows printable ASCII without `"` and `\` in these values: no escapes.
  return `"${value.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, "")}"`;
}

/**
 * The `WWW-Authenticate` challenge of a refusal (RFC 6750 §3, RFC 9728 §5.1): where the protected
 * resource metadata is, which scopes to ask for, and, for a bad token, why.
 */
export function challenge(
  verdict: Verdict & { ok: false },
  resourceMetadata: string,
  scopes: readonly string[],
): string {
  const parts = [`resource_metadata=${quoted(resourceMetadata)}`];
  if (scopes.length) parts.push(`scope=${quoted(scopes.join(" "))}`);
  if (verdict.error) {
    parts.push(`error=${quoted(verdict.error)}`, `error_description=${quoted(verdict.description)}`);
  }
  return `Bearer ${parts.join(", ")}`;
}

/** RFC 9728 protected resource metadata for `resource` (the server's `/mcp` URL). */
export function resourceMetadata(
  resource: string,
  options: { issuer: string; scopes: readonly string[]; name: string; docs: string },
): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [options.issuer],
    ...(options.scopes.length ? { scopes_supported: [...options.scopes] } : {}),
    bearer_methods_supported: ["header"],
    resource_name: options.name,
    resource_documentation: options.docs,
  };
}
