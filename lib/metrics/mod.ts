// The server's Prometheus series, in one process-wide registry that is created only when
// metrics are served (HTTP with `server.metrics`, or a `metrics_port` listener). Until then
// `metrics` is undefined and each instrumented place costs one `undefined` check.
//
// Each replica counts its own calls and exposes them on its own /metrics: Prometheus scrapes
// every replica and sums (the `instance` label tells them apart). Shared state (breakers, rate
// windows, cache, jobs in Redis) is shared in behaviour, not in these counters.
import { VERSION } from "../version.ts";
import { Registry } from "./registry.ts";
import type { Counter, Gauge, Histogram, Sample } from "./registry.ts";

/** Bounds of the tool-call duration histogram, in seconds (calls answer within ~45 s). */
const TOOL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 45];
/** Bounds of the upstream latency histogram, in seconds. */
const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Most endpoint labels one provider's series carry: past them a new endpoint family counts as
 * `other`, so paths built from caller input cannot grow /metrics without bound.
 */
export const MAX_ENDPOINT_LABELS = 32;
/** Families whose declared label is remembered for the breaker gauge; others count as `other`. */
const MAX_FAMILIES_KEPT = 10_000;

/** The process's own series: start time, resident memory and V8 heap. */
function registerProcessSeries(r: Registry): void {
  r.collected(
    "opendata_process_start_time_seconds",
    "When the process started, in seconds since the epoch",
    "gauge",
    () => [{ value: Math.round(performance.timeOrigin / 1000) }],
  );
  r.collected(
    "opendata_process_resident_memory_bytes",
    "Resident set size of the process in bytes",
    "gauge",
    () => [{ value: Deno.memoryUsage().rss }],
  );
  r.collected("opendata_process_heap_bytes", "V8 heap in bytes, by kind (used, total)", "gauge", () => {
    const m = Deno.memoryUsage();
    return [
      { labels: { kind: "used" }, value: m.heapUsed },
      { labels: { kind: "total" }, value: m.heapTotal },
      { labels: { kind: "external" }, value: m.external },
    ];
  });
}

/** What the HTTP server reports at scrape time (set by the handler and the connection guard). */
export interface HttpSources {
  sessions?: () => { streamable: number; sse: number };
  guard?: () => {
    open: number;
    accepted: number;
    refused: number;
    /** Of `refused`, those refused at their client's own share. */
    refusedPerClient: number;
    evicted: number;
    timedOut: number;
  };
}

/** Something that counts its jobs by state (a provider's job manager). */
export interface JobCounts {
  counts(): Readonly<Record<string, number>>;
}

/** The server's series. */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly toolCalls: Counter;
  readonly toolDuration: Histogram;
  readonly upstreamRequests: Counter;
  readonly upstreamDuration: Histogram;
  readonly upstreamRetries: Counter;
  readonly breakerTransitions: Counter;
  readonly breakerRejections: Counter;
  readonly rateLimitWaits: Counter;
  readonly rateLimitWaitSeconds: Counter;
  readonly rateLimitRefusals: Counter;
  readonly clientRateLimitRefusals: Counter;
  readonly cacheLookups: Counter;
  readonly cacheStoredBytes: Counter;
  readonly jobTransitions: Counter;
  readonly sessionEvictions: Counter;
  readonly shareRefusals: Counter;
  readonly httpRequests: Counter;
  readonly buildInfo: Gauge;
  /** The HTTP server's live numbers; set once it runs. */
  http: HttpSources = {};
  /** The response cache's size, when it lives in this process. */
  cacheSize: (() => { bytes: number; entries: number } | undefined) | undefined;
  /** The circuit breakers that hold state, by "provider endpoint" key. */
  breakers: (() => Promise<Record<string, { state: string }>>) | undefined;
  #jobs = new Set<JobCounts>();
  /** The endpoint labels given out so far, by provider. */
  #endpointLabels = new Map<string, Set<string>>();
  /** The label each `provider family` breaker key was counted under (at most MAX_FAMILIES_KEPT). */
  #familyLabels = new Map<string, string>();

  constructor() {
    const r = this.registry;
    this.buildInfo = r.gauge("opendata_build_info", "The server's version (always 1)", ["version"]);
    this.buildInfo.labels(VERSION).set(1);
    registerProcessSeries(r);

    this.toolCalls = r.counter(
      "opendata_tool_calls_total",
      "Tool calls answered, by tool, status (ok, error) and error type (empty when ok)",
      ["tool", "status", "error_type"],
    );
    this.toolDuration = r.histogram(
      "opendata_tool_call_duration_seconds",
      "Time from a tool call's arrival to its answer, in seconds",
      ["tool", "status"],
      TOOL_BUCKETS,
    );
    this.upstreamRequests = r.counter(
      "opendata_upstream_requests_total",
      "Upstream HTTP attempts, by provider, endpoint family and outcome (the HTTP status, or the error type when no answer came)",
      ["provider", "endpoint", "status"],
    );
    this.upstreamDuration = r.histogram(
      "opendata_upstream_request_duration_seconds",
      "Upstream HTTP attempt latency in seconds, until the body was read",
      ["provider", "endpoint"],
      UPSTREAM_BUCKETS,
    );
    this.upstreamRetries = r.counter(
      "opendata_upstream_retries_total",
      "Upstream attempts made again after a failure, by provider, endpoint family and what failed (status or network)",
      ["provider", "endpoint", "reason"],
    );
    r.collected(
      "opendata_circuit_breaker_state",
      "Circuit breakers that hold state (failures counted, open or on trial): 1 for the breaker's current state; " +
        "an endpoint that answers well is not listed",
      "gauge",
      () => this.#breakerSamples(),
    );
    this.breakerTransitions = r.counter(
      "opendata_circuit_breaker_transitions_total",
      "Circuit breaker changes this replica saw, by provider, endpoint family and the state entered",
      ["provider", "endpoint", "to"],
    );
    this.breakerRejections = r.counter(
      "opendata_circuit_breaker_rejections_total",
      "Upstream calls refused at once because the endpoint's circuit was open",
      ["provider", "endpoint"],
    );
    this.rateLimitWaits = r.counter(
      "opendata_rate_limit_waits_total",
      "Upstream requests that waited for a slot of the server's own rate limit, by provider",
      ["provider"],
    );
    this.rateLimitWaitSeconds = r.counter(
      "opendata_rate_limit_wait_seconds_total",
      "Seconds upstream requests spent waiting for a rate-limit slot, by provider",
      ["provider"],
    );
    this.rateLimitRefusals = r.counter(
      "opendata_rate_limit_refusals_total",
      "Upstream requests refused because the next rate-limit slot was past the call's deadline, by provider",
      ["provider"],
    );
    this.clientRateLimitRefusals = r.counter(
      "opendata_http_rate_limit_refusals_total",
      "HTTP requests answered 429 by the per-client rate limit",
    );
    this.cacheLookups = r.counter(
      "opendata_cache_lookups_total",
      "Response cache lookups, by provider and result (hit, miss, bypass: the call asked for fresh data)",
      ["provider", "result"],
    );
    this.cacheStoredBytes = r.counter(
      "opendata_cache_stored_bytes_total",
      "Bytes of upstream answers written to the response cache, by provider",
      ["provider"],
    );
    r.collected("opendata_cache_bytes", "Bytes the in-process response cache holds", "gauge", () => {
      const size = this.cacheSize?.();
      return size ? [{ value: size.bytes }] : [];
    });
    r.collected("opendata_cache_entries", "Entries the in-process response cache holds", "gauge", () => {
      const size = this.cacheSize?.();
      return size ? [{ value: size.entries }] : [];
    });
    r.collected(
      "opendata_jobs",
      "Background jobs this replica knows, by state",
      "gauge",
      () => this.#jobSamples(),
    );
    this.jobTransitions = r.counter(
      "opendata_job_transitions_total",
      "Background job state changes on this replica, by the state entered",
      ["state"],
    );
    r.collected("opendata_http_sessions", "Open MCP sessions over HTTP, by transport", "gauge", () => {
      const c = this.http.sessions?.();
      return c
        ? [{ labels: { transport: "streamable_http" }, value: c.streamable }, {
          labels: { transport: "sse" },
          value: c.sse,
        }]
        : [];
    });
    this.sessionEvictions = r.counter(
      "opendata_http_session_evictions_total",
      "Sessions closed to make room (max_sessions, max_sessions_per_client) or expired, by reason",
      ["reason"],
    );
    this.shareRefusals = r.counter(
      "opendata_http_share_refusals_total",
      "Requests refused at a session or listen-stream cap, by limit: sessions_per_client (429), sessions (503), " +
        "listen_streams_per_client (429), listen_streams (503)",
      ["limit"],
    );
    r.collected("opendata_http_connections", "HTTP connections open now", "gauge", () => {
      const g = this.http.guard?.();
      return g ? [{ value: g.open }] : [];
    });
    r.collected(
      "opendata_http_connection_events_total",
      "Connection guard events: accepted, refused (every slot busy), refused_per_client (the client's own share " +
        "busy), evicted (idle ones closed to make room), timed_out",
      "counter",
      () => this.#connectionEvents(),
    );
    this.httpRequests = r.counter(
      "opendata_http_requests_total",
      "HTTP requests answered, by path (/mcp, /sse, /message, /health, /metrics, other) and status code",
      ["path", "code"],
    );
  }

  /** `opendata_circuit_breaker_state`: per breaker that holds state, 1 for its state and 0 for the others. */
  async #breakerSamples(): Promise<Sample[]> {
    const snaps = this.breakers ? await this.breakers() : {};
    const out: Sample[] = [];
    // Breakers whose endpoints share a label show as one, in the state that says most.
    const worst = new Map<string, { provider: string; endpoint: string; state: string }>();
    const rank = (state: string): number => ["closed", "half_open", "open"].indexOf(state);
    for (const [key, snap] of Object.entries(snaps)) {
      const space = key.indexOf(" ");
      const provider = space > 0 ? key.slice(0, space) : key;
      const endpoint = this.endpointLabel(provider, space > 0 ? key.slice(space + 1) : "");
      const seen = worst.get(`${provider} ${endpoint}`);
      if (!seen || rank(snap.state) > rank(seen.state)) {
        worst.set(`${provider} ${endpoint}`, { provider, endpoint, state: snap.state });
      }
    }
    for (const { provider, endpoint, state: current } of worst.values()) {
      for (const state of ["closed", "open", "half_open"]) {
        out.push({ labels: { provider, endpoint, state }, value: current === state ? 1 : 0 });
      }
    }
    return out;
  }

  /** `opendata_jobs`: the tracked job managers' jobs, summed by state. */
  #jobSamples(): Sample[] {
    const totals: Record<string, number> = {};
    for (const source of this.#jobs) {
      for (const [state, n] of Object.entries(source.counts())) totals[state] = (totals[state] ?? 0) + n;
    }
    return Object.entries(totals).map(([state, value]) => ({ labels: { state }, value }));
  }

  /** `opendata_http_connection_events_total`: the connection guard's counts, by event. */
  #connectionEvents(): Sample[] {
    const g = this.http.guard?.();
    if (!g) return [];
    return [
      { labels: { event: "accepted" }, value: g.accepted },
      { labels: { event: "refused" }, value: g.refused - g.refusedPerClient },
      { labels: { event: "refused_per_client" }, value: g.refusedPerClient },
      { labels: { event: "evicted" }, value: g.evicted },
      { labels: { event: "timed_out" }, value: g.timedOut },
    ];
  }

  /**
   * The label `endpoint` is counted under for `provider`: itself while the provider has fewer
   * than {@linkcode MAX_ENDPOINT_LABELS} (or already has it), else `other`. `family`, when the
   * caller mapped a family to `endpoint` (a declared pattern), is remembered for the breaker
   * gauge, whose keys name families.
   */
  endpointLabel(provider: string, endpoint: string, family?: string): string {
    const known = this.#familyLabels.get(`${provider} ${endpoint}`);
    if (family === undefined && known !== undefined) return known;
    let given = this.#endpointLabels.get(provider);
    if (!given) this.#endpointLabels.set(provider, given = new Set());
    let label = endpoint;
    if (!given.has(endpoint)) {
      if (given.size >= MAX_ENDPOINT_LABELS) label = "other";
      else given.add(endpoint);
    }
    if (family !== undefined && family !== endpoint && this.#familyLabels.size < MAX_FAMILIES_KEPT) {
      this.#familyLabels.set(`${provider} ${family}`, label);
    }
    return label;
  }

  /** Counts the jobs of `source` in `opendata_jobs` from now on. */
  trackJobs(source: JobCounts): void {
    this.#jobs.add(source);
  }

  /** Stops counting `source` (its provider closed). */
  untrackJobs(source: JobCounts): void {
    this.#jobs.delete(source);
  }

  /** The exposition. */
  render(): Promise<string> {
    return this.registry.render();
  }
}

/** The process's metrics, once enabled; undefined while nothing serves them. */
export let metrics: ServerMetrics | undefined;

/** Creates the process's metrics (once) and returns them. */
export function enableMetrics(): ServerMetrics {
  metrics ??= new ServerMetrics();
  return metrics;
}

/** Drops the process's metrics (tests, and a server that stops serving them). */
export function disableMetrics(): void {
  metrics = undefined;
}
