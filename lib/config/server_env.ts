// The environment variables and command-line flags of the server itself, with the `server` key
// each sets: parse.ts reads them, and `deno task docs` documents them (--help, README, .env.example).
import type { Binding } from "./provider_spec.ts";

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
    name: "MCP_STRUCTURED_CONTENT",
    key: "structured_content",
    kind: "string",
    description: "on, or off for clients that give their model both the text and structuredContent",
  },
  {
    name: "MCP_RESOURCE_LINKS",
    key: "resource_links",
    kind: "string",
    description: "on, or off for clients that refuse resource_link blocks (Anthropic's mcpTool helper)",
  },
  {
    name: "MCP_WRITES",
    key: "writes",
    kind: "string",
    description: "on, off (read-only) or bounded (on with the smaller quota preset)",
  },
  {
    name: "MCP_QUOTA_PROJECTS",
    key: "quota_projects",
    kind: "int",
    description: "Most projects one HTTP client keeps",
  },
  {
    name: "MCP_QUOTA_MB",
    key: "quota_mb",
    kind: "number",
    description: "Most MiB of files one HTTP client keeps (projects and result files together)",
  },
  {
    name: "MCP_QUOTA_JOBS",
    key: "quota_jobs",
    kind: "int",
    description: "Most background jobs one HTTP client runs at once",
  },
  {
    name: "MCP_QUOTA_JOB_RECORDS",
    key: "quota_job_records",
    kind: "int",
    description: "Most job records kept for one HTTP client",
  },
  {
    name: "MCP_QUOTA_RECLAIM_DAYS",
    key: "quota_reclaim_days",
    kind: "number",
    description: "Days after which an HTTP client's untouched project is removed (0 = never)",
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
    name: "MCP_SESSION_RECLAIM_GRACE",
    key: "session_reclaim_grace",
    kind: "number",
    description: "Seconds after it opened during which a session is never closed to make room",
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
    name: "MCP_CONNECTION_GUARD",
    key: "connection_guard",
    kind: "string",
    description:
      "direct (the guard hands sockets to Deno's HTTP server) or proxy (it copies bytes via a loopback port)",
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
    description:
      "Secret (32+ characters) sealing multi round-trip request state and signing job recipes and session records in Redis; the same on every replica",
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
  {
    name: "MCP_ACCESS_LOG",
    key: "access_log",
    kind: "string",
    description:
      "HTTP access lines: all (one per request), sampled (errors, slow, 1 in N) or off (errors only)",
  },
  {
    name: "MCP_ACCESS_LOG_SAMPLE",
    key: "access_log_sample",
    kind: "int",
    description: "With access_log sampled: one in this many ordinary requests is logged",
  },
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
  {
    name: "structured-content",
    key: "structured_content",
    kind: "string",
    description: "on, or off (answers in text only, except to clients that render views)",
  },
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
