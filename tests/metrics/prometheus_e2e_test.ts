// GET /metrics end to end with the real parts: the server over HTTP (FRED pointed at a loopback
// fake that fails on cue), driven by the MCP SDK's client, its exposition checked by Debian's
// `promtool check metrics`, then scraped by a real `prometheus` (temp config and storage, loopback,
// 1 s interval) whose HTTP API must return the series after a run with retries, an open breaker
// and cache hits. The Prometheus binary is looked up on PATH; .ci/run installs it.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { errorOf, ok } from "../harness/results.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { fredRoutes, TEST_KEY } from "../providers/fred/fake_fred.ts";
import { startHttpInProcess } from "../harness/in_process.ts";

const AUTH = "mcp-token-for-tests-0123456789";
const METRICS_TOKEN = "metrics-token-for-tests-0123456789";

function config(fred: string): string {
  return `providers:
  fred:
    base_url: ${fred}
    api_key: ${TEST_KEY}
    rate_limit_per_minute: 0
    rate_limit_per_second: 0
    retry_backoff_ms: 5
    rate_limit_retry_delay: 0.05
    cache_ttl: 300
    max_retries: 1
    breaker_threshold: 2
`;
}

/** A free loopback port (Prometheus cannot report one it picked itself). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function promtoolCheck(exposition: string): Promise<{ code: number; out: string }> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(exposition));
  await w.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

interface PromResult {
  metric: Record<string, string>;
  value: [number, string];
}

Deno.test("GET /metrics passes promtool and is scraped by a real Prometheus after retries, an open breaker and cache hits", async (t) => {
  await using fred = FakeUpstream.start(fredRoutes());
  // FLAKY fails once with 503, then answers: one retry. DOWN always fails: the breaker opens.
  fred.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "FLAKY",
    reply: (_r, n) =>
      n === 0
        ? { status: 503, json: { error_code: 503, error_message: "Service Unavailable" } }
        : { json: { observations: [{ date: "2020-01-01", value: "1.5" }], count: 1, offset: 0, limit: 1 } },
  });
  fred.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "DOWN",
    reply: { status: 500, json: { error_code: 500, error_message: "Internal Server Error." } },
  });
  await using server = await startHttpInProcess({
    args: ["--providers", "fred"],
    configYaml: config(fred.origin),
    env: { MCP_AUTH_TOKEN: AUTH, MCP_METRICS_TOKEN: METRICS_TOKEN },
  });
  const client = new Client({ name: "metrics-tests", version: "0" }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${AUTH}` } },
    }),
  );
  const call = (args: Record<string, unknown>) => client.callTool({ name: "fred_series", arguments: args });

  await t.step("a scripted run: a retry, cache hits, a breaker that opens", async () => {
    ok(await call({ operation: "get_observations", series_id: "FLAKY", output: "screen" }));
    ok(await call({ operation: "get", series_id: "GNPCA", output: "screen" }));
    ok(await call({ operation: "get", series_id: "GNPCA", output: "screen" }));
    ok(await call({ operation: "get", series_id: "GNPCA", output: "screen" }));
    for (let i = 0; i < 2; i++) {
      assert.equal(
        errorOf(
          await call({ operation: "get_observations", series_id: "DOWN", output: "screen" }),
        )["error_type"],
        "SERVER_ERROR",
      );
    }
    const open = errorOf(await call({ operation: "get_observations", series_id: "DOWN", output: "screen" }));
    assert.equal(open["error_type"], "CIRCUIT_OPEN");
  });

  await t.step("/metrics takes the metrics token, not the MCP one", async () => {
    const none = await fetch(`${server.origin}/metrics`);
    assert.equal(none.status, 401);
    assert.match(await none.text(), /Authorization: Bearer/);
    const mcpToken = await fetch(`${server.origin}/metrics`, {
      headers: { Authorization: `Bearer ${AUTH}` },
    });
    assert.equal(mcpToken.status, 401);
    await mcpToken.body?.cancel();
  });

  let exposition = "";
  await t.step("the exposition passes promtool check metrics and holds the run's series", async () => {
    const res = await fetch(`${server.origin}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    exposition = await res.text();
    const checked = await promtoolCheck(exposition);
    assert.equal(checked.code, 0, `promtool check metrics:\n${checked.out}`);
    assert.equal(checked.out.trim(), "", "no lint warnings");
    assert.match(
      exposition,
      /^opendata_upstream_retries_total\{provider="fred",endpoint="[^"]+",reason="503"\} 1$/m,
    );
    assert.match(exposition, /^opendata_cache_lookups_total\{provider="fred",result="hit"\} 2$/m);
    assert.match(
      exposition,
      /^opendata_circuit_breaker_state\{provider="fred",endpoint="[^"]+\/fred\/series",state="open"\} 1$/m,
    );
    assert.match(exposition, /^opendata_circuit_breaker_transitions_total\{[^}]*to="open"\} 1$/m);
    assert.match(exposition, /^opendata_circuit_breaker_rejections_total\{[^}]*\} 1$/m);
    assert.match(
      exposition,
      /^opendata_tool_calls_total\{tool="fred_series",status="error",error_type="CIRCUIT_OPEN"\} 1$/m,
    );
    // Histogram buckets are cumulative and end with +Inf equal to _count.
    const buckets = [...exposition.matchAll(
      /^opendata_tool_call_duration_seconds_bucket\{tool="fred_series",status="ok",le="([^"]+)"\} (\d+)$/gm,
    )].map((m) => [m[1]!, Number(m[2])] as const);
    assert.equal(buckets.at(-1)![0], "+Inf");
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]![1] >= buckets[i - 1]![1]);
    assert.match(
      exposition,
      new RegExp(
        `^opendata_tool_call_duration_seconds_count\\{tool="fred_series",status="ok"\\} ${
          buckets.at(-1)![1]
        }$`,
        "m",
      ),
    );
    assert.ok(!exposition.includes(TEST_KEY), "no API key in the exposition");
  });

  await t.step("a real Prometheus scrapes it and answers queries for the series", async () => {
    const dir = Deno.makeTempDirSync({ prefix: "opendata-prom-" });
    const tokenFile = `${dir}/token`;
    Deno.writeTextFileSync(tokenFile, METRICS_TOKEN);
    Deno.writeTextFileSync(
      `${dir}/prometheus.yml`,
      `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: opendata
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: ${tokenFile}
    static_configs:
      - targets: ["127.0.0.1:${server.port}"]
`,
    );
    const port = freePort();
    const prom = new Deno.Command("prometheus", {
      args: [
        `--config.file=${dir}/prometheus.yml`,
        `--storage.tsdb.path=${dir}/data`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const api = `http://127.0.0.1:${port}/api/v1`;
    const query = async (q: string): Promise<PromResult[]> => {
      const res = await fetch(`${api}/query?query=${encodeURIComponent(q)}`);
      const body = await res.json();
      return body.status === "success" ? body.data.result : [];
    };
    try {
      // Wait for a scrape that found the series (Prometheus starts, then scrapes every second).
      const until = Date.now() + 30_000;
      let retries: PromResult[] = [];
      while (Date.now() < until) {
        retries = await query("opendata_upstream_retries_total").catch(() => []);
        if (retries.length > 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      // FLAKY: one retry after its 503; DOWN: one retry after each of its two 500s.
      const byReason = Object.fromEntries(retries.map((r) => [r.metric["reason"], r.value[1]]));
      assert.deepEqual(byReason, { "503": "1", "500": "2" }, "Prometheus stored the retry counters");
      const up = await query('up{job="opendata"}');
      assert.equal(up[0]?.value[1], "1", "the scrape succeeded with the bearer token");
      const open = await query('opendata_circuit_breaker_state{state="open"} == 1');
      assert.equal(open.length, 1);
      assert.equal(open[0]!.metric["provider"], "fred");
      const hits = await query('opendata_cache_lookups_total{result="hit"}');
      assert.equal(hits[0]?.value[1], "2");
      const p50 = await query(
        'histogram_quantile(0.5, sum by (le) (opendata_tool_call_duration_seconds_bucket{tool="fred_series"}))',
      );
      assert.ok(Number(p50[0]?.value[1]) > 0, "the duration histogram is usable by histogram_quantile");
      const rss = await query("opendata_process_resident_memory_bytes");
      assert.ok(Number(rss[0]?.value[1]) > 1024 * 1024);
    } finally {
      prom.kill("SIGTERM");
      await prom.status;
      await prom.stderr.cancel().catch(() => {});
      Deno.removeSync(dir, { recursive: true });
    }
  });

  await client.close();
});
