// Calls to api.ra.no through the shared HttpClient, with the SSRF guard on every URL fetched.
import { clientSettings } from "../../http/settings.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient, QueryValue } from "../../http/fetch_client.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import { checkUrl, originOf, SsrfError, ssrfGuard } from "../../http/ssrf.ts";
import type { HostResolver } from "../../http/ssrf.ts";
import type { Logger } from "../../log.ts";
import { Pace } from "../../http/json_sliced.ts";
import type { RiksantikvarenOgcSettings } from "./settings.ts";
import { describe, parseCatalog, parseCollections, parseFeature, parseFeaturePage } from "./parse.ts";
import type { CollectionEntry, DatasetEntry, FeaturePage, Licence, RawFeature } from "./parse.ts";

/** Per-call options every request takes. */
export interface CallOptions {
  signal: AbortSignal;
  logger: Logger;
  /** A shorter timeout than the provider's for this request (a scan's last page before the deadline). */
  timeoutMs?: number;
}

/** A collection of a dataset, and optionally one feature of it. */
export interface CollectionRef {
  dataset: string;
  collection: string;
  id?: string;
}

/** What became of an upstream `next` link. */
export type NextLink = { ok: true; query: string } | { ok: false; warning: string };

/** Options for {@linkcode OgcClient}. */
export interface OgcClientOptions {
  /** Name resolution for the SSRF guard (tests inject one). */
  resolve?: HostResolver;
  /**
   * The datasets the metrics name by their endpoint family; a request to any other (a caller's
   * made-up dataset or collection) counts as "other".
   */
  knownDatasets?: readonly string[];
}

/** api.ra.no: catalog, collections, items and single features. */
export class OgcClient {
  #http: HttpClient;
  #base: string;
  #resolve: HostResolver | undefined;

  constructor(settings: RiksantikvarenOgcSettings, runtime: HttpRuntime, options: OgcClientOptions = {}) {
    this.#base = settings.base_url;
    this.#resolve = options.resolve;
    const guard = {
      trustedOrigins: [originOf(settings.base_url)],
      ...(options.resolve ? { resolve: options.resolve } : {}),
    };
    this.#http = runtime.client({
      provider: "riksantikvaren_ogc",
      upstreamName: "Riksantikvaren's OGC API (api.ra.no)",
      licence: "NLOD 2.0 (credit Riksantikvaren) unless the collection states another",
      ...clientSettings(settings),
      endpoints: ["/", ...(options.knownDatasets ?? []).flatMap((d) => [d, `${d}/collections`])],
      checkUrl: ssrfGuard(guard),
    });
  }

  /** The configured base URL. */
  get baseUrl(): string {
    return this.#base;
  }

  /** A URL under the base (for source links in results). */
  url(path: string, query?: Record<string, QueryValue>): string {
    return this.#http.url(path, query).toString();
  }

  /** The datasets (APIs) listed at the root. */
  async catalog(call: CallOptions): Promise<{ datasets: DatasetEntry[]; url: string }> {
    const r = await this.#http.json<unknown>("", {
      query: { f: "json" },
      ...requestOptions(call),
      cacheable: (d) => decodes(() => parseCatalog(d, this.#base)),
    });
    return { datasets: parseCatalog(r.data, this.#base), url: r.url };
  }

  /** The collections of one dataset. */
  async collections(
    dataset: string,
    call: CallOptions,
  ): Promise<{ collections: CollectionEntry[]; licence: Licence | null; url: string }> {
    const r = await this.#get(
      `${datasetPath(dataset)}/collections`,
      { f: "json" },
      call,
      { dataset },
      parseCollections,
    );
    return { ...parseCollections(r.data), url: r.url };
  }

  /** One page of items; `query` is sent as given (plus `f=json`). */
  async items(
    ref: CollectionRef,
    query: Record<string, QueryValue>,
    call: CallOptions,
  ): Promise<{ page: FeaturePage; url: string }> {
    const r = await this.#get(itemsPath(ref), { ...query, f: "json" }, call, ref, parseFeaturePage);
    return { page: parseFeaturePage(r.data), url: r.url };
  }

  /** One feature by id. */
  async feature(
    ref: CollectionRef & { id: string },
    call: CallOptions,
  ): Promise<{ feature: RawFeature; url: string }> {
    const r = await this.#get(
      `${itemsPath(ref)}/${encodeURIComponent(ref.id)}`,
      { f: "json" },
      call,
      ref,
      // Whether the body is a Feature at all, without reading its geometry twice.
      (d) => isFeatureShape(d) ? d : null,
    );
    // A geometry of hundreds of thousands of vertices takes tens of milliseconds to read: the event
    // loop gets a turn first, so the body's decode and its reading never run as one piece.
    await new Pace().pause();
    const feature = parseFeature(r.data);
    if (!feature) {
      throw new ToolError(
        "DECODE_ERROR",
        `api.ra.no did not answer with a feature for id "${ref.id}": it sent ${describe(r.data)}`,
        { hint: "Check the id with riksantikvaren-features; if it is listed there, try again later" },
      );
    }
    return { feature, url: r.url };
  }

  /**
   * Decides whether an upstream `next` link may be used. Only its query string is ever reused
   * (on the configured base URL), and only when it names the base URL's host: a link to any
   * other host is not followed, and the SSRF checks say why when that host is private.
   */
  async vetNextLink(href: string): Promise<NextLink> {
    let u: URL;
    try {
      u = new URL(href, this.#base);
    } catch {
      return {
        ok: false,
        warning: "The upstream's next link could not be read; use next_offset to continue",
      };
    }
    const base = new URL(this.#base);
    if (u.hostname === base.hostname && (u.protocol === "https:" || u.protocol === "http:")) {
      return { ok: true, query: u.search.replace(/^\?/, "") };
    }
    try {
      await checkUrl(u, this.#resolve ? { resolve: this.#resolve } : {});
    } catch (e) {
      if (e instanceof SsrfError) {
        return {
          ok: false,
          warning:
            `The upstream's next link was refused and not followed: it points at "${e.host}", ${e.reason}. ` +
            "Use next_offset to continue",
        };
      }
      throw e;
    }
    return {
      ok: false,
      warning:
        `The upstream's next link points at another host ("${u.host}") and was not followed; use next_offset to continue`,
    };
  }

  async #get(
    path: string,
    query: Record<string, QueryValue>,
    call: CallOptions,
    what: { dataset: string; collection?: string; id?: string },
    parse: (data: unknown) => unknown,
  ) {
    try {
      // A body of the wrong shape is a DECODE_ERROR now and is not kept for the next call.
      const cacheable = (d: unknown) => decodes(() => parse(d));
      return await this.#http.json<unknown>(path, { query, ...requestOptions(call), cacheable });
    } catch (e) {
      if (e instanceof UpstreamError && e.status === 404) throw notFound(what);
      throw e;
    }
  }
}

/** Whether `parse` reads the body without a DECODE_ERROR (and finds something). */
function decodes(parse: () => unknown): boolean {
  try {
    return parse() !== null;
  } catch {
    return false;
  }
}

function requestOptions(call: CallOptions): { signal: AbortSignal; logger: Logger; timeoutMs?: number } {
  return call.timeoutMs === undefined
    ? { signal: call.signal, logger: call.logger }
    : { signal: call.signal, logger: call.logger, timeoutMs: call.timeoutMs };
}

/** The path of a dataset (`brukerminner`, or `id/v1` for a versioned API). */
export function datasetPath(dataset: string): string {
  return dataset.split("/").map(encodeURIComponent).join("/");
}

function itemsPath(ref: CollectionRef): string {
  return `${datasetPath(ref.dataset)}/collections/${encodeURIComponent(ref.collection)}/items`;
}

function notFound(what: { dataset: string; collection?: string; id?: string }): ToolError {
  if (what.id !== undefined) {
    return new ToolError(
      "NOT_FOUND",
      `No feature "${what.id}" in collection "${what.collection}" of dataset "${what.dataset}"`,
      { status: 404, hint: "Find valid ids with riksantikvaren-features or riksantikvaren-nearby" },
    );
  }
  return new ToolError(
    "NOT_FOUND",
    what.collection === undefined
      ? `api.ra.no has no dataset "${what.dataset}"`
      : `api.ra.no has no collection "${what.collection}" in dataset "${what.dataset}"`,
    { status: 404, hint: "Call riksantikvaren-collections to list the datasets and their collections" },
  );
}

/** Whether `value` looks like a GeoJSON Feature (what parseFeature reads), checked in constant time. */
function isFeatureShape(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const f = value as Record<string, unknown>;
  return f["type"] === "Feature" || ("properties" in f && "geometry" in f);
}
