// A fake upstream on 127.0.0.1 (port 0) that serves recorded fixtures and scripted faults:
// any status, Retry-After, delays, connection resets mid-body, wrong content types and
// truncated bodies. Every request is recorded so tests can assert what was sent.

/** Where recorded upstream bodies live. */
export const FIXTURES = new URL("../fixtures/", import.meta.url);

/** Reads a fixture as bytes (`"boj/json_success_code_api.json"`). */
export function fixtureBytes(path: string): Uint8Array<ArrayBuffer> {
  return Deno.readFileSync(new URL(path, FIXTURES));
}

/** Reads a UTF-8 fixture as text. */
export function fixtureText(path: string): string {
  return new TextDecoder().decode(fixtureBytes(path));
}

/** One scripted answer. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A file under tests/fixtures/ to serve as the body. */
  fixture?: string;
  /** A JSON value to serve (content type application/json). */
  json?: unknown;
  body?: string | Uint8Array;
  contentType?: string;
  /** Wait this long before answering (the client's deadline is what is tested, not this). */
  delayMs?: number;
  /** Send the first bytes of the body, then break the connection. */
  resetAfterBytes?: number;
  /** Send only this many bytes of the body, then end it cleanly (a cut-off document). */
  truncateAt?: number;
}

/** A request the fake received. */
export interface Received {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

/** A route: which requests it answers and how. */
export interface Route {
  method?: string;
  /** The path, exactly, or a pattern tested against the path. */
  path: string | RegExp;
  /** Further matching on the query, headers or body. */
  match?: (request: Received) => boolean;
  /**
   * The answer: one reply, a list answered in turn (the last repeats), or a function of the
   * request and how many times this route has answered before.
   */
  reply: Reply | Reply[] | ((request: Received, count: number) => Reply | Promise<Reply>);
}

/** The running fake. */
export class FakeUpstream {
  readonly requests: Received[] = [];
  #routes: { route: Route; count: number }[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  #aborts = new AbortController();

  private constructor(routes: readonly Route[]) {
    for (const route of routes) this.#routes.push({ route, count: 0 });
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {}, signal: this.#aborts.signal },
      (req) => this.#handle(req),
    );
  }

  /** Starts a fake serving `routes`. */
  static start(routes: readonly Route[] = []): FakeUpstream {
    return new FakeUpstream(routes);
  }

  /** `http://127.0.0.1:PORT` */
  get origin(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** `host:port`, for allowlists. */
  get host(): string {
    return `127.0.0.1:${this.#server.addr.port}`;
  }

  /**
   * Adds a route that wins over every route already there. (Among the routes given to
   * `start()`, the first that matches wins.)
   */
  route(route: Route): this {
    this.#routes.unshift({ route, count: 0 });
    return this;
  }

  /** Requests whose path matches. */
  requestsTo(path: string | RegExp): Received[] {
    return this.requests.filter((r) =>
      typeof path === "string" ? r.url.pathname === path : path.test(r.url.pathname)
    );
  }

  async close(): Promise<void> {
    this.#aborts.abort();
    await this.#server.finished;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(req: Request): Promise<Response> {
    const received: Received = {
      method: req.method,
      url: new URL(req.url),
      headers: req.headers,
      body: await req.text(),
    };
    this.requests.push(received);
    const entry = this.#routes.find(({ route }) =>
      (route.method ?? "GET") === req.method &&
      (typeof route.path === "string"
        ? route.path === received.url.pathname
        : route.path.test(received.url.pathname)) &&
      (route.match?.(received) ?? true)
    );
    if (!entry) {
      return Response.json({ error: `No fake route for ${req.method} ${received.url.pathname}` }, {
        status: 404,
      });
    }
    const count = entry.count++;
    const r = entry.route.reply;
    const reply = typeof r === "function"
      ? await r(received, count)
      : Array.isArray(r)
      ? r[Math.min(count, r.length - 1)]!
      : r;
    return await respond(reply);
  }
}

async function respond(reply: Reply): Promise<Response> {
  if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
  let body: Uint8Array<ArrayBuffer>;
  let contentType = reply.contentType;
  if (reply.fixture !== undefined) {
    body = fixtureBytes(reply.fixture);
    contentType ??= guessType(reply.fixture);
  } else if (reply.json !== undefined) {
    body = new TextEncoder().encode(JSON.stringify(reply.json));
    contentType ??= "application/json";
  } else if (typeof reply.body === "string") {
    body = new TextEncoder().encode(reply.body);
  } else {
    body = reply.body ? new Uint8Array(reply.body) : new Uint8Array();
  }
  const headers = new Headers(reply.headers);
  if (contentType && !headers.has("content-type")) headers.set("content-type", contentType);
  const status = reply.status ?? 200;
  if (reply.truncateAt !== undefined) body = body.slice(0, reply.truncateAt);
  if (reply.resetAfterBytes !== undefined) {
    const head = body.slice(0, reply.resetAfterBytes);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
        // Deno.serve prints a response stream's error; one line saying it was on purpose, not a stack
        // trace in a passing test run.
        const reset = new Error("fake connection reset");
        reset.stack =
          `the fake upstream reset the connection after ${head.length} bytes, on purpose (resetAfterBytes)`;
        setTimeout(() => controller.error(reset), 5);
      },
    });
    return new Response(stream, { status, headers });
  }
  return new Response(body, { status, headers });
}

function guessType(path: string): string {
  if (path.endsWith(".json")) return "application/json";
  if (path.endsWith(".csv")) return "text/csv";
  if (path.endsWith(".xml")) return "application/xml";
  if (path.endsWith(".html")) return "text/html; charset=utf-8";
  return "text/plain; charset=utf-8";
}
