// The shape of the `server` block once validated: a plain type, so the layers that are handed
// these settings (metrics, the transports, Redis) need not import the parser (parse.ts), which
// knows the provider specs and sits above them.
import type { LOG_LEVELS } from "../log.ts";

/** Settings of the server itself (transport, HTTP, limits, logging). */
export interface ServerSettings {
  name: string;
  version: string;
  transport: "stdio" | "http";
  http_host: string;
  http_port: number;
  /** No sessions: every HTTP request stands alone (for replicas behind a load balancer). */
  stateless: boolean;
  auth_token: string | null;
  /**
   * The OAuth authorization server's issuer: set, the server is an OAuth 2.1 resource server
   * (MCP basic/authorization) and every MCP endpoint needs an access token it issued.
   */
  oauth_issuer: string | null;
  /** Audiences an access token may name; empty: the server's public `/mcp` URL. */
  oauth_audience: string[];
  /** Scopes every access token must hold. */
  oauth_scopes: string[];
  /** Client id for the introspection endpoint (opaque tokens, RFC 7662); null: JWT tokens only. */
  oauth_client_id: string | null;
  oauth_client_secret: string | null;
  /** Seconds of clock difference tolerated on a token's times. */
  oauth_clock_skew: number;
  /** The URL clients reach this server at (behind a proxy), without `/mcp`; null: from the request. */
  public_url: string | null;
  /**
   * Whether answers carry `structuredContent` (and tools their `outputSchema`) for clients that
   * render no views: on, or off for clients that give their model both blocks (the text says all).
   */
  structured_content: "on" | "off";
  /** Whether answers that write a file carry a `resource_link` block (off for clients that refuse it). */
  resource_links: "on" | "off";
  /** Whether callers may write (files, projects, jobs): on, off, or bounded (on, smaller quota). */
  writes: "on" | "off" | "bounded";
  /** Most projects one HTTP client keeps (the quota; lib/output/quota.ts). */
  quota_projects: number;
  /** Most MiB of files one HTTP client keeps, projects and result files together. */
  quota_mb: number;
  /** Most background jobs one HTTP client runs at once (on each replica). */
  quota_jobs: number;
  /** Most job records kept for one HTTP client; its oldest finished ones go first. */
  quota_job_records: number;
  /**
   * Days after which an HTTP client's project nobody touched is removed (at start and then
   * hourly), so a storage filled once does not stay full across restarts; 0 keeps them.
   */
  quota_reclaim_days: number;
  /** Origins allowed to call over HTTP (besides requests that send no Origin). */
  allowed_origins: string[];
  /** Host header values accepted; empty means loopback names when bound to loopback. */
  allowed_hosts: string[];
  /** Origins that get CORS headers (`*` for any). */
  cors_origins: string[];
  rate_limit_enabled: boolean;
  rate_limit_per_minute: number;
  /** Take the client address from `X-Forwarded-For` (only behind a proxy that sets it). */
  trust_proxy: boolean;
  max_body_bytes: number;
  max_sessions: number;
  /** Most HTTP sessions one client holds (0: no per-client cap). */
  max_sessions_per_client: number;
  /**
   * Seconds another client's session must have been idle before a newcomer may take its place
   * at the `max_sessions` cap (sessions that never completed initialization may always go).
   */
  session_reclaim_idle: number;
  /**
   * Seconds after it opened during which a session is never closed to make room, for anyone:
   * the time a client takes from `initialize` to `notifications/initialized` and its first call.
   */
  session_reclaim_grace: number;
  /** Bits of an IPv6 address that name one client for per-client limits (64: a /64). */
  client_ipv6_prefix: number;
  /** Most HTTP connections one client holds open at once (0: no per-client cap). */
  max_connections_per_client: number;
  /**
   * Most open `subscriptions/listen` streams, all clients together (a session's GET stream is
   * bounded by `max_sessions` instead: one per session).
   */
  max_listen_streams: number;
  /** Most open `subscriptions/listen` streams one client holds. */
  max_listen_streams_per_client: number;
  /** Seconds a session that never completed initialization is kept. */
  session_init_timeout: number;
  /** Most HTTP connections open at once. */
  max_connections: number;
  /**
   * How accepted connections reach the HTTP server: `direct` hands the socket to Deno's HTTP
   * server; `proxy` copies its bytes through a loopback port (docs/DEPLOYMENT.md).
   */
  connection_guard: "direct" | "proxy";
  /** Seconds a client has to send each request head. */
  header_timeout: number;
  /** Seconds a keep-alive connection may idle between requests (or with no byte moving). */
  idle_timeout: number;
  /** Seconds an idle HTTP session is kept. */
  session_idle_timeout: number;
  /** Seconds between SSE keep-alive comments. */
  keepalive_interval: number;
  /** Seconds a client has to send a whole request body (408 after). */
  body_timeout: number;
  /** Seconds shutdown waits for calls in flight. */
  shutdown_grace: number;
  /** Seconds within which every tool call answers (upstream requests included). */
  call_timeout: number;
  /** Seconds opendata_search waits for its sources (a slower source is reported as such). */
  search_timeout: number;
  /**
   * Secret that seals the `requestState` of multi round-trip calls (2026-07-28); every replica
   * behind one load balancer needs the same one. Null: a random key per process.
   */
  request_state_key: string | null;
  /**
   * The operator's contact (an e-mail address or URL) added to the User-Agent of every upstream
   * request; null: the User-Agent names only the project and its URL.
   */
  operator_contact: string | null;
  character_limit: number;
  /**
   * Map tiles of the places view (MCP Apps), an `https://…/{z}/{x}/{y}.png` template whose
   * origin the view's CSP declares; null: the view draws its features without tiles.
   */
  map_tiles_url: string | null;
  log_level: typeof LOG_LEVELS[number];
  log_format: "json" | "text";
  /**
   * Which HTTP requests get their access line: every one, a sample (errors, slow ones and one in
   * `access_log_sample` of the rest) or errors only.
   */
  access_log: "all" | "sampled" | "off";
  /** With `access_log: sampled`, one in this many ordinary requests is logged. */
  access_log_sample: number;
  /** Total MiB of the shared upstream response cache. */
  cache_max_mb: number;
  /** Most MiB the result files of `output: "file"` may take, all callers together. */
  export_max_mb: number;
  /** Where providers write files; null means the per-user data folder. */
  data_dir: string | null;
  /** Redis (or Valkey) holding the state replicas share; null keeps everything in process. */
  redis_url: string | null;
  /** Start of every Redis key this deployment writes. */
  redis_prefix: string;
  /** Seconds for the first Redis connection and for every command. */
  redis_timeout: number;
  /** Longest seconds between reconnection attempts after Redis is lost. */
  redis_retry_max: number;
  /** KiB of the largest upstream answer shared through Redis. */
  redis_cache_entry_max_kb: number;
  /** Seconds a replica's lease on a running job lasts unless renewed. */
  job_lease_timeout: number;
  /** Seconds between a replica's scans for jobs whose replica died. */
  job_takeover_interval: number;
  /** Serve Prometheus metrics (`/metrics` over HTTP, and on `metrics_port` when set). */
  metrics: boolean;
  /** Bearer token for `/metrics`; null: the one `/mcp` takes (`auth_token`), if any. */
  metrics_token: string | null;
  /** A listener of its own for `/metrics` (any transport, stdio included); null: none. */
  metrics_port: number | null;
  /** Where the `metrics_port` listener binds. */
  metrics_host: string;
}
