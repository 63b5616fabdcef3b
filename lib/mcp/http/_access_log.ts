// The HTTP access log: one line per request ("http request"), carrying what the request did
// (method, path, status, duration, session, JSON-RPC method, the tool call and its outcome), or
// a sample of them (`access_log`, docs/OBSERVABILITY.md).
import type { Logger } from "../../log.ts";

/** Which requests get their access line (the `access_log` setting). */
export type AccessLogMode = "all" | "sampled" | "off";

/** A request that took at least this long is logged when sampling. */
export const SLOW_REQUEST_MS = 1000;

/** Writes the access lines the `access_log` setting keeps. */
export class AccessLog {
  #logger: Logger;
  #mode: AccessLogMode;
  #sample: number;
  #seen = 0;

  constructor(logger: Logger, mode: AccessLogMode, sample: number) {
    this.#logger = logger;
    this.#mode = mode;
    this.#sample = Math.max(1, sample);
  }

  /**
   * The line of a finished request, unless the mode leaves it out: errors (a status of 400 or
   * more, a tool call that failed) are always written, slow requests and one in `sample` of the
   * rest when sampling, every request with `all`.
   */
  write(fields: Record<string, unknown>, status: number, durationMs: number): void {
    const failed = status >= 400 || fields["tool_status"] === "error";
    if (!failed && this.#mode !== "all") {
      if (this.#mode === "off") return;
      if (durationMs < SLOW_REQUEST_MS && ++this.#seen % this.#sample !== 0) return;
    }
    fields["status"] = status;
    fields["duration_ms"] = Math.round(durationMs);
    this.#logger.info("http request", fields);
  }
}
