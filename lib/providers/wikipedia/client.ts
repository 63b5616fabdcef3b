import { clientSettings } from "../../http/settings.ts";
import type { Clock } from "../../clock.ts";
import { ToolError, UpstreamError } from "../../errors.ts";
import type { HttpClient, QueryValue } from "../../http/fetch_client.ts";
import { callDeadline, pageDeadline } from "../../http/deadline.ts";
import { remainingMs } from "../../http/request_scope.ts";
import { parseRetryAfter } from "../../http/retry.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import type { WikipediaSettings } from "./settings.ts";
import { editionName, isTemplate, languageProblem, originFor } from "./language.ts";
import { apiErrorOf, isQueryAnswer } from "./parse.ts";
import type { ApiErrorInfo } from "./parse.ts";

/** What one Action API call returned. */
export interface ApiAnswer {
  data: unknown;
  /** The request URL, for the result's provenance. */
  url: string;
}

// Refusal raised from the client's URL check; the shared client reports it as a
// VALIDATION_ERROR when the error's name is "SsrfError".
class OffSiteError extends Error {
  override name = "SsrfError";
}

/** Wikimedia asks automated clients to wait at least this long after a maxlag error. */
const MAXLAG_MIN_WAIT_MS = 5_000;

/** Language clients kept at once (about 340 Wikipedia editions exist; few are used together). */
const MAX_CLIENTS = 64;

/**
 * The MediaWiki Action API of every language edition: one shared-runtime HttpClient per origin
 * (so breakers and rate limits are per host), errors sent with HTTP 200 mapped to the error
 * contract, and maxlag answered by waiting as `Retry-After` says, within the call's deadline.
 */
export class WikipediaApi {
  #settings: WikipediaSettings;
  #http: HttpRuntime;
  #clock: Clock;
  #clients = new Map<string, HttpClient>();
  /** How many language clients exist now (for tests). */
  get clientCount(): number {
    return this.#clients.size;
  }

  constructor(settings: WikipediaSettings, http: HttpRuntime, clock: Clock) {
    this.#settings = settings;
    this.#http = http;
    this.#clock = clock;
  }

  /** The language used when a call names none. */
  get defaultLanguage(): string {
    return this.#settings.default_language;
  }

  /**
   * A deadline for one tool call, covering every request, retry and maxlag wait it makes: the
   * provider's `timeout`, or the tool call's own deadline when that comes first.
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

  /** The origin serving `language`; throws a VALIDATION_ERROR for a bad code, before any request. */
  origin(language: string): string {
    const problem = languageProblem(language);
    if (problem) {
      throw new ToolError("VALIDATION_ERROR", problem, {
        field: "language",
        hint: 'Pass a language code such as "no", "nn" or "en", or leave it out for the default',
      });
    }
    return originFor(this.#settings.base_url, language);
  }

  /** The article's page URL, `https://no.wikipedia.org/wiki/Title_with_underscores`. */
  pageUrl(language: string, title: string): string {
    // Titles from an upstream answer may carry a lone surrogate, which encodeURIComponent refuses.
    const path = encodeURIComponent(title.toWellFormed().replace(/ /g, "_"))
      .replace(/%2F/g, "/")
      .replace(/%3A/g, ":");
    return `${this.origin(language)}/wiki/${path}`;
  }

  /** The page's revision history, where its authors are listed. */
  historyUrl(language: string, title: string): string {
    return `${this.origin(language)}/w/index.php?title=${
      encodeURIComponent(title.toWellFormed().replace(/ /g, "_"))
    }&action=history`;
  }

  /** `host[:port]` of the language's origin, for messages and credit lines. */
  host(language: string): string {
    return new URL(this.origin(language)).host;
  }

  /**
   * Calls `/w/api.php` with `params` (format=json and formatversion=2 added) and returns the
   * body, or throws the error contract for an error the API reported in the body.
   */
  async call(
    language: string,
    params: Record<string, QueryValue>,
    ctx: ToolCallContext,
    deadline: number,
  ): Promise<ApiAnswer> {
    const client = this.#client(language);
    const query: Record<string, QueryValue> = { ...params, format: "json", formatversion: 2 };
    if (this.#settings.maxlag > 0) query["maxlag"] = this.#settings.maxlag;
    for (let retry = 0;; retry++) {
      const remaining = deadline - this.#clock.now();
      if (remaining <= 0) throw this.#timeout(language);
      let answer;
      try {
        answer = await client.json<unknown>("w/api.php", {
          query,
          signal: ctx.signal,
          logger: ctx.logger,
          timeoutMs: remaining,
          // A body carrying an error (maxlag above all), or one that is no query answer at all,
          // must not be served again from the cache.
          cacheable: (data) => apiErrorOf(data) === null && isQueryAnswer(data),
          ...(retry > 0 ? { fresh: true } : {}),
        });
      } catch (e) {
        throw this.#upstreamFailure(e, language);
      }
      const error = apiErrorOf(answer.data);
      if (!error) return { data: answer.data, url: answer.url };
      if (error.code !== "maxlag") throw this.#apiError(error, language);
      const waitMs = Math.max(
        parseRetryAfter(answer.headers?.get("retry-after") ?? null, this.#clock.now()) ?? MAXLAG_MIN_WAIT_MS,
        0,
      );
      const waitS = Math.ceil(waitMs / 1000);
      if (retry >= this.#settings.max_retries || this.#clock.now() + waitMs >= deadline) {
        throw new ToolError(
          "RATE_LIMITED",
          `${editionName(language)} asked clients to back off: its databases are lagging${
            error.lag === null ? "" : ` by ${error.lag} s`
          }`,
          {
            retryable: true,
            retryAfterS: waitS,
            messageId: "maxlag",
            hint: `Wait ${waitS} seconds, then call again`,
          },
        );
      }
      ctx.logger.info("wikipedia maxlag: waiting before retry", { wait_ms: waitMs, lag_s: error.lag });
      try {
        await this.#clock.sleep(waitMs, ctx.signal);
      } catch {
        throw new ToolError("CANCELLED", "The call was cancelled by the client");
      }
    }
  }

  #client(language: string): HttpClient {
    const origin = this.origin(language);
    // Keyed by language as well: with a base_url without {lang} every edition shares one origin,
    // and each answer must still name the edition it came from.
    const key = `${language} ${origin}`;
    let client = this.#clients.get(key);
    if (client) return client;
    const s = this.#settings;
    const host = new URL(origin).host;
    client = this.#http.client({
      provider: "wikipedia",
      upstreamName: editionName(language),
      licence: "CC BY-SA 4.0 (credit Wikipedia contributors)",
      ...clientSettings(s),
      baseUrl: `${origin}/`,
      ...(s.user_agent ? { headers: { "user-agent": s.user_agent } } : {}),
      // Redirects stay on the language's own host.
      checkUrl: (url) => {
        if (url.host !== host) {
          throw new OffSiteError(
            `${
              editionName(language)
            } redirected to another host ("${url.host}"), which this server does not follow`,
          );
        }
      },
    });
    // Any well-formed code makes a client: keep the most recent ones only, so a caller cycling
    // through codes cannot grow memory without bound.
    if (this.#clients.size >= MAX_CLIENTS) this.#clients.delete(this.#clients.keys().next().value!);
    this.#clients.set(key, client);
    return client;
  }

  #apiError(error: ApiErrorInfo, language: string): ToolError {
    const info = error.info.length > 300 ? `${error.info.slice(0, 299)}…` : error.info;
    const message = `${editionName(language)} refused the request (${error.code})${info ? `: ${info}` : ""}`;
    const code = error.code;
    if (code === "missingtitle" || code.startsWith("nosuch")) {
      return new ToolError("NOT_FOUND", message, {
        messageId: code,
        hint: "Check the title, or find it with wikipedia-search",
      });
    }
    if (code === "ratelimited") {
      return new ToolError("RATE_LIMITED", message, {
        retryable: true,
        messageId: code,
        hint: "Wait a minute, then call again",
      });
    }
    if (
      /^(invalid|bad|missingparam|mustbe|outofrange|toobig|toosmall|integeroutofrange|paramvalidation|unknown_)/
        .test(code)
    ) {
      return new ToolError("VALIDATION_ERROR", message, {
        messageId: code,
        hint: "Correct the arguments as the message says, then call again",
      });
    }
    const retryable = code === "readonly" || code.startsWith("internal_api_error");
    return new ToolError("API_ERROR", message, {
      retryable,
      messageId: code,
      hint: retryable ? "Try again in a moment" : "Check the arguments against the tool's description",
    });
  }

  #upstreamFailure(e: unknown, language: string): unknown {
    // A language code that names no edition fails as a name lookup: say so, not just "try again".
    // The default edition failing to resolve is the network (or DNS), not the language: the
    // generic transport hint stands then, as it does for refused or reset connections.
    if (
      e instanceof UpstreamError && e.errorType === "TRANSPORT_ERROR" &&
      isTemplate(this.#settings.base_url) &&
      language !== this.#settings.default_language && /could not be resolved/.test(e.message)
    ) {
      return new ToolError(e.errorType, e.message, {
        retryable: true,
        hint:
          `Check that "${language}" is an existing Wikipedia language edition (see https://meta.wikimedia.org/wiki/List_of_Wikipedias); if it is, try again in a moment`,
      });
    }
    return e;
  }

  #timeout(language: string): ToolError {
    const callDeadline = remainingMs(this.#clock.now()) <= 0;
    return new ToolError(
      "TIMEOUT",
      callDeadline
        ? `${editionName(language)} did not answer before this tool call's deadline`
        : `${editionName(language)} did not answer within the ${this.#settings.timeout} s deadline`,
      { retryable: true, hint: "Try again; the upstream may be slow right now" },
    );
  }
}
