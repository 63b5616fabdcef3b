// Middleware: a POST's body, read once within `max_body_bytes` and `body_timeout` and parsed
// (lib/mcp/http/_jsonrpc.ts); the routes hand the parsed body on, never a serialised copy.
import { jsonRpcError, readJsonRpc, SERVER_ERROR } from "./_jsonrpc.ts";
import type { JsonRpcErrorMessage } from "./_jsonrpc.ts";
import { isJson } from "./_requests.ts";
import type { HttpState, RequestContext } from "./_context.ts";

/**
 * Reads `ctx.req`'s JSON-RPC body into `ctx.body` and `ctx.messages`, adding a batch's answers
 * to its invalid elements to `batchErrors`; returns the refusal of a body that cannot be served.
 */
export async function readBody(
  state: HttpState,
  ctx: RequestContext,
  batchErrors: JsonRpcErrorMessage[],
): Promise<Response | undefined> {
  if (!isJson(ctx.req.headers.get("content-type"))) {
    return jsonRpcError(415, SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json");
  }
  // Within body_timeout, so a client that trickles its body cannot pin memory.
  const deadline = new AbortController();
  const stop = state.bodyDeadline(() => deadline.abort());
  try {
    const read = await readJsonRpc(ctx.req, state.settings.max_body_bytes, {
      deadline: deadline.signal,
      deadlineS: state.bodyTimeoutMs / 1000,
      wholeBody: ctx.conn?.guarded === true,
    });
    if (!read.ok) return read.response;
    ctx.body = read.body;
    ctx.messages = read.messages;
    batchErrors.push(...read.errors);
    return undefined;
  } finally {
    stop();
  }
}
