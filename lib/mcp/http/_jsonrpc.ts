// JSON-RPC framing on the HTTP side: the body cap, -32700 for bytes that are not JSON and
// -32600 for JSON that is not a JSON-RPC message or nests too deeply, before the SDK sees anything.
import { nestingDepth } from "../shaping.ts";
import { parseJSONRPCMessage } from "../sdk.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { invalidMessage } from "../jsonrpc_errors.ts";
import { DEFAULT_MAX_DEPTH } from "../stdio_transport.ts";

/** JSON-RPC error codes used on the HTTP side. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** Implementation-defined server error (the SDK uses it for transport-level refusals). */
export const SERVER_ERROR = -32000;
/** The SDK's code for an unknown or expired session. */
export const SESSION_NOT_FOUND = -32001;

/** Most messages in one JSON-RPC batch. */
const MAX_BATCH = 100;

type JsonRpcId = string | number | null;

/** An HTTP response carrying a JSON-RPC error object. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  options: { id?: JsonRpcId; headers?: Record<string, string> } = {},
): Response {
  return Response.json(
    { jsonrpc: "2.0", id: options.id ?? null, error: { code, message } },
    { status, headers: options.headers ?? {} },
  );
}

/** The outcome of reading a POST body: the messages, or the error response to send. */
export type ReadResult =
  | {
    ok: true;
    /** What the SDK is to parse: the body, or a batch's valid elements only. */
    body: unknown;
    messages: JSONRPCMessage[];
    /** A batch's answers to its invalid elements, to send beside the SDK's answers. */
    errors: JsonRpcErrorMessage[];
  }
  | { ok: false; response: Response };

/** A JSON-RPC error response. */
export interface JsonRpcErrorMessage {
  jsonrpc: "2.0";
  id: JsonRpcId;
  error: { code: number; message: string };
}

/** Options for {@linkcode readJsonRpc}. */
export interface ReadJsonRpcOptions {
  /** Aborted when the body has taken too long: reading stops and what arrived is dropped. */
  deadline?: AbortSignal;
  /** The deadline in seconds, for the message. */
  deadlineS?: number;
  /**
   * A body of declared length may be read whole by the runtime, which cannot be called off: set
   * only where something else ends the read at the deadline (the connection guard closes the
   * connection then). Otherwise every body is read chunk by chunk and cancelled at the deadline.
   */
  wholeBody?: boolean;
}

/**
 * Reads at most `maxBytes` of `req`'s body, before `options.deadline`, and checks it is one
 * JSON-RPC message or a batch.
 */
export async function readJsonRpc(
  req: Request,
  maxBytes: number,
  options: ReadJsonRpcOptions = {},
): Promise<ReadResult> {
  const tooLarge = (): ReadResult => ({
    ok: false,
    response: jsonRpcError(
      413,
      SERVER_ERROR,
      `Request body too large: the limit is ${maxBytes} bytes (MCP_MAX_BODY_BYTES)`,
    ),
  });
  if (Number(req.headers.get("content-length") ?? 0) > maxBytes) return tooLarge();
  const text = await readCapped(req, maxBytes, options.deadline, options.wholeBody === true);
  if (text === TOO_LARGE) return tooLarge();
  if (text === TIMED_OUT) {
    return {
      ok: false,
      response: jsonRpcError(
        408,
        SERVER_ERROR,
        `Request Timeout: the request body did not arrive within ${
          options.deadlineS ?? "the allowed"
        } s; send it again`,
        { headers: { "Connection": "close" } },
      ),
    };
  }
  if (text === BROKEN) {
    // The client went away or sent a malformed chunk: its fault, not the server's.
    return {
      ok: false,
      response: jsonRpcError(
        400,
        SERVER_ERROR,
        "Bad Request: the request body could not be read (the connection broke off); send it again",
      ),
    };
  }

  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      response: jsonRpcError(400, PARSE_ERROR, `Parse error: the body is not JSON (${detail})`),
    };
  }
  const items = Array.isArray(raw) ? raw : [raw];
  if (Array.isArray(raw) && (raw.length === 0 || raw.length > MAX_BATCH)) {
    return {
      ok: false,
      response: jsonRpcError(
        400,
        INVALID_REQUEST,
        `Invalid Request: a batch must hold 1 to ${MAX_BATCH} messages, got ${raw.length}`,
      ),
    };
  }
  const messages: JSONRPCMessage[] = [];
  const valid: unknown[] = [];
  const errors: JsonRpcErrorMessage[] = [];
  for (const item of items) {
    const refused = check(item);
    if ("code" in refused) errors.push({ jsonrpc: "2.0", id: idOf(item), error: refused });
    else {
      messages.push(refused.message);
      valid.push(item);
    }
  }
  if (!Array.isArray(raw)) {
    const error = errors[0];
    if (error) {
      return {
        ok: false,
        response: jsonRpcError(400, error.error.code, error.error.message, { id: error.id }),
      };
    }
    return { ok: true, body: raw, messages, errors };
  }
  // A batch is answered element by element (JSON-RPC 2.0, section 6): the valid ones are served,
  // each invalid one gets its own error; only a batch with nothing valid is refused whole.
  if (messages.length === 0) return { ok: false, response: Response.json(errors, { status: 400 }) };
  return { ok: true, body: valid, messages, errors };
}

/** One message checked: parsed, or the error it gets. */
function check(item: unknown): { message: JSONRPCMessage } | { code: number; message: string } {
  // Checked before anything walks the message recursively (schema parsing, handlers, replies).
  if (nestingDepth(item, DEFAULT_MAX_DEPTH) > DEFAULT_MAX_DEPTH) {
    return {
      code: INVALID_REQUEST,
      message:
        `Invalid Request: the message nests objects and arrays more than ${DEFAULT_MAX_DEPTH} levels deep`,
    };
  }
  if (plainRequest(item)) return { message: item };
  try {
    return { message: parseJSONRPCMessage(item) };
  } catch {
    return invalidMessage(item);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): boolean {
  return typeof value === "string" || Number.isInteger(value);
}

const MESSAGE_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

/**
 * Whether `item` is a request or notification of the plain shape nearly every client sends, one
 * the SDK's message schema accepts as it is: checked here without building the schema's copy (the
 * SDK parses the body again anyway). Anything else (answers, `_meta` beyond a progress token) is
 * left to the schema and its error messages.
 */
function plainRequest(item: unknown): item is JSONRPCMessage {
  if (!isPlainObject(item) || item["jsonrpc"] !== "2.0" || typeof item["method"] !== "string") return false;
  for (const key in item) if (!MESSAGE_KEYS.has(key)) return false;
  if ("id" in item && !isRequestId(item["id"])) return false;
  const params = item["params"];
  if (params === undefined) return !("params" in item);
  if (!isPlainObject(params)) return false;
  const meta = params["_meta"];
  if (meta === undefined) return !("_meta" in params);
  if (!isPlainObject(meta) || RELATED_TASK in meta) return false;
  return meta["progressToken"] === undefined
    ? !("progressToken" in meta)
    : isRequestId(meta["progressToken"]);
}

/** The `_meta` key the SDK's schema checks beyond the progress token. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

/**
 * Whether a message already checked is a request (it has a method and an id): the SDK's
 * `isJSONRPCRequest` checks its whole schema again.
 */
export function isRequest(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: string | number; method: string } {
  return "method" in message && "id" in message;
}

/**
 * The SDK's answer to a batch's valid elements with the errors of its invalid ones added: as
 * more elements of a JSON array, or as more events ahead of an event stream. A batch whose valid
 * elements needed no answer (202) gets the errors alone.
 */
export function withBatchErrors(res: Response, errors: readonly JsonRpcErrorMessage[]): Response {
  if (errors.length === 0) return res;
  const type = res.headers.get("content-type") ?? "";
  const headers = new Headers(res.headers);
  if (res.status === 202 || res.body === null) {
    void res.body?.cancel().catch(() => {});
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    return Response.json(errors, { status: 200, headers });
  }
  if (type.includes("text/event-stream")) {
    const head = new TextEncoder().encode(
      errors.map((e) => `event: message\ndata: ${JSON.stringify(e)}\n\n`).join(""),
    );
    const reader = res.body.getReader();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(stream, { status: res.status, headers });
  }
  if (type.includes("application/json")) {
    const merged = res.json().then((answer) =>
      JSON.stringify([...(Array.isArray(answer) ? answer : [answer]), ...errors])
    );
    headers.delete("content-length");
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(await merged.catch(() => JSON.stringify(errors))));
        controller.close();
      },
    });
    return new Response(stream, { status: res.status, headers });
  }
  return res;
}

const TOO_LARGE = Symbol("too large");
const BROKEN = Symbol("broken");
const TIMED_OUT = Symbol("timed out");

/**
 * The body as text; TOO_LARGE once more than `maxBytes` arrived; BROKEN when reading failed;
 * TIMED_OUT when `deadline` was aborted first (a slow client must not pin what it sent so far).
 */
async function readCapped(
  req: Request,
  maxBytes: number,
  deadline: AbortSignal | undefined,
  wholeBody: boolean,
): Promise<string | typeof TOO_LARGE | typeof BROKEN | typeof TIMED_OUT> {
  if (req.body === null) return "";
  const declared = wholeBody ? declaredLength(req) : undefined;
  if (declared !== undefined && declared <= maxBytes) return await readDeclared(req, maxBytes, deadline);
  const reader = req.body.getReader();
  // Cancelling the reader ends a pending read at once.
  const stop = (): void => void reader.cancel().catch(() => {});
  deadline?.addEventListener("abort", stop, { once: true });
  const decoder = new TextDecoder();
  let received = 0;
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (deadline?.aborted) return TIMED_OUT;
      if (done) break;
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => {});
        return TOO_LARGE;
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return deadline?.aborted ? TIMED_OUT : BROKEN;
  } finally {
    deadline?.removeEventListener("abort", stop);
    reader.releaseLock();
  }
  return text + decoder.decode();
}

/** The body's length as its Content-Length header declares it, when it declares one. */
function declaredLength(req: Request): number | undefined {
  const value = req.headers.get("content-length");
  if (value === null || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * A body whose length the client declared, which the HTTP server holds it to: read whole by the
 * runtime (no JavaScript read loop), unless `deadline` is aborted first. A read left pending then
 * holds at most the declared length, within the cap, until its connection closes (see
 * `wholeBody`).
 */
async function readDeclared(
  req: Request,
  maxBytes: number,
  deadline?: AbortSignal,
): Promise<string | typeof TOO_LARGE | typeof BROKEN | typeof TIMED_OUT> {
  if (deadline?.aborted) return TIMED_OUT;
  let stop: (() => void) | undefined;
  const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
    stop = () => resolve(TIMED_OUT);
    deadline?.addEventListener("abort", stop, { once: true });
  });
  const read = req.bytes();
  // Nothing waits for a read still pending after the deadline.
  read.catch(() => {});
  try {
    const bytes = await Promise.race([read.catch((): typeof BROKEN => BROKEN), timedOut]);
    if (bytes === TIMED_OUT || bytes === BROKEN) return deadline?.aborted ? TIMED_OUT : bytes;
    // A Request made in this process may carry more than it declares; one from a client cannot.
    if (bytes.byteLength > maxBytes) return TOO_LARGE;
    return new TextDecoder().decode(bytes);
  } finally {
    if (stop) deadline?.removeEventListener("abort", stop);
  }
}

function idOf(item: unknown): JsonRpcId {
  if (typeof item !== "object" || item === null || !("id" in item)) return null;
  const id = (item as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
