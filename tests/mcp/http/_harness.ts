// An in-process HTTP server for tests: the real app and handler, no socket, a fake clock and
// hand-driven timers, and the log lines it wrote.
import { createApp } from "../../../lib/app.ts";
import type { App } from "../../../lib/app.ts";
import { FakeClock } from "../../../lib/clock.ts";
import { parseConfig } from "../../../lib/config/parse.ts";
import type { ServerSettings } from "../../../lib/config/parse.ts";
import { Logger } from "../../../lib/log.ts";
import { createHttpHandler } from "../../../lib/mcp/http/mod.ts";
import type { HttpHandler } from "../../../lib/mcp/http/mod.ts";
import type { SharedTransportState } from "../../../lib/mcp/served_app.ts";
import { TEST_PROVIDERS as PROVIDERS } from "../../harness/providers.ts";

/** The base URL requests are addressed to (no socket is opened). */
export const BASE = "http://127.0.0.1:8000";

/** Headers every Streamable HTTP POST needs. */
export const POST_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
};

/** A timer registered through the handler's `every` option. */
export interface Tick {
  ms: number;
  fn: () => void;
  cancelled: boolean;
}

/** The running in-process server. */
export interface Harness {
  app: App;
  handler: HttpHandler;
  clock: FakeClock;
  /** JSON log lines written so far, parsed. */
  logs: Record<string, unknown>[];
  ticks: Tick[];
  /** Runs every live timer once. */
  fire(): void;
  /** `fetch` that goes straight to the handler, as client `ip`. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Calls the handler with a ready-made request, as client `ip`. */
  call(req: Request, ip?: string): Promise<Response>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options for {@linkcode startHarness}. */
export interface HarnessOptions {
  server?: Partial<ServerSettings>;
  providers?: string;
  /** Client address the `fetch` helper reports. */
  ip?: string;
  /** Toolsets listed by default (default: all, as tests call tools directly). */
  toolsets?: string;
  /** The clock (default a fake one at a fixed time). */
  clock?: FakeClock;
  /** Passed to the handler (the OAuth issuer's --allow-net check). */
  isNetAllowed?: (host: string) => boolean;
  /** State shared with other replicas, as Redis would give it (default: none). */
  shared?: SharedTransportState;
}

/** Starts the real app with the given providers and server settings behind an in-process handler. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const config = parseConfig(
    {
      flags: { providers: options.providers ?? "example,conformance", toolsets: options.toolsets ?? "all" },
      env: {},
    },
    PROVIDERS,
  );
  config.server = { ...config.server, transport: "http", ...options.server };
  const logs: Record<string, unknown>[] = [];
  const logger = new Logger({
    level: "debug",
    write: (line) => logs.push(JSON.parse(line)),
    secrets: config.server.auth_token ? [config.server.auth_token] : [],
  });
  const clock = options.clock ?? new FakeClock();
  const app = await createApp(config, PROVIDERS, { logger, dataDir: "/nonexistent", clock });
  // The handler reads only the transport's part of it (ServedApp).
  if (options.shared) (app as { shared?: SharedTransportState }).shared = options.shared;
  const ticks: Tick[] = [];
  const handler = createHttpHandler(app, {
    logger,
    clock,
    ...(options.isNetAllowed ? { isNetAllowed: options.isNetAllowed } : {}),
    every: (ms, fn) => {
      const tick = { ms, fn, cancelled: false };
      ticks.push(tick);
      return () => {
        tick.cancelled = true;
      };
    },
  });
  const ip = options.ip ?? "192.0.2.1";
  const call = (req: Request, from = ip) => handler(withHost(req), { remoteAddr: { hostname: from } });
  const close = async () => {
    await handler.close(0);
    await app.close();
  };
  return {
    app,
    handler,
    clock,
    logs,
    ticks,
    fire: () => {
      for (const t of ticks) if (!t.cancelled) t.fn();
    },
    fetch: (input, init) => call(new Request(input, init)),
    call,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The request with the Host header every HTTP/1.1 client sends (taken from its URL), unless it
 * names one already. A `Request` built in process has none, and the server refuses that.
 */
function withHost(req: Request): Request {
  if (req.headers.has("host")) return req;
  const headers = new Headers(req.headers);
  headers.set("host", new URL(req.url).host);
  return new Request(req, { headers });
}

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Reads SSE events from a response body until `until` says stop (or the stream ends). */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  until: (events: SseEvent[]) => boolean = () => false,
): Promise<{ events: SseEvent[]; comments: string[] }> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let buffer = "";
  try {
    while (!until(events)) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { event: "message", data: "" };
        let isComment = true;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) {
            comments.push(line.slice(1).trim());
            continue;
          }
          isComment = false;
          const colon = line.indexOf(":");
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event.event = value;
          else if (field === "data") event.data += event.data ? `\n${value}` : value;
          else if (field === "id") event.id = value;
        }
        if (!isComment) events.push(event);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return { events, comments };
}

/** The JSON-RPC messages of an SSE or JSON response. */
export async function jsonRpcMessages(res: Response): Promise<Record<string, unknown>[]> {
  if (res.headers.get("content-type")?.includes("text/event-stream")) {
    const { events } = await readEvents(res.body!);
    return events.filter((e) => e.data).map((e) => JSON.parse(e.data));
  }
  const body = await res.json();
  return Array.isArray(body) ? body : [body];
}

/**
 * An `initialize` request body. The client declares elicitation and sampling (tests answer such
 * requests by hand): the server sends them only to clients that declare them.
 */
export function initializeBody(id: number | string = 1, protocolVersion = "2025-11-25"): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion,
      capabilities: { elicitation: {}, sampling: {} },
      clientInfo: { name: "raw-test", version: "0" },
    },
  });
}

/** Opens a Streamable HTTP session by hand; returns its id. */
export async function openSession(h: Harness, headers: Record<string, string> = {}): Promise<string> {
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: { ...POST_HEADERS, ...headers },
    body: initializeBody(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`initialize answered ${res.status}: ${text}`);
  const id = res.headers.get("mcp-session-id");
  if (!id) throw new Error("initialize answered without Mcp-Session-Id");
  const done = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: { ...POST_HEADERS, ...headers, "Mcp-Session-Id": id },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await done.text();
  return id;
}

/** Posts one raw body to `/mcp`. */
export function postMcp(
  h: Harness,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return h.fetch(`${BASE}/mcp`, { method: "POST", headers: { ...POST_HEADERS, ...headers }, body });
}

/**
 * Opens a 2026-07-28 `subscriptions/listen` stream at `origin` (a real server), as `address`
 * when given (sent as `X-Forwarded-For`, for a server that trusts it); returns the response.
 */
export function listenStream(
  origin: string,
  id: number,
  options: { address?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${origin}/mcp`, {
    method: "POST",
    headers: {
      ...POST_HEADERS,
      ...(options.address ? { "X-Forwarded-For": options.address } : {}),
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "subscriptions/listen",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: {
        notifications: { resourceSubscriptions: ["test://watched-resource"] },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "listener", version: "0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
