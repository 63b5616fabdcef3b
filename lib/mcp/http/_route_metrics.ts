// Route: /metrics on the /mcp port, behind the scrape token (metrics_token, else the /mcp
// token); OAuth access tokens are never taken for one.
import type { HttpState, RequestContext } from "./_context.ts";
import type { BearerAuth } from "./_security.ts";

/** The 401 of /metrics on the /mcp port when OAuth guards /mcp and no metrics token is set. */
function metricsNeedToken(realm: string): Response {
  return new Response(
    "Unauthorized: with MCP_OAUTH_ISSUER, /metrics on this port needs MCP_METRICS_TOKEN; set it and " +
      "scrape with Authorization: Bearer <that token>, or scrape the metrics_port listener\n",
    {
      status: 401,
      headers: {
        "Content-Type": "text/plain; charset=utf-8",
        "WWW-Authenticate": `Bearer realm="${realm}"`,
      },
    },
  );
}

/** The /metrics route of `state`'s handler (its scrape check made on the first scrape). */
export function createMetricsRoute(state: HttpState): (ctx: RequestContext) => Promise<Response> {
  let scrapeAuth: BearerAuth | null | undefined;
  return async (ctx) => {
    const { settings, oauth } = state;
    const registry = state.served!;
    const { metricsAuth, metricsResponse } = await import("../../metrics/serve.ts");
    if (scrapeAuth === undefined) scrapeAuth = metricsAuth(settings);
    if (oauth && !scrapeAuth) {
      // /mcp takes OAuth access tokens, which are not scrape credentials: without a metrics
      // token /metrics would be the one open path of a server that requires authentication.
      ctx.fields["refused"] = "auth";
      return metricsNeedToken(settings.name);
    }
    const res = await metricsResponse(ctx.req, registry, scrapeAuth, settings.name);
    if (res.status === 401) {
      ctx.fields["refused"] = "auth";
      ctx.log().warn("unauthorized request", { path: ctx.path, client_ip: ctx.fields["client_ip"] });
    }
    return res;
  };
}
