import { clientSettings } from "../../http/settings.ts";
import type { Clock } from "../../clock.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient, QueryValue } from "../../http/fetch_client.ts";
import { callDeadline, pageDeadline } from "../../http/deadline.ts";
import { remainingMs } from "../../http/request_scope.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import type { SnlSettings } from "./settings.ts";
import { errorMessageOf } from "./parse.ts";
import { isDefaultBase, originFor, SITE_IDS, SITES } from "./sites.ts";
import type { SiteId } from "./sites.ts";

/** What one request returned. */
export interface SnlAnswer {
  data: unknown;
  /** The final request URL, for the result's provenance. */
  url: string;
}

// Refusal raised from the client's URL check; the shared client reports it as a
// VALIDATION_ERROR when the error's name is "SsrfError".
class OffSiteError extends Error {
  override name = "SsrfError";
}

/** SNL's search API and article JSON on each sister site, one shared-runtime client per origin. */
export class SnlApi {
  #settings: SnlSettings;
  #http: HttpRuntime;
  #clock: Clock;
  #clients = new Map<string, HttpClient>();
  #allowedHosts: Set<string>;

  constructor(settings: SnlSettings, http: HttpRuntime, clock: Clock) {
    this.#settings = settings;
    this.#http = http;
    this.#clock = clock;
    this.#allowedHosts = isDefaultBase(settings.base_url)
      ? new Set(SITE_IDS.flatMap((id) => [SITES[id].host, `www.${SITES[id].host}`]))
      : new Set([new URL(settings.base_url).host]);
  }

  /**
   * A deadline for one tool call, covering every request and retry it makes: the provider's
   * `timeout`, or the tool call's own deadline when that comes first.
   */
  deadline(): number {
    return callDeadline(this.#clock.now(), this.#settings);
  }

  /**
   * The deadline of one more page of a multi-page answer (a result file), ending the provider's
   * `deadline_margin_ms` before the call's deadline; null when too little time is left for it.
   */
  pageDeadline(): number | null {
    return pageDeadline(this.#clock.now(), this.#settings);
  }

  /** Most search results one result file holds. */
  get fileMaxResults(): number {
    return this.#settings.file_max_results;
  }

  /** The origin serving `site`. */
  origin(site: SiteId): string {
    return originFor(this.#settings.base_url, site);
  }

  /** GET `/api/v1/search`. */
  search(
    site: SiteId,
    query: Record<string, QueryValue>,
    ctx: ToolCallContext,
    deadline: number,
  ): Promise<SnlAnswer> {
    return this.#get(site, "api/v1/search", query, ctx, deadline);
  }

  /** GET a path on the site (an article's `.json`, or the article-by-id route). */
  get(site: SiteId, path: string, ctx: ToolCallContext, deadline: number): Promise<SnlAnswer> {
    return this.#get(site, path, {}, ctx, deadline);
  }

  async #get(
    site: SiteId,
    path: string,
    query: Record<string, QueryValue>,
    ctx: ToolCallContext,
    deadline: number,
  ): Promise<SnlAnswer> {
    const now = this.#clock.now();
    const remaining = deadline - now;
    if (remaining <= 0) {
      throw new ToolError(
        "TIMEOUT",
        remainingMs(now) <= 0
          ? `${SITES[site].name} did not answer before this tool call's deadline`
          : `${SITES[site].name} did not answer within the ${this.#settings.timeout} s deadline`,
        {
          retryable: true,
          hint: "Try again; the upstream may be slow right now",
        },
      );
    }
    const answer = await this.#client(site).json<unknown>(path, {
      query,
      signal: ctx.signal,
      logger: ctx.logger,
      timeoutMs: remaining,
      // An error object or a body that is no object at all must not be served again from the cache.
      cacheable: (data) => data !== null && typeof data === "object" && errorMessageOf(data) === null,
    });
    return { data: answer.data, url: answer.url };
  }

  #client(site: SiteId): HttpClient {
    const origin = this.origin(site);
    let client = this.#clients.get(origin);
    if (client) return client;
    const s = this.#settings;
    const allowed = this.#allowedHosts;
    client = this.#http.client({
      provider: "snl",
      upstreamName: SITES[site].name,
      licence: 'Per article: "fri" = CC BY-SA 3.0 (credit the authors and the site), "begrenset" = no reuse',
      ...clientSettings(s),
      baseUrl: `${origin}/`,
      // Redirects may move between the SNL sites (the shared client drops secrets on the way),
      // never off them.
      redirectOrigins: [...allowed].map((host) => new URL(origin).protocol + "//" + host),
      checkUrl: (url) => {
        if (!allowed.has(url.host)) {
          throw new OffSiteError(
            `${
              SITES[site].name
            } redirected to another host ("${url.host}"), which this server does not follow`,
          );
        }
      },
    });
    this.#clients.set(origin, client);
    return client;
  }
}

/** Whether `e` is the upstream's "no such page" answer. */
export function isNotFound(e: unknown): e is UpstreamError {
  return e instanceof UpstreamError && (e.status === 404 || e.status === 410);
}
