// Calls to kart.ra.no's ArcGIS REST API through the shared HttpClient, with the SSRF guard.
// ArcGIS reports most failures in the body with HTTP 200: every answer is checked for an
// `error` object, then for the shape its resource always has (a body of another shape is a
// DECODE_ERROR, never an empty answer). Neither kind of body is kept in the cache.
import { clientSettings } from "../../http/settings.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient, QueryValue, UpstreamResponse } from "../../http/fetch_client.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import { originOf, ssrfGuard } from "../../http/ssrf.ts";
import type { HostResolver } from "../../http/ssrf.ts";
import type { Logger } from "../../log.ts";
import type { RiksantikvarenArcgisSettings } from "./settings.ts";
import { arcgisError, asObject, describeArcgisError } from "./esri.ts";
import type { ArcgisErrorInfo } from "./esri.ts";

/** Per-call options every request takes. */
export interface CallOptions {
  signal: AbortSignal;
  logger: Logger;
  /** A shorter timeout than the provider's for this request (a page read close to the deadline). */
  timeoutMs?: number;
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
      licence: "NLOD 2.0 (credit Riksantikvaren)",
      ...clientSettings(settings),
      // Service names come from callers: metrics name the kind of service, never the name.
      endpoints: ["/", "*/MapServer", "*/FeatureServer"],
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
    return this.#json(this.#base, { f: "json" }, call, "the service folder", listOf("services"));
  }

  /** A service's description: layers, tables, limits. */
  service(ref: ServiceRef, call: CallOptions): Promise<ArcgisAnswer> {
    return this.#json(
      servicePath(ref),
      { f: "json" },
      call,
      `service "${ref.service}"`,
      listOf("layers", true),
    );
  }

  /** A layer's description: fields, geometry type, limits. */
  layer(ref: ServiceRef & { layer: number }, call: CallOptions): Promise<ArcgisAnswer> {
    return this.#json(`${servicePath(ref)}/${ref.layer}`, { f: "json" }, call, layerLabel(ref), anObject);
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
      params["returnCountOnly"] === true ? countShape : listOf("features"),
    );
  }

  /** An identify at a point (`…/MapServer/identify`). */
  identify(name: string, params: Record<string, QueryValue>, call: CallOptions): Promise<ArcgisAnswer> {
    return this.#json(
      `${encodeURIComponent(name)}/MapServer/identify`,
      { ...params, f: "json" },
      call,
      `service "${name}"`,
      listOf("results"),
    );
  }

  async #json(
    path: string,
    query: Record<string, QueryValue>,
    call: CallOptions,
    what: string,
    shape: (data: unknown) => string | null,
  ): Promise<ArcgisAnswer> {
    const { timeoutMs, ...rest } = call;
    const base = {
      ...rest,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      // Error bodies (HTTP 200) and bodies of the wrong shape are answered, never stored.
      cacheable: (d: unknown) => arcgisError(d) === null && shape(d) === null,
    };
    let r: UpstreamResponse<unknown>;
    try {
      // `fresh` is left to the tool call's scope, so a caller's fresh: true reaches the upstream.
      const search = this.#http.url(path, query).search;
      r = search.length <= MAX_GET_QUERY
        ? await this.#http.json<unknown>(path, { query, ...base })
        : await this.#http.json<unknown>(path, {
          method: "POST",
          body: search.slice(1),
          headers: { "content-type": "application/x-www-form-urlencoded" },
          ...base,
        });
    } catch (e) {
      throw enrich(e, what);
    }
    const err = arcgisError(r.data);
    if (err) throw arcgisToolError(err, what, r.status);
    const problem = shape(r.data);
    if (problem) {
      throw new ToolError("DECODE_ERROR", `kart.ra.no did not answer as expected for ${what}: ${problem}`, {
        hint: "The map server sent a body of the wrong shape; try again later, or report it if it persists",
      });
    }
    return { data: r.data, url: r.url };
  }
}

/** Checks that a body is an object whose `key` is an array (`optional`: or absent). */
function listOf(key: string, optional = false): (data: unknown) => string | null {
  return (data) => {
    const root = asObject(data);
    if (!root) return `it sent ${describe(data)} where an object was expected`;
    if (optional && !(key in root)) return null;
    const v = root[key];
    return Array.isArray(v) ? null : `its "${key}" is ${key in root ? describe(v) : "missing"}, not a list`;
  };
}

function anObject(data: unknown): string | null {
  return asObject(data) ? null : `it sent ${describe(data)} where an object was expected`;
}

function countShape(data: unknown): string | null {
  const root = asObject(data);
  if (!root) return `it sent ${describe(data)} where an object was expected`;
  return typeof root["count"] === "number" ? null : `its "count" is ${describe(root["count"])}, not a number`;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "nothing";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
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
      ...(notFound ? { next: [LIST_SERVICES] } : {}),
      hint: notFound
        ? "Call arcgis-services to list the services and layer ids"
        : retryable
        ? "The map server is having trouble: try again in a moment"
        : "Check where, out_fields, order_by and the geometry against the layer's fields (arcgis-services with service and layer)",
    },
  );
}

/** The call that lists the services and their layers, named after a "not found". */
const LIST_SERVICES = { tool: "arcgis-services", arguments: {}, for: "the services and layer ids" };

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
      next: [LIST_SERVICES],
    });
  }
  return e;
}
