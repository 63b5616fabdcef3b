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
import type { ServedConnection } from "./_conn_types.ts";

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
      | Partial<Pick<ServedConnection, "finished" | "shutdown">>
      | undefined;
    if (!(served?.finished instanceof Promise) || typeof served.shutdown !== "function") {
      aborting.abort();
      throw new Error(`Deno ${Deno.version.deno} served the connection in a way this server does not know`);
    }
    // Deno's abort listener cancels the connection by its resource, and throws (uncaught: it runs
    // as an event listener) once the server let that resource go, which it does on a graceful
    // shutdown and when the connection ends (in the same turn that settles `finished`, before
    // any timer can run). So: abort once, and never after either.
    let over = false;
    const finished = served.finished.finally(() => {
      over = true;
    });
    return {
      finished,
      shutdown: () => {
        over = true;
        return served.shutdown!();
      },
      abort: () => {
        if (over) return;
        over = true;
        aborting.abort();
      },
    };
  };
}
