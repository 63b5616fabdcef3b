// The OAuth 2.1 resource server (MCP basic/authorization): who may call, from an access token an
// authorization server issued for this server.
//
// - Discovery: the issuer's metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else
//   OpenID Connect's `/.well-known/openid-configuration`, path-inserted then appended), whose
//   `issuer` must be the configured one exactly.
// - JWT access tokens (RFC 9068) are checked with `jose`: the signature against the issuer's key
//   set, the algorithm against an allowlist of asymmetric ones (never `none`, never a shared
//   secret), `iss`, `aud` (RFC 8707: the token must name this server), `exp` (required) and
//   `nbf` within a bounded clock skew, then the required scopes.
// - The key set is cached; a token signed with a key it does not hold makes one refetch, at most
//   once per cooldown, so rotated keys are picked up and a flood of made-up kids is not relayed.
// - Opaque tokens, when a client id and secret for the introspection endpoint are configured,
//   are asked about (RFC 7662), with the same checks on the answer, and the answer cached briefly;
//   refusals are remembered (by the token's hash) so a repeated bad token costs no request, and
//   at most a few introspection requests are in flight, so a flood of made-up tokens is not
//   relayed one for one.
// - Every answer of the authorization server is read with a size cap (_oauth_limits.ts).
//
// The token is only ever sent to the issuer's own introspection endpoint: never upstream.
import type { Clock } from "../../clock.ts";
import { ConfigError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import {
  AUTH_BODY_MAX_BYTES,
  AuthBodyTooLarge,
  BoundedTtlCache,
  Gate,
  readJsonCapped,
} from "./_oauth_limits.ts";
import {
  checkTls,
  introspectionVerdict,
  invalid,
  isJwtShaped,
  jwtProblem,
  notAllowedMessage,
  principalOf,
  sha256,
} from "./oauth_claims.ts";
import type { Verdict } from "./oauth_claims.ts";

export { challenge, resourceMetadata, scopesOf } from "./oauth_claims.ts";
export type { Principal, Verdict } from "./oauth_claims.ts";

/** Settings of {@linkcode OAuthResourceServer}. */
export interface OAuthOptions {
  /** The authorization server's issuer identifier, exactly as its metadata and tokens say it. */
  issuer: string;
  /**
   * Audiences accepted (`aud` must name one). Empty: the request's resource URL (the server's
   * public `/mcp` URL), as the client asked for it with the `resource` parameter.
   */
  audiences: readonly string[];
  /** Scopes every token must hold. */
  scopes: readonly string[];
  /** Seconds of clock difference tolerated on `exp`, `nbf` and `iat`. */
  clockSkewS: number;
  /** Signing algorithms accepted (default: the asymmetric JWS algorithms). */
  algorithms?: readonly string[];
  /** Credentials for the introspection endpoint; without them opaque tokens are refused. */
  introspection?: { clientId: string; clientSecret: string };
  clock: Clock;
  /** Default `fetch`: the authorization server is the operator's choice, not a client's. */
  fetch?: typeof fetch;
  /** Whether the process may connect to `host` (the `--allow-net` check). */
  isNetAllowed?: (host: string) => boolean;
  /** Least milliseconds between two key-set fetches caused by unknown kids (default 30 s). */
  jwksCooldownMs?: number;
  /** Milliseconds a fetched key set is used before it is fetched again (default 10 min). */
  jwksMaxAgeMs?: number;
  /** Milliseconds each request to the authorization server may take (default 5 s). */
  timeoutMs?: number;
  /** Where an oversized answer from the authorization server is reported. */
  logger?: Logger;
  /** Most bytes read of one answer from the authorization server (default 1 MiB). */
  maxBodyBytes?: number;
}

/** The asymmetric JWS algorithms: a JWKS-published key never verifies an HMAC, and `none` never. */
export const DEFAULT_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** The parts of the authorization server's metadata this server uses. */
export interface AuthServerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  scopes_supported?: string[];
  [key: string]: unknown;
}

type Jose = typeof import("jose");
type KeyGetter = ReturnType<Jose["createLocalJWKSet"]>;

const MAX_INTROSPECTION_CACHE = 10_000;
/** Refused tokens remembered, and for how long (a made-up token asked again costs nothing). */
const MAX_REFUSED_CACHE = 4_096;
const REFUSED_TTL_MS = 30_000;
/** Introspection requests in flight at once, and how many more may wait for one. */
const INTROSPECTION_CONCURRENCY = 4;
const INTROSPECTION_QUEUE = 32;

/** Checks bearer access tokens for one authorization server; see the module comment. */
export class OAuthResourceServer {
  readonly options: OAuthOptions;
  #metadata: AuthServerMetadata | undefined;
  #discovering: Promise<AuthServerMetadata> | undefined;
  #joseModule: Jose | undefined;
  #keys: KeyGetter | undefined;
  #keysFetchedAt = -Infinity;
  #keysFetching: Promise<void> | undefined;
  #introspected = new BoundedTtlCache<Verdict>(MAX_INTROSPECTION_CACHE);
  #refusedTokens = new BoundedTtlCache<Verdict>(MAX_REFUSED_CACHE);
  /** Introspections under way, by token hash: the same token asked at once waits for one answer. */
  #introspecting = new Map<string, Promise<Verdict>>();
  #introspectionGate = new Gate(INTROSPECTION_CONCURRENCY, INTROSPECTION_QUEUE);
  /** How many introspection requests were sent (for tests). */
  introspections = 0;
  /** How many times the key set was fetched (for tests and the health page). */
  jwksFetches = 0;

  constructor(options: OAuthOptions) {
    this.options = options;
    if (options.algorithms?.some((a) => a === "none" || a.startsWith("HS"))) {
      throw new ConfigError(
        "server.oauth_algorithms",
        'Cannot accept "none" or HMAC (HS*) signatures: access tokens are checked against the issuer\'s public keys',
      );
    }
  }

  /** The issuer's metadata, discovered once (then cached); throws a {@linkcode ConfigError} with the fix. */
  discover(): Promise<AuthServerMetadata> {
    if (this.#metadata) return Promise.resolve(this.#metadata);
    this.#discovering ??= this.#discover().then(
      (m) => (this.#metadata = m),
      (e) => {
        this.#discovering = undefined;
        throw e;
      },
    );
    return this.#discovering;
  }

  async #discover(): Promise<AuthServerMetadata> {
    const issuer = this.options.issuer;
    const url = URL.parse(issuer);
    if (!url || !(url.protocol === "https:" || url.protocol === "http:") || url.search || url.hash) {
      throw new ConfigError(
        "server.oauth_issuer",
        `MCP_OAUTH_ISSUER "${issuer}" is not an issuer URL: give the authorization server's issuer, e.g. ` +
          `https://login.example.com/realms/main (without query or fragment)`,
      );
    }
    checkTls(issuer, `MCP_OAUTH_ISSUER "${issuer}"`);
    this.#checkHost(url, "server.oauth_issuer", "MCP_OAUTH_ISSUER");
    const path = url.pathname.replace(/\/+$/, "");
    const candidates = [
      `${url.origin}/.well-known/oauth-authorization-server${path}`,
      `${url.origin}/.well-known/openid-configuration${path}`,
      // Keycloak, Okta and Entra ID serve theirs appended to the issuer's path.
      ...(path
        ? [
          `${url.origin}${path}/.well-known/openid-configuration`,
          `${url.origin}${path}/.well-known/oauth-authorization-server`,
        ]
        : []),
    ];
    const tried: string[] = [];
    for (const candidate of candidates) {
      let res: Response;
      try {
        res = await this.#fetch(candidate, {});
      } catch (e) {
        throw this.#unreachable(e, candidate);
      }
      if (!res.ok) {
        await res.body?.cancel();
        tried.push(`${candidate} (${res.status})`);
        continue;
      }
      let meta: AuthServerMetadata;
      try {
        meta = await this.#json(res, candidate) as AuthServerMetadata;
      } catch (e) {
        if (e instanceof AuthBodyTooLarge) throw new ConfigError("server.oauth_issuer", e.message);
        tried.push(`${candidate} (not JSON)`);
        continue;
      }
      if (meta.issuer !== issuer) {
        throw new ConfigError(
          "server.oauth_issuer",
          `The authorization server's metadata at ${candidate} names the issuer "${meta.issuer}", not ` +
            `"${issuer}": set MCP_OAUTH_ISSUER to exactly the issuer its tokens carry (a trailing slash counts)`,
        );
      }
      if (!meta.jwks_uri && !this.options.introspection) {
        throw new ConfigError(
          "server.oauth_issuer",
          `The authorization server's metadata at ${candidate} has no jwks_uri, so JWT access tokens cannot be ` +
            `checked: configure introspection (MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET)`,
        );
      }
      if (meta.jwks_uri) checkTls(meta.jwks_uri, `Its jwks_uri "${meta.jwks_uri}"`);
      if (meta.introspection_endpoint && this.options.introspection) {
        checkTls(
          meta.introspection_endpoint,
          `Its introspection_endpoint "${meta.introspection_endpoint}"`,
        );
      }
      if (meta.jwks_uri) this.#checkHost(new URL(meta.jwks_uri), "server.oauth_issuer", "its jwks_uri");
      if (this.options.introspection) {
        if (!meta.introspection_endpoint) {
          throw new ConfigError(
            "server.oauth_client_id",
            `The authorization server's metadata at ${candidate} has no introspection_endpoint: opaque tokens ` +
              `cannot be checked; unset MCP_OAUTH_CLIENT_ID to accept JWT access tokens only`,
          );
        }
        this.#checkHost(
          new URL(meta.introspection_endpoint),
          "server.oauth_issuer",
          "its introspection_endpoint",
        );
      }
      return meta;
    }
    throw new ConfigError(
      "server.oauth_issuer",
      `No authorization server metadata found for MCP_OAUTH_ISSUER "${issuer}": tried ${tried.join(", ")}. ` +
        `Check the issuer URL (Keycloak: https://host/realms/<realm>; Entra ID: https://login.microsoftonline.com/<tenant>/v2.0)`,
    );
  }

  #checkHost(url: URL, path: string, what: string): void {
    const host = url.port ? `${url.hostname}:${url.port}` : url.hostname;
    const allowed = this.options.isNetAllowed;
    if (!allowed || allowed(host) || allowed(url.hostname)) return;
    throw new ConfigError(path, notAllowedMessage(url.hostname, what));
  }

  #unreachable(e: unknown, url: string): Error {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return new ConfigError("server.oauth_issuer", notAllowedMessage(new URL(url).hostname, url));
    }
    const reason = e instanceof Error ? e.message : String(e);
    return new ConfigError(
      "server.oauth_issuer",
      `Cannot reach the authorization server at ${url}: ${reason}. Check MCP_OAUTH_ISSUER and that this host ` +
        `can reach it`,
    );
  }

  async #fetch(url: string, init: RequestInit): Promise<Response> {
    const f = this.options.fetch ?? fetch;
    return await f(url, {
      ...init,
      headers: { accept: "application/json", ...(init.headers as Record<string, string> | undefined) },
      redirect: "error",
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
    });
  }

  /** Reads an answer of the authorization server with the size cap, reporting a cut-off one. */
  async #json(res: Response, url: string): Promise<unknown> {
    try {
      return await readJsonCapped(res, url, this.options.maxBodyBytes ?? AUTH_BODY_MAX_BYTES);
    } catch (e) {
      if (e instanceof AuthBodyTooLarge) {
        this.options.logger?.warn("an answer of the authorization server was cut off at the size cap", {
          url,
          max_bytes: e.maxBytes,
        });
      }
      throw e;
    }
  }

  /**
   * Checks the `Authorization` header of a request for `resource` (the server's `/mcp` URL as
   * the client knows it, or several: legacy SSE takes a token for its own URL or for /mcp). Never throws for a bad token; a failing authorization server gives a
   * 401 that says so.
   */
  async verify(authorization: string | null, resource: string | readonly string[]): Promise<Verdict> {
    if (authorization === null || authorization.trim() === "") {
      return { ok: false, status: 401, description: "Authorization needed: send an OAuth access token" };
    }
    const match = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(authorization);
    if (!match) {
      return {
        ok: false,
        status: 401,
        error: "invalid_request",
        description: "The Authorization header must be: Bearer <access token>",
      };
    }
    const token = match[1]!;
    let meta: AuthServerMetadata;
    try {
      meta = await this.discover();
    } catch {
      return {
        ok: false,
        status: 401,
        error: "invalid_token",
        description: "The authorization server cannot be reached to check the token now; retry shortly",
      };
    }
    const audiences = this.options.audiences.length
      ? this.options.audiences
      : typeof resource === "string"
      ? [resource]
      : resource;
    const verdict = isJwtShaped(token) && meta.jwks_uri
      ? await this.#verifyJwt(token, meta, audiences)
      : this.options.introspection && meta.introspection_endpoint
      ? await this.#introspect(token, meta.introspection_endpoint, audiences)
      : invalid("The access token is not a JWT, and this server checks only JWT access tokens");
    if (!verdict.ok) return verdict;
    const missing = this.options.scopes.filter((s) => !verdict.principal.scopes.includes(s));
    if (missing.length) {
      return {
        ok: false,
        status: 403,
        error: "insufficient_scope",
        description: `The access token lacks the scope ${missing.join(" ")}: authorize again asking for it`,
      };
    }
    return verdict;
  }

  async #loadJose(): Promise<Jose> {
    return this.#joseModule ??= await import("jose");
  }

  async #verifyJwt(token: string, meta: AuthServerMetadata, audiences: readonly string[]): Promise<Verdict> {
    const jose = await this.#loadJose();
    const now = this.options.clock.now();
    if (!this.#keys) {
      // Not fetched yet, or the last try failed: try again, at most once per 5 s.
      if (now - this.#keysFetchedAt >= 5_000) await this.#refreshKeys(meta.jwks_uri!).catch(() => {});
      if (!this.#keys) {
        return invalid(
          "The authorization server's keys cannot be fetched to check the token now; retry shortly",
        );
      }
    } else if (now - this.#keysFetchedAt >= (this.options.jwksMaxAgeMs ?? 600_000)) {
      // Stale keys still check this token while fresh ones are fetched, so no request waits on
      // the issuer (a key the cache lacks is fetched on demand, below).
      this.#refreshKeys(meta.jwks_uri!).catch(() => {});
    }
    const getKey = async (
      header: Parameters<KeyGetter>[0],
      input: Parameters<KeyGetter>[1],
    ): Promise<import("jose").CryptoKey> => {
      try {
        return await this.#keys!(header, input);
      } catch (e) {
        // An unknown kid: the issuer may have rotated its keys. Fetch them again, at most once
        // per cooldown (a stream of made-up kids must not become a stream of fetches).
        if (!(e instanceof jose.errors.JWKSNoMatchingKey)) throw e;
        const cooldown = this.options.jwksCooldownMs ?? 30_000;
        if (this.options.clock.now() - this.#keysFetchedAt < cooldown) throw e;
        await this.#refreshKeys(meta.jwks_uri!);
        return await this.#keys!(header, input);
      }
    };
    try {
      const { payload } = await jose.jwtVerify(token, getKey, {
        issuer: meta.issuer,
        audience: [...audiences],
        algorithms: [...(this.options.algorithms ?? DEFAULT_ALGORITHMS)],
        clockTolerance: this.options.clockSkewS,
        currentDate: new Date(now),
        requiredClaims: ["exp", "sub"],
      });
      // A subject that is not a string (an object, a number) would name no one, or everyone alike.
      if (typeof payload.sub !== "string" || payload.sub === "") {
        return invalid("The access token's subject (sub) is not a non-empty string");
      }
      return { ok: true, principal: principalOf(meta.issuer, payload) };
    } catch (e) {
      return invalid(jwtProblem(e, jose, audiences));
    }
  }

  #refreshKeys(jwksUri: string): Promise<void> {
    this.#keysFetching ??= (async () => {
      try {
        const jose = await this.#loadJose();
        const res = await this.#fetch(jwksUri, {});
        if (!res.ok) {
          await res.body?.cancel();
          throw new Error(`the key set at ${jwksUri} answered ${res.status}`);
        }
        const set = await this.#json(res, jwksUri) as Parameters<Jose["createLocalJWKSet"]>[0];
        this.#keys = jose.createLocalJWKSet(set);
        this.jwksFetches++;
      } finally {
        // Failed fetches count for the cooldown too: an issuer that is down is not hammered.
        this.#keysFetchedAt = this.options.clock.now();
        this.#keysFetching = undefined;
      }
    })();
    return this.#keysFetching;
  }

  async #introspect(token: string, endpoint: string, audiences: readonly string[]): Promise<Verdict> {
    const now = this.options.clock.now();
    // A verdict holds for the audiences it was checked against (legacy SSE accepts more than /mcp):
    // the key names both, so a token let in at one endpoint is not let in at another by the cache.
    const key = await sha256(`${token}\n${[...audiences].sort().join(" ")}`);
    const known = this.#introspected.get(key, now) ?? this.#refusedTokens.get(key, now);
    if (known) return known;
    const pending = this.#introspecting.get(key);
    if (pending) return await pending;
    const asked = this.#introspectionGate.run(() => this.#askIntrospection(token, key, endpoint, audiences))
      .then((v) => v ?? invalid("The authorization server is busy checking other tokens; retry shortly"));
    this.#introspecting.set(key, asked);
    try {
      return await asked;
    } finally {
      this.#introspecting.delete(key);
    }
  }

  async #askIntrospection(
    token: string,
    key: string,
    endpoint: string,
    audiences: readonly string[],
  ): Promise<Verdict> {
    const { clientId, clientSecret } = this.options.introspection!;
    let body: Record<string, unknown>;
    try {
      this.introspections++;
      const res = await this.#fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${
            btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)
          }`,
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
      });
      if (!res.ok) {
        await res.body?.cancel();
        return invalid("The authorization server did not answer the token check; retry shortly");
      }
      body = await this.#json(res, endpoint) as Record<string, unknown>;
      // A trusted server's answer still gets no chance to crash the request: an object, or a refusal.
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        return invalid("The authorization server did not answer the token check; retry shortly");
      }
    } catch {
      return invalid("The authorization server cannot be reached to check the token now; retry shortly");
    }
    const now = this.options.clock.now();
    const verdict = introspectionVerdict(body, this.options.issuer, audiences, now, this.options.clockSkewS);
    const exp = typeof body["exp"] === "number" ? body["exp"] * 1000 : now;
    // Active answers are kept at most a minute (a revoked token stops working within it) and
    // never past the token's expiry; refusals a little longer, apart, so made-up tokens cannot
    // push good answers out.
    if (verdict.ok) this.#introspected.set(key, verdict, Math.min(exp, now + 60_000));
    else this.#refusedTokens.set(key, verdict, now + REFUSED_TTL_MS);
    return verdict;
  }
}
