// How HttpClient (fetch_client.ts) reads a failure: what it tells the endpoint's breaker, and the
// words for it in errors (network causes, HTTP reasons, hints).
import { UpstreamError } from "../errors.ts";
import type { LastFailure } from "./breaker.ts";

/** What one call tells its endpoint's breaker. */
export type Verdict = { kind: "success" } | { kind: "failure"; last: LastFailure } | { kind: "none" };

/**
 * What a finished call tells its breaker: transport errors, upstream timeouts, 5xx and 429
 * are failures; any other answer from the upstream is a success; refusals of our own
 * (cancelled, rate limit, SSRF, redirect policy) and timeouts of a short tool-call deadline
 * say nothing about the upstream.
 */
export function verdictOf(e: unknown, callBound: boolean): Verdict {
  if (!(e instanceof UpstreamError)) return { kind: "none" };
  const last: LastFailure = {
    errorType: e.errorType,
    ...(e.status === undefined ? {} : { status: e.status }),
    ...(e.messageId === undefined ? {} : { messageId: e.messageId }),
  };
  switch (e.errorType) {
    case "TRANSPORT_ERROR":
      return { kind: "failure", last };
    case "TIMEOUT":
      return callBound ? { kind: "none" } : { kind: "failure", last };
    case "API_ERROR":
    case "RATE_LIMITED":
    case "DECODE_ERROR":
      if (e.status === undefined) return { kind: "none" };
      return e.status >= 500 || e.status === 429 ? { kind: "failure", last } : { kind: "success" };
    default:
      return { kind: "none" };
  }
}

/** A failure as a few words: "HTTP 503 msg-id" or the error type. */
export function describeFailure(last: LastFailure): string {
  const parts = [last.status === undefined ? last.errorType : `HTTP ${last.status}`];
  if (last.messageId) parts.push(last.messageId);
  return parts.join(" ");
}

/**
 * A short reason for a network failure, read from the innermost cause (Deno's fetch says only
 * "fetch failed" and keeps the detail in `cause`), without URLs.
 */
export function networkReason(error: unknown, host: string): string {
  const messages: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    messages.push(e.message);
  }
  const all = messages.join(" | ").toLowerCase();
  if (/dns error|failed to lookup|name or service not known|nodename nor servname/.test(all)) {
    return `the name "${host}" could not be resolved (no network, or a DNS problem)`;
  }
  if (/connection refused/.test(all)) return `the connection to "${host}" was refused`;
  if (/connection reset|broken pipe|unexpected eof|connection closed/.test(all)) {
    return "the connection was closed unexpectedly";
  }
  if (/certificate|tls|ssl/.test(all)) return `the TLS handshake with "${host}" failed`;
  if (/timed out|timeout/.test(all)) return "the connection timed out";
  const last = messages[messages.length - 1] ?? String(error);
  return last.replace(/https?:\/\/\S+/g, "<url>").replace(/\s+/g, " ").slice(0, 200);
}

/** The reason phrase of a status, with its leading space ("" when not a common one). */
export function reason(status: number): string {
  const reasons: Record<number, string> = {
    400: " Bad Request",
    401: " Unauthorized",
    403: " Forbidden",
    404: " Not Found",
    429: " Too Many Requests",
    500: " Internal Server Error",
    502: " Bad Gateway",
    503: " Service Unavailable",
    504: " Gateway Timeout",
  };
  return reasons[status] ?? "";
}

/** What to do about an upstream's HTTP status. */
export function hintForStatus(status: number): string {
  if (status === 429) return "The upstream is rate limiting: wait, then call again";
  if (status >= 500) return "The upstream is having trouble: try again in a moment";
  if (status === 404) return "Check the identifier; search first to find a valid one";
  if (status === 401 || status === 403) return "The upstream refused access; check credentials";
  return "Check the arguments against the tool's description";
}
