// A real OAuth 2.1 / OpenID authorization server on loopback, for the resource-server tests:
// `oidc-provider` (a certified OpenID Provider), issuing JWT access tokens for a resource
// indicator (RFC 8707). Test-only: nothing in lib/ imports it.
//
// Logins are answered programmatically: the interaction page reads the user to log in as from
// the `x-test-user` header of the browser-like fetch that follows the authorization URL, logs
// them in and grants every scope asked for, so a test plays the user over plain HTTP.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as jose from "jose";

// oidc-provider's notices (an unsupported runtime, the in-memory adapter of a test server) say
// nothing a test needs: they are dropped, and everything else printed goes through.
for (const level of ["warn", "info"] as const) {
  const original = console[level];
  console[level] = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].startsWith("oidc-provider ")) return;
    original(...args);
  };
}
// deno-lint-ignore no-explicit-any
const Provider: any = (await import("oidc-provider")).default;

/** The public client the MCP SDK's OAuth client uses (PKCE, no secret). */
export const PUBLIC_CLIENT = "mcp-test-client";
/** Where the public client is sent back to: never served, the test reads the redirect. */
export const REDIRECT_URI = "http://127.0.0.1/callback";
/** A confidential client for the client-credentials grant (quick tokens for refusal tests). */
export const SERVICE_CLIENT = { id: "svc", secret: "svc-secret-0123456789abcdef0123456789" };

/** What {@linkcode startAuthServer} serves. */
export interface AuthServer {
  issuer: string;
  /** Requests answered, by path (`/jwks` counts key-set fetches). */
  hits: Map<string, number>;
  /** A client-credentials access token for `resource` with `scope`. */
  serviceToken(resource: string, scope: string): Promise<string>;
  /**
   * Replaces the signing key by a new one with a new `kid` (the old key is dropped from the key
   * set, as after a compromise): tokens issued from now on carry the new kid.
   */
  rotateKeys(): Promise<void>;
  /** A private key of the current key set and its kid, to forge tokens in tests. */
  signingKey(): { key: jose.CryptoKey; kid: string };
  close(): Promise<void>;
}

interface KeyPair {
  jwk: jose.JWK;
  key: jose.CryptoKey;
}

async function newKey(): Promise<KeyPair> {
  const { privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  jwk.kid = crypto.randomUUID();
  jwk.alg = "RS256";
  jwk.use = "sig";
  return { jwk, key: privateKey };
}

/** Starts the authorization server on a random loopback port. */
export async function startAuthServer(
  options: { scopes?: string[]; tokenFormat?: "jwt" | "opaque" } = {},
): Promise<AuthServer> {
  const scopes = options.scopes ?? ["mcp:tools", "mcp:admin"];
  const hits = new Map<string, number>();
  let server: Server;
  // deno-lint-ignore no-explicit-any
  let current: { provider: any; key: KeyPair } | undefined;
  const port = await new Promise<number>((resolve) => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (!current) {
        res.statusCode = 503;
        res.end();
        return;
      }
      if (path.startsWith("/interaction/")) {
        void interact(current.provider, req, res, scopes);
        return;
      }
      current.provider.callback()(req, res);
    });
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
  const issuer = `http://127.0.0.1:${port}`;
  // deno-lint-ignore no-explicit-any
  const make = async (): Promise<{ provider: any; key: KeyPair }> => {
    const key = await newKey();
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: PUBLIC_CLIENT,
          token_endpoint_auth_method: "none",
          redirect_uris: [REDIRECT_URI],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
        },
        {
          client_id: SERVICE_CLIENT.id,
          client_secret: SERVICE_CLIENT.secret,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
        },
      ],
      jwks: { keys: [key.jwk] },
      scopes: ["openid", "offline_access", ...scopes],
      pkce: { required: () => true },
      ttl: {
        AccessToken: 300,
        ClientCredentials: 300,
        AuthorizationCode: 60,
        Grant: 600,
        Interaction: 600,
        Session: 600,
      },
      findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
      interactions: {
        url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
      },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined as unknown as string,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: scopes.join(" "),
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: options.tokenFormat ?? "jwt",
            jwt: { sign: { alg: "RS256" } },
          }),
        },
      },
      // Quiet: no console warnings about the development keys or cookie secrets.
      cookies: { keys: ["test-cookie-key-0123456789abcdef"] },
    });
    provider.on("server_error", () => {});
    return { provider, key };
  };
  current = await make();
  return {
    issuer,
    hits,
    async serviceToken(resource, scope) {
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${btoa(`${SERVICE_CLIENT.id}:${SERVICE_CLIENT.secret}`)}`,
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = await res.json();
      if (!res.ok) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token as string;
    },
    async rotateKeys() {
      current = await make();
    },
    signingKey() {
      return { key: current!.key.key, kid: current!.key.jwk.kid! };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Logs in the user the `x-test-user` header names and grants the scopes and resource asked for. */
async function interact(
  // deno-lint-ignore no-explicit-any
  provider: any,
  req: IncomingMessage,
  res: ServerResponse,
  scopes: readonly string[],
): Promise<void> {
  try {
    const details = await provider.interactionDetails(req, res);
    const user = String(req.headers["x-test-user"] ?? "");
    if (!user) {
      res.statusCode = 400;
      res.end("x-test-user header required");
      return;
    }
    if (details.prompt.name === "login") {
      await provider.interactionFinished(req, res, { login: { accountId: user } }, {
        mergeWithLastSubmission: false,
      });
      return;
    }
    // Consent: grant what the prompt says is missing, OpenID scopes and resource scopes alike.
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const params = details.params as Record<string, string | undefined>;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: user, clientId: String(params["client_id"]) });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    for (const [indicator, wanted] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, wanted.filter((s) => scopes.includes(s)).join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  } catch (e) {
    res.statusCode = 500;
    res.end(e instanceof Error ? e.message : String(e));
  }
}

/**
 * The user at the browser: follows the authorization URL the MCP SDK's OAuth client opens
 * through the login and consent (as `user`) to the redirect, and returns the code it carries.
 */
export async function playUser(authorizationUrl: URL, user: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl.href;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, {
      redirect: "manual",
      headers: {
        "x-test-user": user,
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    const location = res.headers.get("location");
    const text = await res.text();
    if (!location) {
      throw new Error(`the authorization flow stopped at ${url}: ${res.status} ${text.slice(0, 300)}`);
    }
    const next = new URL(location, url);
    if (next.href.startsWith(REDIRECT_URI)) {
      if (!next.searchParams.get("code")) throw new Error(`the authorization server refused: ${next.search}`);
      return next.searchParams;
    }
    url = next.href;
  }
  throw new Error("the authorization flow did not end within 10 redirects");
}

/**
 * An `OAuthClientProvider` for both SDK generations (they share its shape): a pre-registered
 * public client using PKCE, playing `user` when sent to authorize; tokens kept in memory.
 */
export class PlayedUserProvider {
  readonly user: string;
  /** The redirect's parameters (code, state, iss) of the last authorization, for `transport.finishAuth()`. */
  callback: URLSearchParams | undefined;
  /** Authorization URLs opened, to check the request (resource, scope, PKCE). */
  readonly opened: URL[] = [];
  #tokens: Record<string, unknown> | undefined;
  #verifier = "";

  constructor(user: string) {
    this.user = user;
  }

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata(): Record<string, unknown> {
    return {
      client_name: `opendata-mcp tests (${this.user})`,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation(): { client_id: string } {
    return { client_id: PUBLIC_CLIENT };
  }

  tokens(): Record<string, unknown> | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: Record<string, unknown>): void {
    this.#tokens = tokens;
  }

  /** The access token held, for raw requests. */
  get accessToken(): string {
    return String(this.#tokens?.["access_token"] ?? "");
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.opened.push(url);
    this.callback = await playUser(url, this.user);
  }

  /** The code of the last authorization. */
  get code(): string {
    return this.callback?.get("code") ?? "";
  }

  #discovery: unknown;
  #serverInfo: unknown;

  /** SDK v2: what discovery found, kept with the verifier to bind the callback to its issuer. */
  saveDiscoveryState(state: unknown): void {
    this.#discovery = state;
  }

  discoveryState(): unknown {
    return this.#discovery;
  }

  /** @ai-sdk/mcp: the authorization server's metadata, kept between the two legs of the flow. */
  saveAuthorizationServerInformation(info: unknown): void {
    this.#serverInfo = info;
  }

  authorizationServerInformation(): unknown {
    return this.#serverInfo;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }
}
