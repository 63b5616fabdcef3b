// The `server` block: its defaults and its zod schema (built on first use: zod schemas cost
// start-up time). parse.ts layers the file, the environment and the flags over it.
import { z } from "zod";
import { LOG_LEVELS } from "../log.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import type { ServerSettings } from "./server_settings.ts";
import { QUOTA_BOUNDED, QUOTA_ON } from "./quota.ts";

/**
 * The `server` block's defaults: what its schema fills in, and a start's server settings when
 * neither the file, the environment nor a flag sets any (then the schema is not built).
 */
export const SERVER_DEFAULTS: Readonly<ServerSettings> = {
  name: SERVER_NAME,
  version: VERSION,
  transport: "stdio",
  http_host: "127.0.0.1",
  http_port: 8000,
  stateless: false,
  auth_token: null,
  oauth_issuer: null,
  oauth_audience: [],
  oauth_scopes: [],
  oauth_client_id: null,
  oauth_client_secret: null,
  oauth_clock_skew: 60,
  public_url: null,
  structured_content: "on",
  resource_links: "on",
  writes: "on",
  quota_projects: QUOTA_ON.quota_projects,
  quota_mb: QUOTA_ON.quota_mb,
  quota_jobs: QUOTA_ON.quota_jobs,
  quota_job_records: QUOTA_ON.quota_job_records,
  quota_reclaim_days: 30,
  allowed_origins: [],
  allowed_hosts: [],
  cors_origins: [],
  rate_limit_enabled: false,
  rate_limit_per_minute: 60,
  trust_proxy: false,
  max_body_bytes: 1024 * 1024,
  // Sized so that 16 agents on one machine (one address or principal), each with a session,
  // its GET listen stream and a call or two in flight, fit their client's share, while eight
  // clients are needed to fill any global cap (docs/DEPLOYMENT.md, "Per-client shares").
  max_sessions: 256,
  max_sessions_per_client: 32,
  session_reclaim_idle: 300,
  session_reclaim_grace: 5,
  client_ipv6_prefix: 64,
  max_connections_per_client: 64,
  max_listen_streams: 256,
  max_listen_streams_per_client: 32,
  session_init_timeout: 30,
  max_connections: 512,
  connection_guard: "direct",
  header_timeout: 10,
  idle_timeout: 60,
  session_idle_timeout: 1800,
  keepalive_interval: 15,
  body_timeout: 30,
  shutdown_grace: 10,
  request_state_key: null,
  operator_contact: null,
  search_timeout: 12,
  call_timeout: 45,
  character_limit: 25_000,
  map_tiles_url: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
  log_level: "info",
  log_format: "json",
  access_log: "all",
  access_log_sample: 100,
  cache_max_mb: 64,
  export_max_mb: 1024,
  data_dir: null,
  redis_url: null,
  redis_prefix: "opendata-mcp:",
  redis_timeout: 2,
  redis_retry_max: 5,
  redis_cache_entry_max_kb: 1024,
  job_lease_timeout: 30,
  job_takeover_interval: 10,
  metrics: true,
  metrics_token: null,
  metrics_port: null,
  metrics_host: "127.0.0.1",
};

/** The quota keys of the `server` block (lib/config/quota.ts, lib/output/quota.ts). */
function quotaShape() {
  return {
    quota_projects: z.number().int().min(1).default(SERVER_DEFAULTS.quota_projects).describe(
      `Most projects one HTTP client (principal, else address, IPv6 /64) keeps (bounded: ${QUOTA_BOUNDED.quota_projects})`,
    ),
    quota_mb: z.number().positive().default(SERVER_DEFAULTS.quota_mb).describe(
      `Most MiB of files one HTTP client keeps, projects and result files together (bounded: ${QUOTA_BOUNDED.quota_mb})`,
    ),
    quota_jobs: z.number().int().min(1).default(SERVER_DEFAULTS.quota_jobs).describe(
      `Most background jobs one HTTP client runs at once on a replica (bounded: ${QUOTA_BOUNDED.quota_jobs})`,
    ),
    quota_job_records: z.number().int().min(1).default(SERVER_DEFAULTS.quota_job_records).describe(
      `Most job records kept for one HTTP client, its oldest finished ones dropped first (bounded: ${QUOTA_BOUNDED.quota_job_records})`,
    ),
    quota_reclaim_days: z.number().min(0).max(36_500).default(SERVER_DEFAULTS.quota_reclaim_days).describe(
      "Days after which an HTTP client's untouched project is removed, at start and hourly (0 = never)",
    ),
  };
}

function buildServerSchema() {
  return z.strictObject({
    name: z.string().min(1).default(SERVER_DEFAULTS.name).describe("Server name sent to clients"),
    version: z.string().min(1).default(SERVER_DEFAULTS.version).describe("Server version sent to clients"),
    transport: z.enum(["stdio", "http"]).default(SERVER_DEFAULTS.transport).describe(
      "stdio (what desktop clients launch) or http",
    ),
    http_host: z.string().min(1).default(SERVER_DEFAULTS.http_host).describe("HTTP listen address"),
    http_port: z.number().int().min(0).max(65_535).default(SERVER_DEFAULTS.http_port).describe(
      "HTTP listen port",
    ),
    stateless: z.boolean().default(SERVER_DEFAULTS.stateless).describe(
      "Stateless Streamable HTTP: no sessions, for replicas behind a load balancer",
    ),
    auth_token: z.string().min(1).nullable().default(SERVER_DEFAULTS.auth_token).describe(
      "Bearer token required on the MCP endpoints over HTTP (null = open)",
    ),
    oauth_issuer: z.url({ protocol: /^https?$/ }).nullable().default(SERVER_DEFAULTS.oauth_issuer).describe(
      "OAuth authorization server issuer URL: makes the server an OAuth 2.1 resource server (null = off)",
    ),
    oauth_audience: z.array(z.string().min(1)).default(SERVER_DEFAULTS.oauth_audience).describe(
      "Audiences an access token may carry (empty = the public /mcp URL)",
    ),
    oauth_scopes: z.array(z.string().min(1)).default(SERVER_DEFAULTS.oauth_scopes).describe(
      "Scopes every access token must hold (empty = none)",
    ),
    oauth_client_id: z.string().min(1).nullable().default(SERVER_DEFAULTS.oauth_client_id).describe(
      "Client id for token introspection, to accept opaque access tokens (null = JWT only)",
    ),
    oauth_client_secret: z.string().min(1).nullable().default(SERVER_DEFAULTS.oauth_client_secret).describe(
      "Client secret for token introspection",
    ),
    oauth_clock_skew: z.number().min(0).max(300).default(SERVER_DEFAULTS.oauth_clock_skew).describe(
      "Seconds of clock difference tolerated on access token times (at most 300)",
    ),
    public_url: z.url({ protocol: /^https?$/ }).nullable().default(SERVER_DEFAULTS.public_url).describe(
      "URL clients reach the server at, without /mcp (behind a proxy; null = from the request)",
    ),
    structured_content: z.enum(["on", "off"]).default(SERVER_DEFAULTS.structured_content).describe(
      "structuredContent in answers and outputSchema in the tool list: on, or off for clients that pass " +
        "both blocks to their model (the text says everything; clients that render views keep it)",
    ),
    resource_links: z.enum(["on", "off"]).default(SERVER_DEFAULTS.resource_links).describe(
      "resource_link blocks in answers that write a file: on, or off for clients that refuse them",
    ),
    writes: z.enum(["on", "off", "bounded"]).default(SERVER_DEFAULTS.writes).describe(
      "Files, projects and jobs: on, off (read-only), or bounded (on with the smaller quota preset)",
    ),
    ...quotaShape(),
    allowed_origins: z.array(z.string()).default(SERVER_DEFAULTS.allowed_origins).describe(
      "Origins allowed to call over HTTP (requests without Origin are allowed)",
    ),
    allowed_hosts: z.array(z.string()).default(SERVER_DEFAULTS.allowed_hosts).describe(
      "Host header values accepted (empty = loopback names when bound to loopback)",
    ),
    cors_origins: z.array(z.string()).default(SERVER_DEFAULTS.cors_origins).describe(
      "Origins given CORS headers, * for any",
    ),
    rate_limit_enabled: z.boolean().default(SERVER_DEFAULTS.rate_limit_enabled).describe(
      "Per-IP rate limiting of HTTP requests",
    ),
    rate_limit_per_minute: z.number().int().min(1).default(SERVER_DEFAULTS.rate_limit_per_minute).describe(
      "HTTP requests per minute per client (address, IPv6 by client_ipv6_prefix)",
    ),
    trust_proxy: z.boolean().default(SERVER_DEFAULTS.trust_proxy).describe(
      "Take the client address from X-Forwarded-For (only behind a proxy you run)",
    ),
    max_body_bytes: z.number().int().min(1024).default(SERVER_DEFAULTS.max_body_bytes).describe(
      "Largest HTTP request body or stdio message, in bytes",
    ),
    max_sessions: z.number().int().min(1).default(SERVER_DEFAULTS.max_sessions).describe(
      "Most concurrent HTTP sessions",
    ),
    max_sessions_per_client: z.number().int().min(0).default(SERVER_DEFAULTS.max_sessions_per_client)
      .describe(
        "Most HTTP sessions one client (address, IPv6 /64, or principal) holds (0 = no per-client cap)",
      ),
    session_reclaim_idle: z.number().min(0).default(SERVER_DEFAULTS.session_reclaim_idle).describe(
      "Seconds another client's session must idle before a newcomer may take its place at max_sessions",
    ),
    session_reclaim_grace: z.number().min(0).default(SERVER_DEFAULTS.session_reclaim_grace).describe(
      "Seconds after it opened during which a session is never closed to make room, for any client",
    ),
    client_ipv6_prefix: z.number().int().min(1).max(128).default(SERVER_DEFAULTS.client_ipv6_prefix).describe(
      "IPv6 prefix length that names one client for per-client limits (128 = every address apart)",
    ),
    max_connections_per_client: z.number().int().min(0).default(SERVER_DEFAULTS.max_connections_per_client)
      .describe(
        "Most HTTP connections one client address holds open (0 = no per-client cap)",
      ),
    max_listen_streams: z.number().int().min(1).default(SERVER_DEFAULTS.max_listen_streams).describe(
      "Most open subscriptions/listen streams, all clients together",
    ),
    max_listen_streams_per_client: z.number().int().min(1)
      .default(SERVER_DEFAULTS.max_listen_streams_per_client)
      .describe("Most open subscriptions/listen streams one client holds"),
    session_init_timeout: z.number().positive().default(SERVER_DEFAULTS.session_init_timeout).describe(
      "Seconds a session that never completed initialization is kept",
    ),
    max_connections: z.number().int().min(1).default(SERVER_DEFAULTS.max_connections).describe(
      "Most HTTP connections open at once",
    ),
    connection_guard: z.enum(["direct", "proxy"]).default(SERVER_DEFAULTS.connection_guard).describe(
      "How the connection guard hands connections to the HTTP server: direct (Deno's parser reads the accepted socket) or proxy (bytes copied through a loopback port: 408 to unfinished heads, half-closed clients answered)",
    ),
    header_timeout: z.number().positive().max(3600).default(SERVER_DEFAULTS.header_timeout).describe(
      "Seconds a client has to send each request head",
    ),
    idle_timeout: z.number().positive().max(86_400).default(SERVER_DEFAULTS.idle_timeout).describe(
      "Seconds a keep-alive connection may idle between requests (more than keepalive_interval)",
    ),
    session_idle_timeout: z.number().positive().default(SERVER_DEFAULTS.session_idle_timeout).describe(
      "Seconds an idle HTTP session is kept",
    ),
    keepalive_interval: z.number().positive().default(SERVER_DEFAULTS.keepalive_interval).describe(
      "Seconds between SSE keep-alive comments",
    ),
    body_timeout: z.number().positive().max(3600).default(SERVER_DEFAULTS.body_timeout).describe(
      "Seconds a client has to send a whole request body before it gets 408",
    ),
    shutdown_grace: z.number().min(0).max(3600).default(SERVER_DEFAULTS.shutdown_grace).describe(
      "Seconds shutdown waits for calls in flight before closing streams",
    ),
    request_state_key: z.string().min(32).nullable().default(SERVER_DEFAULTS.request_state_key).describe(
      "Secret (32+ characters) sealing multi round-trip request state and signing job recipes and session records in Redis; the same on every replica (null = random per process)",
    ),
    operator_contact: z.string().trim().min(3).max(200).regex(
      /^[\x20-\x27\x2a-\x7e]+$/,
      "Use printable ASCII without parentheses (an e-mail address or URL), as a User-Agent comment allows",
    ).nullable().default(SERVER_DEFAULTS.operator_contact).describe(
      "Your contact (e-mail or URL) sent in the User-Agent of every upstream request, as Wikimedia asks (null = project URL only)",
    ),
    search_timeout: z.number().positive().max(600).default(SERVER_DEFAULTS.search_timeout).describe(
      "Seconds opendata_search waits for its sources; slower ones are reported as too slow",
    ),
    call_timeout: z.number().positive().max(3600).default(SERVER_DEFAULTS.call_timeout).describe(
      "Seconds within which every tool call answers, all its upstream requests included (clients give up at about 60)",
    ),
    character_limit: z.number().int().min(1000).max(1_000_000).default(SERVER_DEFAULTS.character_limit)
      .describe(
        "Most characters in one tool result",
      ),
    // The host is spelled out (letters, digits, dots, hyphens, an IPv6 literal, a port): its origin
    // goes into the places view's CSP, where "*", "{s}" or userinfo would allow other hosts or
    // fail to parse when the server starts. https only (loopback aside): hosts map resourceDomains
    // to script-src and style-src too, so a plain-http origin would trust scripts anyone can alter.
    map_tiles_url: z.string().regex(
      /^(?:https:\/\/(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])|http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]))(?::\d{1,5})?\/.*\{z\}.*\{x\}.*\{y\}/,
      {
        message:
          'expected an https tile URL template with one named host (no "*", "{s}" or user@; http only ' +
          'on loopback), such as "https://tile.openstreetmap.org/{z}/{x}/{y}.png"',
      },
    ).nullable().default(SERVER_DEFAULTS.map_tiles_url).describe(
      "Map tiles of the places view, a URL template with {z}, {x} and {y} (null = no tiles; the view still draws the features)",
    ),
    log_level: z.enum(LOG_LEVELS).default(SERVER_DEFAULTS.log_level).describe("debug, info, warn or error"),
    log_format: z.enum(["json", "text"]).default(SERVER_DEFAULTS.log_format).describe(
      "json (one object per line) or text",
    ),
    ...accessLogFields(),
    cache_max_mb: z.number().min(0).default(SERVER_DEFAULTS.cache_max_mb).describe(
      "MiB of the shared upstream response cache",
    ),
    export_max_mb: z.number().positive().default(SERVER_DEFAULTS.export_max_mb).describe(
      'Most MiB the result files of output: "file" may take in the data folder (STORAGE_LIMIT past it)',
    ),
    data_dir: z.string().min(1).nullable().default(SERVER_DEFAULTS.data_dir).describe(
      "Folder for files the server writes (null = the per-user data folder)",
    ),
    redis_url: z.string().min(1).nullable().default(SERVER_DEFAULTS.redis_url).describe(
      "Redis or Valkey URL (redis://host:6379) for state shared by replicas: cache, rate limits, breakers, jobs (null = in process)",
    ),
    redis_prefix: z.string().min(1).max(100).default(SERVER_DEFAULTS.redis_prefix).describe(
      "Start of every Redis key, so several deployments can share one Redis",
    ),
    redis_timeout: z.number().positive().max(60).default(SERVER_DEFAULTS.redis_timeout).describe(
      "Seconds for the first Redis connection and each command before falling back to local state",
    ),
    redis_retry_max: z.number().positive().max(600).default(SERVER_DEFAULTS.redis_retry_max).describe(
      "Longest seconds between reconnection attempts after Redis is lost",
    ),
    redis_cache_entry_max_kb: z.number().positive().default(SERVER_DEFAULTS.redis_cache_entry_max_kb)
      .describe(
        "KiB of the largest upstream answer shared through Redis (bigger ones are not cached)",
      ),
    job_lease_timeout: z.number().positive().max(3600).default(SERVER_DEFAULTS.job_lease_timeout).describe(
      "Seconds a replica's lease on a running job lasts unless renewed (with Redis): a job whose replica died is taken over after this",
    ),
    job_takeover_interval: z.number().positive().max(3600).default(SERVER_DEFAULTS.job_takeover_interval)
      .describe(
        "Seconds between a replica's scans for jobs whose replica died (with Redis)",
      ),
    metrics: z.boolean().default(SERVER_DEFAULTS.metrics).describe(
      "Serve Prometheus metrics: GET /metrics over HTTP, and on metrics_port when set (false = none, and no counting)",
    ),
    metrics_token: z.string().min(1).nullable().default(SERVER_DEFAULTS.metrics_token).describe(
      "Bearer token /metrics requires (null = the same as /mcp: auth_token, if set)",
    ),
    metrics_port: z.number().int().min(0).max(65_535).nullable().default(SERVER_DEFAULTS.metrics_port)
      .describe(
        "Port of a listener serving only /metrics, over any transport, stdio included (null = none)",
      ),
    metrics_host: z.string().min(1).default(SERVER_DEFAULTS.metrics_host).describe(
      "Address the metrics_port listener binds",
    ),
  });
}

let builtServerSchema: ReturnType<typeof buildServerSchema> | undefined;

/** The access log's settings (kept apart so the schema's one long function does not grow). */
function accessLogFields() {
  return {
    access_log: z.enum(["all", "sampled", "off"]).default(SERVER_DEFAULTS.access_log).describe(
      "HTTP access lines: all (one per request), sampled (errors, requests slower than 1 s and 1 in " +
        "access_log_sample of the rest) or off (errors only)",
    ),
    access_log_sample: z.number().int().min(1).default(SERVER_DEFAULTS.access_log_sample).describe(
      "With access_log sampled: one in this many ordinary requests is logged",
    ),
  };
}

/** The `server` block of the config file (built when first asked for: zod schemas cost start-up time). */
export function serverSchema(): ReturnType<typeof buildServerSchema> {
  return builtServerSchema ??= buildServerSchema();
}
