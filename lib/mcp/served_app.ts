// What the transports (stdio.ts, http/) need of the running app. The composition root
// (lib/app.ts) builds an `App`, which is one of these, and hands it over: the protocol layer
// never imports the root, the config parser or the Redis adapter.
import type { ServerSettings } from "../config/server_settings.ts";
import type { HttpRuntime } from "../http/runtime.ts";
import type { Provider, ToolDefinition } from "./provider.ts";
import type { McpServer, ServerEventBus } from "./sdk.ts";
import type { SharedSessionStore } from "./http/shared_sessions.ts";
import type { ToolCatalog } from "./toolsets.ts";

/** A per-client limiter: 0 when the request may pass, else seconds until it may. */
export interface ClientLimiter {
  take(client: string): number | Promise<number>;
}

/** The part of the state shared with other replicas (Redis) that the HTTP transport uses. */
export interface SharedTransportState {
  /** This process's name in leases and logs. */
  replica: string;
  connection: { readonly up: boolean };
  /** The per-client HTTP limit shared by all replicas, falling back to `local`. */
  clientLimiter(perMinute: number, local: ClientLimiter): ClientLimiter;
  /** The 2025-11-25 sessions every replica serves (lib/mcp/http/shared_sessions.ts). */
  sessions?: SharedSessionStore;
  /** The change events of 2026-07-28 listen streams, heard by every replica. */
  eventBus?: ServerEventBus;
}

/** Per-instance choices for {@linkcode ServedApp.newServer}. */
export interface NewServerOptions {
  /** Who calls: the HTTP session id or auth principal; absent over stdio. */
  owner?: string;
  /** The client its calls count against for per-client limits; absent over stdio. */
  client?: string;
  /** The toolsets to list, from `app.catalog.resolve()`; default: the configured ones. */
  toolsets?: ReadonlySet<string>;
  /**
   * The instance answers `tools/list` and `tools/call` only (one 2026-07-28 request for one of
   * them): its resources, templates, prompts and views are left unregistered, as nothing it
   * answers reads them.
   */
  toolsOnly?: boolean;
}

/** The running server as a transport serves it. */
export interface ServedApp {
  config: { server: ServerSettings; enabledProviders: string[] };
  providers: readonly Provider[];
  http: HttpRuntime;
  /** The toolsets of the enabled providers, and the tools left out for want of a key. */
  catalog: ToolCatalog;
  /** State shared with other replicas (Redis), when `REDIS_URL` is set. */
  shared?: SharedTransportState;
  /** The tools listed by default: the core tools and those of the configured toolsets. */
  // deno-lint-ignore no-explicit-any
  tools: readonly ToolDefinition<any, any>[];
  /** The toolsets configured for listing (the default of every server instance). */
  defaultToolsets: ReadonlySet<string>;
  /**
   * A new MCP server over the shared providers (one per connection, HTTP session or 2026-07-28
   * request); `owner` is who calls over HTTP (see `ToolCallContext.owner`), `toolsets` which
   * toolsets it lists (default: the configured ones).
   */
  newServer(options?: NewServerOptions): McpServer;
}
