import { z } from "zod";
import { ConfigError } from "../errors.ts";
import { LOG_LEVELS } from "../log.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { parseYaml } from "./yaml.ts";
import { plainSettings } from "./provider_spec.ts";
import type { Binding, CommonSettings, ProviderSpec, ValueKind } from "./provider_spec.ts";
import type { ServerSettings } from "./server_settings.ts";

export type { ServerSettings } from "./server_settings.ts";

/** The whole validated configuration. */
export interface Config {
  enabledProviders: string[];
  /** Blocks of the enabled providers, validated by their specs. */
  providers: Record<string, CommonSettings & Record<string, unknown>>;
  server: ServerSettings;
  tools: { include: string[]; exclude: string[] };
  /**
   * The toolsets listed (besides `core`, always listed): ids, or `all`. Default `["core"]`, or
   * `["all"]` when `tools.include` names tools. Checked against the providers when the app starts.
   */
  toolsets: string[];
  /** Where the toolset selection came from, for error messages. */
  toolsetsFrom: string;
  /** Things worth telling the user that did not stop the server. */
  warnings: string[];
  /** The config file read, or null for built-in defaults. */
  file: string | null;
}

/** The raw inputs of {@linkcode parseConfig}. */
export interface ConfigInput {
  /** Parsed command-line flags by long name (`providers`, `boj-timeout-ms`, ...). */
  flags: Record<string, string | boolean | undefined>;
  env: Record<string, string | undefined>;
  /** The config file's text, when one is read (parsed with the YAML parser `loadYaml()` loads). */
  fileText?: string;
  filePath?: string;
}

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
  writes: "on",
  writes_max_projects: 3,
  writes_max_mb: 16,
  writes_max_jobs: 2,
  allowed_origins: [],
  allowed_hosts: [],
  cors_origins: [],
  rate_limit_enabled: false,
  rate_limit_per_minute: 60,
  trust_proxy: false,
  max_body_bytes: 1024 * 1024,
  max_sessions: 100,
  max_sessions_per_client: 10,
  session_reclaim_idle: 300,
  client_ipv6_prefix: 64,
  max_connections_per_client: 32,
  max_listen_streams: 128,
  max_listen_streams_per_client: 8,
  session_init_timeout: 30,
  max_connections: 256,
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
  cache_max_mb: 64,
  export_max_mb: 1024,
  export_max_mb_per_client: 100,
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
    writes: z.enum(["on", "off", "bounded"]).default(SERVER_DEFAULTS.writes).describe(
      "Files, projects and jobs: on, off (read-only), or bounded (owned and capped per client)",
    ),
    writes_max_projects: z.number().int().min(1).default(SERVER_DEFAULTS.writes_max_projects).describe(
      "With writes: bounded, most projects one client keeps",
    ),
    writes_max_mb: z.number().positive().default(SERVER_DEFAULTS.writes_max_mb).describe(
      "With writes: bounded, most MiB of files one client keeps",
    ),
    writes_max_jobs: z.number().int().min(1).default(SERVER_DEFAULTS.writes_max_jobs).describe(
      "With writes: bounded, most background jobs one client runs at once",
    ),
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
    max_listen_streams_per_client: z.number().int().min(1).default(
      SERVER_DEFAULTS.max_listen_streams_per_client,
    ).describe(
      "Most open subscriptions/listen streams one client holds",
    ),
    session_init_timeout: z.number().positive().default(SERVER_DEFAULTS.session_init_timeout).describe(
      "Seconds a session that never completed initialization is kept",
    ),
    max_connections: z.number().int().min(1).default(SERVER_DEFAULTS.max_connections).describe(
      "Most HTTP connections open at once",
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
      "Secret (32+ characters) sealing multi round-trip request state; the same on every replica (null = random per process)",
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
    cache_max_mb: z.number().min(0).default(SERVER_DEFAULTS.cache_max_mb).describe(
      "MiB of the shared upstream response cache",
    ),
    export_max_mb: z.number().positive().default(SERVER_DEFAULTS.export_max_mb).describe(
      'Most MiB the result files of output: "file" may take in the data folder (STORAGE_LIMIT past it)',
    ),
    export_max_mb_per_client: z.number().positive().default(SERVER_DEFAULTS.export_max_mb_per_client)
      .describe(
        'Most MiB the output: "file" results of one HTTP client (address, IPv6 /64, or principal) may take',
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

/** The `server` block of the config file (built when first asked for: zod schemas cost start-up time). */
export function serverSchema(): ReturnType<typeof buildServerSchema> {
  return builtServerSchema ??= buildServerSchema();
}

function buildFileSchema() {
  return z.strictObject({
    enabled_providers: z.array(z.string()).optional(),
    toolsets: z.array(z.string()).optional(),
    server: z.record(z.string(), z.unknown()).optional(),
    tools: z.strictObject({
      include: z.array(z.string()).optional(),
      exclude: z.array(z.string()).optional(),
    }).optional(),
    providers: z.record(z.string(), z.record(z.string(), z.unknown()).nullable()).optional(),
  });
}

let builtFileSchema: ReturnType<typeof buildFileSchema> | undefined;

/** Environment variables of the server itself, with the key each sets. */
export const SERVER_ENV: readonly Binding[] = [
  { name: "MCP_TRANSPORT", key: "transport", kind: "string", description: "stdio or http" },
  { name: "MCP_HTTP_HOST", key: "http_host", kind: "string", description: "HTTP listen address" },
  { name: "MCP_HTTP_PORT", key: "http_port", kind: "int", description: "HTTP listen port" },
  {
    name: "MCP_STATELESS",
    key: "stateless",
    kind: "bool",
    description: "Stateless Streamable HTTP (no sessions)",
  },
  {
    name: "MCP_AUTH_TOKEN",
    key: "auth_token",
    kind: "string",
    description: "Bearer token required on MCP endpoints (empty = open)",
  },
  {
    name: "MCP_OAUTH_ISSUER",
    key: "oauth_issuer",
    kind: "string",
    description: "OAuth authorization server issuer URL (makes the server an OAuth resource server)",
  },
  {
    name: "MCP_OAUTH_AUDIENCE",
    key: "oauth_audience",
    kind: "list",
    description: "Comma-separated audiences an access token may carry (default: the public /mcp URL)",
  },
  {
    name: "MCP_OAUTH_SCOPES",
    key: "oauth_scopes",
    kind: "list",
    description: "Comma-separated scopes every access token must hold",
  },
  {
    name: "MCP_OAUTH_CLIENT_ID",
    key: "oauth_client_id",
    kind: "string",
    description: "Client id for token introspection (opaque tokens)",
  },
  {
    name: "MCP_OAUTH_CLIENT_SECRET",
    key: "oauth_client_secret",
    kind: "string",
    description: "Client secret for token introspection",
  },
  {
    name: "MCP_OAUTH_CLOCK_SKEW",
    key: "oauth_clock_skew",
    kind: "number",
    description: "Seconds of clock difference tolerated on token times",
  },
  {
    name: "MCP_PUBLIC_URL",
    key: "public_url",
    kind: "string",
    description: "URL clients reach the server at, without /mcp (behind a proxy)",
  },
  {
    name: "MCP_WRITES",
    key: "writes",
    kind: "string",
    description: "on, off (read-only) or bounded (owned and capped per client)",
  },
  {
    name: "MCP_ALLOWED_ORIGINS",
    key: "allowed_origins",
    kind: "list",
    description: "Comma-separated Origins allowed over HTTP",
  },
  {
    name: "MCP_ALLOWED_HOSTS",
    key: "allowed_hosts",
    kind: "list",
    description: "Comma-separated Host values accepted",
  },
  {
    name: "MCP_CORS_ORIGINS",
    key: "cors_origins",
    kind: "list",
    description: "Comma-separated Origins given CORS headers (* for any)",
  },
  {
    name: "RATE_LIMIT_ENABLED",
    key: "rate_limit_enabled",
    kind: "bool",
    description: "Per-IP rate limiting of HTTP requests",
  },
  {
    name: "RATE_LIMIT_PER_MINUTE",
    key: "rate_limit_per_minute",
    kind: "int",
    description: "Requests per minute per client (address, IPv6 by /64)",
  },
  {
    name: "MCP_TRUST_PROXY",
    key: "trust_proxy",
    kind: "bool",
    description: "Take the client address for rate limits from X-Forwarded-For (behind a proxy)",
  },
  {
    name: "MCP_MAX_BODY_BYTES",
    key: "max_body_bytes",
    kind: "int",
    description: "Largest HTTP request body or stdio message",
  },
  {
    name: "MCP_MAX_SESSIONS",
    key: "max_sessions",
    kind: "int",
    description: "Most concurrent HTTP sessions",
  },
  {
    name: "MCP_MAX_SESSIONS_PER_CLIENT",
    key: "max_sessions_per_client",
    kind: "int",
    description: "Most HTTP sessions one client holds (0 = no cap)",
  },
  {
    name: "MCP_SESSION_RECLAIM_IDLE",
    key: "session_reclaim_idle",
    kind: "number",
    description: "Seconds another client's session must idle before a newcomer may replace it at the cap",
  },
  {
    name: "MCP_CLIENT_IPV6_PREFIX",
    key: "client_ipv6_prefix",
    kind: "int",
    description: "IPv6 prefix length that names one client for per-client limits",
  },
  {
    name: "MCP_MAX_CONNECTIONS_PER_CLIENT",
    key: "max_connections_per_client",
    kind: "int",
    description: "Most HTTP connections one client address holds open (0 = no cap)",
  },
  {
    name: "MCP_MAX_LISTEN_STREAMS",
    key: "max_listen_streams",
    kind: "int",
    description: "Most open subscriptions/listen streams",
  },
  {
    name: "MCP_MAX_LISTEN_STREAMS_PER_CLIENT",
    key: "max_listen_streams_per_client",
    kind: "int",
    description: "Most open subscriptions/listen streams per client",
  },
  {
    name: "MCP_SESSION_INIT_TIMEOUT",
    key: "session_init_timeout",
    kind: "number",
    description: "Seconds a session that never completed initialization is kept",
  },
  {
    name: "MCP_MAX_CONNECTIONS",
    key: "max_connections",
    kind: "int",
    description: "Most HTTP connections open at once",
  },
  {
    name: "MCP_HEADER_TIMEOUT",
    key: "header_timeout",
    kind: "number",
    description: "Seconds a client has to send each request head",
  },
  {
    name: "MCP_IDLE_TIMEOUT",
    key: "idle_timeout",
    kind: "number",
    description: "Seconds a keep-alive connection may idle between requests",
  },
  {
    name: "MCP_SESSION_IDLE_TIMEOUT",
    key: "session_idle_timeout",
    kind: "number",
    description: "Seconds an idle session is kept",
  },
  {
    name: "MCP_KEEPALIVE_INTERVAL",
    key: "keepalive_interval",
    kind: "number",
    description: "Seconds between SSE keep-alive comments",
  },
  {
    name: "MCP_BODY_TIMEOUT",
    key: "body_timeout",
    kind: "number",
    description: "Seconds a client has to send a whole request body",
  },
  {
    name: "MCP_SHUTDOWN_GRACE",
    key: "shutdown_grace",
    kind: "number",
    description: "Seconds shutdown waits for calls in flight",
  },
  {
    name: "MCP_REQUEST_STATE_KEY",
    key: "request_state_key",
    kind: "string",
    description: "Secret (32+ characters) sealing multi round-trip request state; the same on every replica",
  },
  {
    name: "OPENDATA_MCP_CONTACT",
    key: "operator_contact",
    kind: "string",
    description: "Your contact (e-mail or URL) in the User-Agent of every upstream request",
  },
  {
    name: "MCP_SEARCH_TIMEOUT",
    key: "search_timeout",
    kind: "number",
    description: "Seconds opendata_search waits for its sources",
  },
  {
    name: "MCP_CALL_TIMEOUT",
    key: "call_timeout",
    kind: "number",
    description: "Seconds within which every tool call answers",
  },
  {
    name: "MCP_CHARACTER_LIMIT",
    key: "character_limit",
    kind: "int",
    description: "Most characters in one tool result",
  },
  {
    name: "MCP_MAP_TILES_URL",
    key: "map_tiles_url",
    kind: "string",
    description: "Map tiles of the places view, a {z}/{x}/{y} URL template",
  },
  { name: "LOG_LEVEL", key: "log_level", kind: "string", description: "debug, info, warn or error" },
  { name: "LOG_FORMAT", key: "log_format", kind: "string", description: "json or text" },
  { name: "SERVER_NAME", key: "name", kind: "string", description: "Server name sent to clients" },
  { name: "SERVER_VERSION", key: "version", kind: "string", description: "Server version sent to clients" },
  {
    name: "OPENDATA_MCP_CACHE_MB",
    key: "cache_max_mb",
    kind: "number",
    description: "MiB of the upstream response cache",
  },
  {
    name: "OPENDATA_MCP_EXPORT_MAX_MB",
    key: "export_max_mb",
    kind: "number",
    description: 'Most MiB of result files (output: "file")',
  },
  {
    name: "OPENDATA_MCP_EXPORT_MAX_MB_PER_CLIENT",
    key: "export_max_mb_per_client",
    kind: "number",
    description: "Most MiB of result files one HTTP client may take",
  },
  {
    name: "OPENDATA_MCP_DATA_DIR",
    key: "data_dir",
    kind: "string",
    description: "Folder for files the server writes",
  },
  {
    name: "REDIS_URL",
    key: "redis_url",
    kind: "string",
    description: "Redis/Valkey URL for state shared by replicas (unset = in process)",
  },
  { name: "REDIS_PREFIX", key: "redis_prefix", kind: "string", description: "Start of every Redis key" },
  {
    name: "REDIS_TIMEOUT",
    key: "redis_timeout",
    kind: "number",
    description: "Seconds for the Redis connection and each command",
  },
  {
    name: "REDIS_RETRY_MAX",
    key: "redis_retry_max",
    kind: "number",
    description: "Longest seconds between Redis reconnection attempts",
  },
  {
    name: "REDIS_CACHE_ENTRY_MAX_KB",
    key: "redis_cache_entry_max_kb",
    kind: "number",
    description: "KiB of the largest answer cached in Redis",
  },
  {
    name: "MCP_JOB_LEASE_TIMEOUT",
    key: "job_lease_timeout",
    kind: "number",
    description: "Seconds a job lease lasts unless renewed (with Redis)",
  },
  {
    name: "MCP_JOB_TAKEOVER_INTERVAL",
    key: "job_takeover_interval",
    kind: "number",
    description: "Seconds between scans for jobs whose replica died (with Redis)",
  },
  {
    name: "MCP_METRICS",
    key: "metrics",
    kind: "bool",
    description: "Serve Prometheus metrics (default true)",
  },
  {
    name: "MCP_METRICS_TOKEN",
    key: "metrics_token",
    kind: "string",
    description: "Bearer token /metrics requires (default: MCP_AUTH_TOKEN)",
  },
  {
    name: "MCP_METRICS_PORT",
    key: "metrics_port",
    kind: "int",
    description: "Port of a listener serving only /metrics (any transport)",
  },
  {
    name: "MCP_METRICS_HOST",
    key: "metrics_host",
    kind: "string",
    description: "Address of the metrics listener",
  },
];

/** Command-line flags of the server itself, with the key each sets. */
export const SERVER_FLAGS: readonly Binding[] = [
  { name: "transport", key: "transport", kind: "string", description: "stdio (default) or http" },
  { name: "host", key: "http_host", kind: "string", description: "HTTP listen address (default 127.0.0.1)" },
  { name: "port", key: "http_port", kind: "int", description: "HTTP listen port (default 8000)" },
  { name: "stateless", key: "stateless", kind: "bool", description: "Stateless Streamable HTTP" },
  {
    name: "oauth-issuer",
    key: "oauth_issuer",
    kind: "string",
    description: "OAuth issuer URL (resource server)",
  },
  { name: "oauth-audience", key: "oauth_audience", kind: "list", description: "Audiences a token may carry" },
  { name: "oauth-scopes", key: "oauth_scopes", kind: "list", description: "Scopes every token must hold" },
  { name: "public-url", key: "public_url", kind: "string", description: "URL clients reach the server at" },
  { name: "writes", key: "writes", kind: "string", description: "on, off or bounded" },
  { name: "log-level", key: "log_level", kind: "string", description: "debug, info, warn or error" },
  { name: "data-dir", key: "data_dir", kind: "string", description: "Folder for files the server writes" },
  {
    name: "metrics-port",
    key: "metrics_port",
    kind: "int",
    description: "Serve /metrics on this port of 127.0.0.1 (stdio included)",
  },
];

/** Other variables the server reads. */
export const OTHER_ENV: readonly { name: string; description: string }[] = [
  { name: "OPENDATA_MCP_CONFIG", description: "Path of the config file" },
  { name: "OPENDATA_MCP_PROVIDERS", description: "Comma-separated providers to serve" },
  {
    name: "OPENDATA_MCP_TOOLSETS",
    description: "Comma-separated toolsets whose tools are listed (all = every toolset; default: core only)",
  },
  { name: "DEFAULT_TIMEOUT", description: "Default upstream deadline in seconds for every provider" },
  {
    name: "OTEL_DENO",
    description:
      "true: export OpenTelemetry traces over OTLP (Deno's built-in exporter; see docs/OBSERVABILITY.md)",
  },
  {
    name: "OTEL_TRACES_SAMPLER",
    description:
      "Must be parent-based (parentbased_always_on) when OTEL_DENO=true, so no URL with a key is exported",
  },
  { name: "OTEL_DENO_TRACING", description: "false: no traces even with OTEL_DENO=true" },
];

/**
 * Builds the configuration from flags, environment and config file text, in that precedence,
 * over built-in defaults. Pure: throws {@linkcode ConfigError} naming the key at fault.
 */
export function parseConfig(input: ConfigInput, specs: readonly ProviderSpec[]): Config {
  const warnings: string[] = [];
  const fileLabel = input.filePath ? `config file ${input.filePath}` : "config file";
  const file = readFile(input.fileText, fileLabel);

  const server = layered(serverSchema, "server", [
    {
      values: Object.fromEntries(
        Object.entries(file.server ?? {}).map(([k, v]) => [k, normalizeServerValue(k, v)]),
      ),
      origin: (k) => `server.${k} in the ${fileLabel}`,
    },
    envLayer(SERVER_ENV, input.env, normalizeServerValue),
    flagLayer(SERVER_FLAGS, input.flags, normalizeServerValue),
  ], () => structuredClone(SERVER_DEFAULTS) as ServerSettings);

  const known = new Map(specs.map((s) => [s.id, s]));
  for (const id of Object.keys(file.providers ?? {})) {
    // Seed 002: a provider that is not there is skipped with a warning, not a reason to stop.
    if (!known.has(id)) {
      warnings.push(
        `Unknown provider "${id}" under "providers" in the ${fileLabel} was ignored; known providers: ${
          [...known.keys()].join(", ")
        }`,
      );
    }
  }

  const listed = listValue(input.flags["providers"]) ??
    listValue(input.env["OPENDATA_MCP_PROVIDERS"]) ??
    file.enabled_providers ??
    specs.filter((s) => s.defaultEnabled).map((s) => s.id);
  const enabled: string[] = [];
  for (const id of listed) {
    if (!known.has(id)) {
      warnings.push(
        `Unknown provider "${id}" in the enabled providers was skipped; known providers: ${
          [...known.keys()].join(", ")
        }`,
      );
    } else if (!enabled.includes(id)) {
      enabled.push(id);
    }
  }

  const providers: Config["providers"] = {};
  for (const spec of specs) {
    const block = file.providers?.[spec.id] ?? {};
    const isEnabled = enabled.includes(spec.id);
    const layers: Layer[] = [{
      values: block,
      origin: (k) => `providers.${spec.id}.${k} in the ${fileLabel}`,
    }];
    if (isEnabled) {
      const defaultTimeout = input.env[spec.defaultTimeoutEnv] ?? input.env["DEFAULT_TIMEOUT"];
      const envName = input.env[spec.defaultTimeoutEnv] !== undefined
        ? spec.defaultTimeoutEnv
        : "DEFAULT_TIMEOUT";
      if (defaultTimeout !== undefined && defaultTimeout !== "" && block["timeout"] === undefined) {
        layers.unshift({
          values: { timeout: convert(defaultTimeout, "number", envName) },
          origin: () => envName,
        });
      }
      layers.push(envLayer(spec.env, input.env), flagLayer(spec.flags, input.flags));
    }
    const generated = spec.listings?.defaults;
    const settings = layered(
      () => spec.schema,
      `providers.${spec.id}`,
      layers,
      // Nothing set for the provider: the defaults its listings were generated with.
      generated ? () => structuredClone(generated) as unknown as CommonSettings : undefined,
      // Plain values set: checked without building the block's schema.
      generated
        ? (values) => plainSettings(spec, generated, values) as unknown as CommonSettings | undefined
        : undefined,
    ) as CommonSettings & Record<string, unknown>;
    if (isEnabled) {
      providers[spec.id] = settings;
    }
  }

  const tools = {
    include: listValue(input.flags["tools"]) ?? file.tools?.include ?? [],
    exclude: listValue(input.flags["exclude-tools"]) ?? file.tools?.exclude ?? [],
  };
  return {
    enabledProviders: enabled,
    providers,
    server,
    tools,
    ...toolsetChoice(input, file.toolsets, tools.include, fileLabel),
    warnings,
    file: input.filePath ?? null,
  };
}

/**
 * The toolsets listed: the flag, then the environment, then the file's `toolsets:`; by default
 * the core toolset alone, or every toolset when `--tools` names tools (naming them asks for them).
 */
function toolsetChoice(
  input: ConfigInput,
  fromFile: string[] | undefined,
  include: readonly string[],
  fileLabel: string,
): { toolsets: string[]; toolsetsFrom: string } {
  const flag = listValue(input.flags["toolsets"]);
  if (flag) return { toolsets: flag, toolsetsFrom: "--toolsets" };
  const env = listValue(input.env["OPENDATA_MCP_TOOLSETS"]);
  if (env) return { toolsets: env, toolsetsFrom: "OPENDATA_MCP_TOOLSETS" };
  if (fromFile) return { toolsets: fromFile, toolsetsFrom: `toolsets in the ${fileLabel}` };
  return include.length
    ? { toolsets: ["all"], toolsetsFrom: "--tools" }
    : { toolsets: ["core"], toolsetsFrom: "the default" };
}

/** The configuration as `config check` prints it: every secret replaced by `***`. */
export function redactConfig(config: Config, specs: readonly ProviderSpec[]): Record<string, unknown> {
  const providers: Record<string, unknown> = {};
  for (const [id, block] of Object.entries(config.providers)) {
    const spec = specs.find((s) => s.id === id);
    const copy: Record<string, unknown> = { ...block };
    for (const key of spec?.secrets ?? []) {
      if (copy[key] !== null && copy[key] !== undefined && copy[key] !== "") copy[key] = "***";
    }
    providers[id] = copy;
  }
  return {
    file: config.file ?? "(none: built-in defaults)",
    enabled_providers: config.enabledProviders,
    server: {
      ...config.server,
      auth_token: config.server.auth_token ? "***" : null,
      oauth_client_secret: config.server.oauth_client_secret ? "***" : null,
      request_state_key: config.server.request_state_key ? "***" : null,
      metrics_token: config.server.metrics_token ? "***" : null,
      redis_url: config.server.redis_url ? redactRedisUrl(config.server.redis_url) : null,
    },
    tools: config.tools,
    providers,
    warnings: config.warnings,
  };
}

/** Every secret value in the configuration, for the logger to mask. */
export function configSecrets(config: Config, specs: readonly ProviderSpec[]): string[] {
  const out: string[] = [];
  if (config.server.auth_token) out.push(config.server.auth_token);
  if (config.server.oauth_client_secret) out.push(config.server.oauth_client_secret);
  if (config.server.request_state_key) out.push(config.server.request_state_key);
  if (config.server.metrics_token) out.push(config.server.metrics_token);
  const redisPassword = redisPasswordOf(config.server.redis_url);
  if (redisPassword) out.push(redisPassword);
  for (const [id, block] of Object.entries(config.providers)) {
    for (const key of specs.find((s) => s.id === id)?.secrets ?? []) {
      const value = block[key];
      if (typeof value === "string" && value) out.push(value);
    }
  }
  return out;
}

/** The password in a Redis URL, if any (decoded as the client sends it). */
function redisPasswordOf(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.password ? decodeURIComponent(u.password) : undefined;
  } catch {
    return undefined;
  }
}

function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "***";
  }
}

interface Layer {
  values: Record<string, unknown>;
  origin: (key: string) => string;
}

function readFile(text: string | undefined, label: string): z.output<ReturnType<typeof buildFileSchema>> {
  if (text === undefined || text.trim() === "") return {};
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new ConfigError("<file>", `Cannot parse the ${label} as YAML: ${detail}`);
  }
  if (raw === null || raw === undefined) return {};
  const plain = plainFile(raw);
  if (plain) return plain;
  const result = (builtFileSchema ??= buildFileSchema()).safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === "unrecognized_keys") {
      const path = [...issue.path.map(String), issue.keys[0]].join(".");
      throw new ConfigError(
        path,
        `Unknown key "${path}" in the ${label}; allowed at the top level: enabled_providers, server, tools, providers`,
      );
    }
    const path = issue.path.map(String).join(".") || "<file>";
    throw new ConfigError(path, `Invalid "${path}" in the ${label}: ${issue.message}`);
  }
  return result.data;
}

type FileContents = z.output<ReturnType<typeof buildFileSchema>>;

const FILE_KEYS = new Set(["enabled_providers", "toolsets", "server", "tools", "providers"]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype &&
    !Object.hasOwn(v, "__proto__");
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/**
 * The config file's contents as the file schema gives them, checked without building it, when
 * the file is plainly of the expected shape (what YAML gives: plain objects, arrays of strings);
 * undefined otherwise, and the schema says what is wrong.
 */
function plainFile(raw: unknown): FileContents | undefined {
  if (!isRecord(raw)) return undefined;
  const out: FileContents = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!FILE_KEYS.has(key)) return undefined;
    if (key === "enabled_providers" || key === "toolsets") {
      if (!isStringList(value)) return undefined;
      out[key] = [...value];
    } else if (key === "server") {
      if (!isRecord(value)) return undefined;
      out.server = { ...value };
    } else if (key === "tools") {
      if (!isRecord(value)) return undefined;
      const tools: NonNullable<FileContents["tools"]> = {};
      for (const [k, list] of Object.entries(value)) {
        if ((k !== "include" && k !== "exclude") || !isStringList(list)) return undefined;
        tools[k] = [...list];
      }
      out.tools = tools;
    } else {
      if (!isRecord(value)) return undefined;
      const providers: NonNullable<FileContents["providers"]> = {};
      for (const [id, block] of Object.entries(value)) {
        if (block !== null && !isRecord(block)) return undefined;
        providers[id] = block === null ? null : { ...block };
      }
      out.providers = providers;
    }
  }
  return out;
}

/**
 * The settings `layers` make, validated by the schema `schemaOf` returns. When no layer sets
 * anything and `defaults` is given, its result is used and the schema is not built (zod schemas
 * cost start-up time); nor is it when `plain` gives the settings (undefined: let the schema say).
 */
function layered<T>(
  schemaOf: () => z.ZodType<T>,
  prefix: string,
  layers: readonly Layer[],
  defaults?: () => T,
  plain?: (values: Record<string, unknown>) => T | undefined,
): T {
  const merged: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.values)) {
      if (value === undefined) continue;
      merged[key] = value;
      origins[key] = layer.origin(key);
    }
  }
  if (defaults && Object.keys(merged).length === 0) return defaults();
  const quick = plain?.(merged);
  if (quick !== undefined) return quick;
  const schema = schemaOf();
  // One parse per start: zod's compiled fast path would cost more to build than it saves.
  const result = schema.safeParse(merged, { jitless: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const allowed = schema instanceof z.ZodObject ? Object.keys(schema.shape).join(", ") : "";
    throw new ConfigError(
      `${prefix}.${key}`,
      `Unknown key "${prefix}.${key}" (${origins[key] ?? "config"}); allowed keys: ${allowed}`,
    );
  }
  const key = String(issue.path[0] ?? "");
  const path = key ? `${prefix}.${key}` : prefix;
  const got = key in merged ? ` got ${JSON.stringify(merged[key])}` : "";
  throw new ConfigError(
    path,
    `Invalid "${path}" (${origins[key] ?? "default"}): ${issue.message};${got}`.replace(/;$/, ""),
  );
}

function envLayer(
  bindings: readonly Binding[],
  env: Record<string, string | undefined>,
  normalize: (key: string, v: unknown) => unknown = (_k, v) => v,
): Layer {
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const b of bindings) {
    const raw = env[b.name];
    // An empty variable counts as unset, as in .env files with blank values.
    if (raw === undefined || raw === "") continue;
    values[b.key] = normalize(b.key, convert(raw, b.kind, b.name));
    origins[b.key] = `environment variable ${b.name}`;
  }
  return { values, origin: (k) => origins[k] ?? "environment" };
}

function flagLayer(
  bindings: readonly Binding[],
  flags: Record<string, string | boolean | undefined>,
  normalize: (key: string, v: unknown) => unknown = (_k, v) => v,
): Layer {
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const b of bindings) {
    const raw = flags[b.name];
    if (raw === undefined) continue;
    values[b.key] = normalize(
      b.key,
      typeof raw === "boolean" ? raw : convert(raw, b.kind, `--${b.name}`),
    );
    origins[b.key] = `flag --${b.name}`;
  }
  return { values, origin: (k) => origins[k] ?? "flags" };
}

/** Turns a variable's or flag's text into a value of `kind`, or throws naming `source`. */
export function convert(raw: string, kind: ValueKind, source: string): unknown {
  const text = raw.trim();
  const fail = (expected: string): never => {
    throw new ConfigError(source, `Cannot parse ${source}: expected ${expected}, got ${JSON.stringify(raw)}`);
  };
  switch (kind) {
    case "string":
      return text;
    case "list":
      return text.split(",").map((s) => s.trim()).filter(Boolean);
    case "bool": {
      const lower = text.toLowerCase();
      if (["true", "1", "yes", "on"].includes(lower)) return true;
      if (["false", "0", "no", "off"].includes(lower)) return false;
      return fail("true or false");
    }
    case "int":
      return /^-?\d+$/.test(text) ? Number(text) : fail("an integer");
    case "number":
      return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : fail("a number");
    case "ms_to_s":
      return /^\d+$/.test(text) ? Number(text) / 1000 : fail("a whole number of milliseconds");
  }
}

function normalizeServerValue(key: string, value: unknown): unknown {
  if (key === "log_level" && typeof value === "string") {
    const lower = value.toLowerCase();
    return lower === "warning" ? "warn" : lower;
  }
  if ((key === "transport" || key === "log_format" || key === "writes") && typeof value === "string") {
    return value.toLowerCase();
  }
  return value;
}

function listValue(value: unknown): string[] | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}

/** Variables that locate the per-user config and data folders. */
export const PATH_ENV: readonly string[] = [
  "HOME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "APPDATA",
  "LOCALAPPDATA",
];

/** Every environment variable the server reads (the `--allow-env` list). */
export function knownEnvNames(specs: readonly ProviderSpec[]): string[] {
  const names = [
    ...PATH_ENV,
    ...OTHER_ENV.map((e) => e.name),
    ...SERVER_ENV.map((b) => b.name),
    ...specs.flatMap((s) => [s.defaultTimeoutEnv, ...s.env.map((b) => b.name)]),
  ];
  return [...new Set(names)];
}
