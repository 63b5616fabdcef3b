// Middleware: what no route serves is refused before any work is done: new requests while
// draining, an over-long URL or header block, a missing or foreign Host, a foreign Origin (DNS
// rebinding).
import { jsonRpcError, SERVER_ERROR } from "./_jsonrpc.ts";
import { hostRefusal, originRefusal } from "./_security.ts";
import { plain, splitHeader } from "./_requests.ts";
import type { HttpState, RequestContext } from "./_context.ts";
import { shuttingDown } from "./_answers.ts";

/** Longest request URL accepted, in characters. */
export const MAX_URL_LENGTH = 8 * 1024;
/** Most bytes of request header names and values together. */
export const MAX_HEADER_BYTES = 32 * 1024;

/** Host headers already judged, with the verdict: most requests repeat one of a few. */
const MAX_HOST_VERDICTS = 64;

/** The admission step for `state`: the refusal of a request no route may serve, or undefined. */
export function createAdmission(state: HttpState): (ctx: RequestContext) => Response | undefined {
  const verdicts = new Map<string, string | undefined>();
  const hostVerdict = (host: string): string | undefined => {
    if (verdicts.has(host)) return verdicts.get(host);
    const verdict = hostRefusal(host, state.policy);
    if (verdicts.size >= MAX_HOST_VERDICTS) verdicts.clear();
    verdicts.set(host, verdict);
    return verdict;
  };
  return (ctx) => admission(state, ctx, hostVerdict);
}

function admission(
  state: HttpState,
  ctx: RequestContext,
  hostVerdict: (host: string) => string | undefined,
): Response | undefined {
  const { req, url, path, fields } = ctx;
  // While draining, only POSTs into live sessions pass (they may carry a client's answer to
  // a call in flight); any new request among them is refused after parsing.
  if (
    state.closing && !(req.method === "POST" && (path === "/message" || req.headers.has("mcp-session-id")))
  ) {
    return shuttingDown();
  }
  if (url.href.length > MAX_URL_LENGTH) {
    return plain(414, `The request URL is longer than ${MAX_URL_LENGTH} characters`);
  }
  let headerBytes = 0;
  // Set in a callback, which narrowing does not follow.
  let host = null as string | null;
  let origin = null as string | null;
  // One pass over the headers: their size, the two this step checks, and which go on past the
  // handler (forwardedRequest). forEach, not for-of: Deno's pair iterator took 17 µs where forEach
  // takes 1.5 (docs/BENCHMARKS.md, "Where a 2026-07-28 call's time goes").
  const split = ctx.headers;
  req.headers.forEach((v, k) => {
    splitHeader(split, k, v);
    headerBytes += k.length + v.length + 4;
    if (k === "host") host = v;
    else if (k === "origin") origin = v;
  });
  if (headerBytes > MAX_HEADER_BYTES) {
    return plain(431, `The request headers exceed ${MAX_HEADER_BYTES} bytes`);
  }
  if (host === null || host.trim() === "") {
    fields["refused"] = "host";
    return jsonRpcError(400, SERVER_ERROR, "Bad Request: a Host header is required (HTTP/1.1)");
  }
  const hostProblem = hostVerdict(host);
  if (hostProblem) {
    fields["refused"] = "host";
    return jsonRpcError(403, SERVER_ERROR, `Forbidden: ${hostProblem}`);
  }
  const originProblem = originRefusal(origin, state.policy);
  if (originProblem) {
    fields["refused"] = "origin";
    return jsonRpcError(403, SERVER_ERROR, `Forbidden: ${originProblem}`);
  }
  return undefined;
}
