// Why a JSON value is not a JSON-RPC message the SDK accepts, with the code JSON-RPC 2.0 gives
// that reason: -32600 for a broken envelope (`jsonrpc`, `method`, `id`), -32602 for an envelope
// that is fine but whose `params` are not (e.g. `_meta.progressToken` an object). Shared by the
// stdio and HTTP transports so both answer alike.

/** JSON-RPC's codes for a refused message. */
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

/** The code and message for `item`, which the SDK's message schema refused. */
export function invalidMessage(item: unknown): { code: number; message: string } {
  const request = (message: string) => ({ code: INVALID_REQUEST, message: `Invalid Request: ${message}` });
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    return request('expected a JSON-RPC 2.0 object with "jsonrpc": "2.0"');
  }
  const o = item as Record<string, unknown>;
  if (o["jsonrpc"] !== "2.0") return request('"jsonrpc" must be "2.0"');
  if ("method" in o && typeof o["method"] !== "string") return request('"method" must be a string');
  if ("id" in o && !(typeof o["id"] === "string" || typeof o["id"] === "number")) {
    return request('"id" must be a string or a number');
  }
  if (!("method" in o) && !("result" in o) && !("error" in o)) {
    return request('a message needs "method" (request or notification) or "result"/"error" (response)');
  }
  if (typeof o["method"] === "string" && "params" in o) {
    // The envelope is sound: what the schema refused is in the params.
    const params = o["params"];
    const invalid = (message: string) => ({ code: INVALID_PARAMS, message: `Invalid params: ${message}` });
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      return invalid('"params" must be an object');
    }
    const meta = (params as Record<string, unknown>)["_meta"];
    if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
      return invalid('"params._meta" must be an object');
    }
    const token = (meta as Record<string, unknown> | undefined)?.["progressToken"];
    if (token !== undefined && typeof token !== "string" && typeof token !== "number") {
      return invalid('"params._meta.progressToken" must be a string or a number');
    }
    return invalid(`"params" do not fit "${o["method"]}"`);
  }
  return request("the message does not match the JSON-RPC 2.0 request, notification or response shape");
}
