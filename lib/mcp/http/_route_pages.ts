// Route: the pages beside the MCP endpoints: /health, / (what this server is), and the OAuth
// protected resource metadata (RFC 9728) of /mcp and /sse.
import { CONTACT_URL } from "../../version.ts";
import { methodIs, notFound } from "./_requests.ts";
import { PRM_PATH, publicBase } from "./_mw_auth.ts";
import type { HttpState, RequestContext } from "./_context.ts";

export { PRM_PATH } from "./_mw_auth.ts";

/** GET or HEAD /health: status, version, uptime, sessions, breakers and the shared store. */
export async function healthPage(state: HttpState, req: Request): Promise<Response> {
  const { settings, app, store } = state;
  const body = {
    status: "ok",
    name: settings.name,
    version: settings.version,
    uptime_s: Math.round((state.clock.now() - state.startedAt) / 1000),
    stateless: settings.stateless,
    auth: state.authMode,
    writes: settings.writes,
    providers: app.providers.map((p) => p.id),
    sessions: { ...store.counts(), max: store.max },
    // The circuit breakers that hold state: endpoints whose recent calls failed, by
    // "provider host/path-family" (an endpoint that answers well is not listed).
    upstreams: await app.http.breakers(),
    // With REDIS_URL: whether the shared store answers now (when not, this replica serves
    // from local fallbacks), and this replica's name in job leases.
    ...(app.shared
      ? {
        shared_state: { store: "redis", reachable: app.shared.connection.up, replica: app.shared.replica },
      }
      : {}),
  };
  return req.method === "HEAD" ? new Response(null, { status: 200 }) : Response.json(body);
}

/** GET / : the server's name, providers, transports and endpoints. */
export function rootPage(state: HttpState): Response {
  const { settings, app, oauth } = state;
  return Response.json({
    name: settings.name,
    version: settings.version,
    description: "MCP server giving AI agents bounded access to public open data",
    providers: app.providers.map((p) => ({ id: p.id, tools: p.tools.length })),
    tool_count: app.tools.length,
    transport: settings.stateless ? "streamable-http (stateless)" : "streamable-http + legacy sse",
    auth: state.authMode,
    writes: settings.writes,
    ...(oauth
      ? {
        oauth: {
          issuer: oauth.issuer,
          resource_metadata: `${PRM_PATH}/mcp`,
          ...(settings.oauth_scopes.length ? { scopes: settings.oauth_scopes } : {}),
        },
      }
      : {}),
    endpoints: {
      mcp: "/mcp",
      ...(settings.stateless ? {} : { sse: "/sse", message: "/message?session_id=<id>" }),
      health: "/health",
      ...(state.served ? { metrics: "/metrics" } : {}),
    },
    docs: `${CONTACT_URL}/blob/main/docs/MCP.md`,
  });
}

/** Whether `path` is the protected resource metadata, in root or path form. */
export function isMetadataPath(path: string): boolean {
  return path === PRM_PATH || path.startsWith(`${PRM_PATH}/`);
}

/** The protected resource metadata of `/mcp`, or of `/sse` for legacy SSE (404 without OAuth). */
export async function metadataPage(state: HttpState, ctx: RequestContext): Promise<Response> {
  const { oauth, settings } = state;
  const path = ctx.path;
  if (!oauth) return notFound(path);
  const resource = path === `${PRM_PATH}/sse` ? "/sse" : "/mcp";
  return methodIs(ctx.req, ["GET", "HEAD"]) ?? Response.json(
    (await import("./oauth_claims.ts")).resourceMetadata(`${publicBase(state, ctx.url)}${resource}`, {
      issuer: oauth.issuer,
      scopes: settings.oauth_scopes,
      name: settings.name,
      docs: `${CONTACT_URL}/blob/main/docs/DEPLOYMENT.md`,
    }),
    { headers: { "Cache-Control": "public, max-age=3600" } },
  );
}
