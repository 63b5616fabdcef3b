// Calls to kart.ra.no's ArcGIS REST API through the shared HttpClient, with the SSRF guard.
// ArcGIS reports most failures in the body with HTTP 200: every answer is checked for an
// `error` object, and an error body found in the cache is fetched again before it is believed.
import { clientSettings } from "../../http/settings.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient, QueryValue, UpstreamResponse } from "../../http/fetch_client.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import { originOf, ssrfGuard } from "../../http/ssrf.ts";
import type { HostResolver } from "../../http/ssrf.ts";
import type { Logger } from "../../log.ts";
import type { RiksantikvarenArcgisSettings } from "./config.ts";
import { arcgisError, describeArcgisError } from "./esri.ts";
import type { ArcgisErrorInfo } from "./esri.ts";

/** Per-call options every request takes. */
export interface CallOptions {
  signal: AbortSignal;
  logger: Logger;
}

/** Options for {@linkcode ArcgisClient}. */
export interface ArcgisClientOptions {
  resolve?: HostResolver;
}

/** Service types the tools address. */
export type ServiceType = "MapServer" | "FeatureServer";

/** Which service (and layer) a call addresses. */
export interface ServiceRef {
  /** Service name within the configured folder. */
  service: string;
  type: ServiceType;
  layer?: number;
}

/** A JSON answer and the URL it came from. */
export interface ArcgisAnswer {
  data: unknown;
  url: string;
}

/** Above this many characters of query string, a query is POSTed (ArcGIS accepts both). */
const MAX_GET_QUERY = 3500;

/** kart.ra.no: the folder listing, services, layers, query and identify. */
export class ArcgisClient {
  #http: HttpClient;
  #base: string;

  constructor(
    settings: RiksantikvarenArcgisSettings,
    runtime: HttpRuntime,
    options: ArcgisClientOptions = {},
  ) {
    const guard = {
      trustedOrigins: [originOf(settings.base_url)],
      ...(options.resolve ? { resolve: options.resolve } : {}),
    };
    this.#base = settings.base_url.replace(/\/+$/, "");
    this.#http = runtime.client({
      provider: "riksantikvaren_arcgis",
      upstreamName: "Riksantikvaren's ArcGIS server (kart.ra.no)",
      ...clientSettings(settings),
      checkUrl: ssrfGuard(guard),
    });
  }

  /** A URL under the base, for source links. */
  url(path: string, query?: Record<string, QueryValue>): string {
    return this.#http.url(path, query).toString();
  }

  /** The folder's listing: services and sub-folders. */
  root(call: CallOptions): Promise<ArcgisAnswer> {
    // The folder itself, without a trailing slash (ArcGIS names folders that way).
    return this.#json(this.#base, { f: "json" }, call, "the service folder");
  }

  /** A service's description: layers, tables, limits. */
  service(ref: ServiceRef, call: CallOptions): Promise<ArcgisAnswer> {
    return this.#json(servicePath(ref), { f: "json" }, call, `service "${ref.service}"`);
  }

  /** A layer's description: fields, geometry type, limits. */
  layer(ref: ServiceRef & { layer: number }, call: CallOptions): Promise<ArcgisAnswer> {
    return this.#json(`${servicePath(ref)}/${ref.layer}`, { f: "json" }, call, layerLabel(ref));
  }

  /** A layer query (`…/{layer}/query`). */
  query(
    ref: ServiceRef & { layer: number },
    params: Record<string, QueryValue>,
    call: CallOptions,
  ): Promise<ArcgisAnswer> {
    return this.#json(
      `${servicePath(ref)}/${ref.layer}/query`,
      { ...params, f: "json" },
      call,
      layerLabel(ref),
    );
  }

  /** An identify at a point (`…/MapServer/identify`). */
  identify(name: string, params: Record<string, QueryValue>, call: CallOptions): Promise<ArcgisAnswer> {
    return this.#json(
      `${encodeURIComponent(name)}/MapServer/identify`,
      { ...params, f: "json" },
      call,
      `service "${name}"`,
    );
  }

  async #json(
    path: string,
    query: Record<string, QueryValue>,
    call: CallOptions,
    what: string,
  ): Promise<ArcgisAnswer> {
    const send = (fresh: boolean): Promise<UpstreamResponse<unknown>> => {
      const search = this.#http.url(path, query).search;
      if (search.length <= MAX_GET_QUERY) return this.#http.json<unknown>(path, { query, fresh, ...call });
      return this.#http.json<unknown>(path, {
        method: "POST",
        body: search.slice(1),
        headers: { "content-type": "application/x-www-form-urlencoded" },
        fresh,
        ...call,
      });
    };
    let r: UpstreamResponse<unknown>;
    try {
      r = await send(false);
      // An error body is stored like any 200 answer; a stored one is checked again upstream.
      if (r.cache === "hit" && arcgisError(r.data)) r = await send(true);
    } catch (e) {
      throw enrich(e, what);
    }
    const err = arcgisError(r.data);
    if (err) throw arcgisToolError(err, what, r.status);
    return { data: r.data, url: r.url };
  }
}

function servicePath(ref: ServiceRef): string {
  return `${encodeURIComponent(ref.service)}/${ref.type}`;
}

function layerLabel(ref: ServiceRef & { layer: number }): string {
  return `layer ${ref.layer} of "${ref.service}"`;
}

/** The ToolError for an ArcGIS error body. */
export function arcgisToolError(err: ArcgisErrorInfo, what: string, httpStatus = 200): ToolError {
  const text = describeArcgisError(err);
  const notFound = err.code === 404 || /not (be )?found|does not exist|invalid url/i.test(text);
  const code = err.code ?? httpStatus;
  const retryable = code === 429 || code >= 500;
  return new ToolError(
    notFound ? "NOT_FOUND" : "API_ERROR",
    `kart.ra.no answered with an error for ${what} (code ${code}${
      httpStatus === 200 ? ", sent with HTTP 200" : ""
    }): ${text}`,
    {
      status: code,
      retryable,
      hint: notFound
        ? "Call arcgis-services to list the services and layer ids"
        : retryable
        ? "The map server is having trouble: try again in a moment"
        : "Check where, out_fields, order_by and the geometry against the layer's fields (arcgis-services with service and layer)",
    },
  );
}

/** An UpstreamError whose body is an ArcGIS error gets that error's words; a 404 says what is missing. */
function enrich(e: unknown, what: string): unknown {
  if (!(e instanceof UpstreamError)) return e;
  if (e.body) {
    try {
      const err = arcgisError(JSON.parse(e.body));
      if (err) return arcgisToolError(err, what, e.status ?? 200);
    } catch {
      // Not JSON: the client's own message stands.
    }
  }
  if (e.status === 404) {
    return new ToolError("NOT_FOUND", `kart.ra.no found nothing for ${what} (HTTP 404)`, {
      status: 404,
      hint: "Call arcgis-services to list the services and layer ids",
    });
  }
  return e;
}
