// The connection guard's direct way (_conn_guard.ts): Deno's HTTP server reads each socket the
// guard accepted, so HTTP is parsed once, with no loopback hop, and the guard counts and times
// connections without touching their bytes.
//
// Deno has no public API that serves one accepted connection: `Deno.serve` serves only a
// listener it opens itself. The function it serves each connection with, `serveHttpOnConnection`
// (Deno's ext/http/00_serve.ts), is reached through `Deno[Deno.internal]`. The release binary
// embeds the Deno it was built with, and tests/mcp/http/conn_direct_test.ts pins the function's
// presence and behaviour in the Deno that runs them; where a Deno has no such function, the
// guard takes the proxy way instead and says why.
import type { Dispatched, ServedConnection } from "./_conn_types.ts";
import { finishResponse } from "./_streams.ts";

type Handler = (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/** Serves one accepted connection with the HTTP server until it ends. */
export type HandOff = (conn: Deno.Conn) => ServedConnection;

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: Handler,
  onError: (e: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => unknown;

/** Deno's function that serves one connection, if this Deno has it. */
function serveOnConnection(): ServeOnConnection | undefined {
  const deno = Deno as unknown as { internal?: symbol } & Record<symbol, unknown>;
  const internals = deno.internal === undefined ? undefined : deno[deno.internal];
  const fn = (internals as Record<string, unknown> | undefined)?.serveHttpOnConnection;
  // (conn, signal, handler, onError, onListen), as in Deno 2.
  return typeof fn === "function" && fn.length === 5 ? fn as ServeOnConnection : undefined;
}

/**
 * Hands accepted connections to Deno's HTTP server with `handler`; or why this Deno cannot (the
 * guard then copies bytes through a loopback port).
 */
export function directServer(
  handler: Handler,
  onError: (e: unknown) => Response | Promise<Response>,
): HandOff | string {
  const serveOn = serveOnConnection();
  if (!serveOn) return `Deno ${Deno.version.deno} offers no way to serve an accepted connection`;
  return (conn) => {
    const aborting = new AbortController();
    const served = serveOn(conn, aborting.signal, handler, onError, () => {}) as
      | { finished?: unknown }
      | undefined;
    if (!(served?.finished instanceof Promise)) {
      aborting.abort();
      throw new Error(`Deno ${Deno.version.deno} served the connection in a way this server does not know`);
    }
    // Deno's abort listener cancels the connection by its resource, and throws (uncaught: it runs
    // as an event listener) once the server let that resource go, which it does when the
    // connection ends, in the same turn that settles `finished`, before any timer can run (and on
    // a graceful shutdown, which the guard never asks for). So: abort once, never after the end.
    let over = false;
    const finished = (served.finished as Promise<void>).finally(() => {
      over = true;
    });
    return {
      finished,
      abort: () => {
        if (over) return;
        over = true;
        aborting.abort();
      },
    };
  };
}

/** Bodies up to this size are handed to Deno whole; larger ones are paced (see `paced`). */
export const WHOLE_BYTES = 64 * 1024;

/**
 * The direct way's answer to a request the guard dispatched: it says when the answer was made
 * (a stream, `text/event-stream`, is not timed), ends the connection with it when the guard or the
 * answer says so (`Connection: close`: Deno's server would keep the connection open), and paces a
 * large body.
 */
export function directAnswer(res: Response, dispatched: Dispatched): Response | Promise<Response> {
  if (dispatched.ending()) res = closing(res);
  const stream = res.headers.get("content-type")?.startsWith("text/event-stream") === true;
  dispatched.answered(stream, res.headers.get("connection")?.toLowerCase() === "close");
  return stream ? res : paced(res, dispatched.moved);
}

/**
 * `res` with its body handed over so that Deno's `completed` means the client took it. Deno
 * settles `completed` for a body it holds whole as soon as it has it, before a byte is written:
 * the guard would take a connection still sending megabytes as idle. A body over WHOLE_BYTES
 * therefore goes as a stream Deno pulls as the socket takes it (`moved` on every pull), and
 * `completed` settles with the last pull.
 */
export async function paced(res: Response, moved: () => void): Promise<Response> {
  const bytes = await res.bytes();
  if (bytes.byteLength <= WHOLE_BYTES) return new Response(bytes.byteLength === 0 ? null : bytes, res);
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const end = Math.min(at + WHOLE_BYTES, bytes.byteLength);
      controller.enqueue(bytes.subarray(at, end));
      at = end;
      moved();
      if (at >= bytes.byteLength) controller.close();
    },
  }, { highWaterMark: 0 });
  const answer = new Response(body, res);
  // Sent with its length, not chunked (a HEAD answer keeps it too).
  answer.headers.set("content-length", String(bytes.byteLength));
  return answer;
}

/** `res` saying the connection ends with it (`Connection: close`). */
export function closing(res: Response): Response {
  try {
    res.headers.set("connection", "close");
    return res;
  } catch {
    // Immutable headers (a response fetched elsewhere): a copy with its own.
    return finishResponse(res, { "connection": "close" });
  }
}
