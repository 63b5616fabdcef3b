// OpenTelemetry traces end to end: the real server over HTTP with Deno's built-in exporter
// (OTEL_DENO=true, OTLP over HTTP/protobuf, Deno's default) pointed at a loopback receiver that
// decodes each export with the OpenTelemetry packages' generated protobuf root. Asserted: a span
// per tool call joined to the client's trace (SEP-414 `_meta.traceparent`, and the HTTP
// `traceparent` header), a child span per upstream attempt with the request id and the URL
// with its key masked, and nowhere in any export the FRED key (Deno's own fetch spans, which
// would carry it, are left unsampled).
import assert from "node:assert/strict";
import root from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { startHttpServer } from "../harness/spawn_http.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { ok } from "../harness/results.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { fredRoutes, TEST_KEY } from "../providers/fred/fake_fred.ts";

/** The parts of the generated protobufjs message this test reads (OTLP trace export request). */
interface OtlpValue {
  stringValue?: string | null;
  intValue?: number | { toString(): string } | null;
  boolValue?: boolean | null;
  doubleValue?: number | null;
}
interface OtlpRequest {
  resourceSpans?: {
    scopeSpans?: {
      spans?: {
        traceId?: Uint8Array;
        spanId?: Uint8Array;
        parentSpanId?: Uint8Array;
        name: string;
        kind: number;
        attributes?: { key: string; value?: OtlpValue }[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}
type Generated = {
  opentelemetry: {
    proto: {
      collector: { trace: { v1: { ExportTraceServiceRequest: { decode(b: Uint8Array): OtlpRequest } } } };
    };
  };
};
const ExportTraceServiceRequest = (root as unknown as Generated).opentelemetry.proto.collector.trace.v1
  .ExportTraceServiceRequest;

interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: number;
}

const hex = (b: Uint8Array | undefined): string =>
  b ? [...b].map((x) => x.toString(16).padStart(2, "0")).join("") : "";

/** Decodes one OTLP/protobuf trace export into flat spans. */
function decode(body: Uint8Array): DecodedSpan[] {
  const req = ExportTraceServiceRequest.decode(body);
  const out: DecodedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes: Record<string, string | number | boolean> = {};
        for (const a of s.attributes ?? []) {
          const v = a.value ?? {};
          if (typeof v.stringValue === "string") attributes[a.key] = v.stringValue;
          else if (v.intValue !== undefined && v.intValue !== null) {
            attributes[a.key] = Number(String(v.intValue));
          } else if (typeof v.boolValue === "boolean") attributes[a.key] = v.boolValue;
          else if (typeof v.doubleValue === "number") attributes[a.key] = v.doubleValue;
        }
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: s.kind,
          attributes,
          status: s.status?.code ?? 0,
        });
      }
    }
  }
  return out;
}

const TRACE_META = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_META = "00f067aa0ba902b7";
const TRACE_HEADER = "0af7651916cd43dd8448eb211c80319c";
const PARENT_HEADER = "b7ad6b7169203331";

Deno.test("OTLP: a span per tool call joined to the client's trace, with a masked child span per upstream attempt", async () => {
  const bodies: Uint8Array[] = [];
  const paths: string[] = [];
  await using receiver = {
    server: Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      const body = new Uint8Array(await req.arrayBuffer());
      paths.push(new URL(req.url).pathname);
      if (new URL(req.url).pathname === "/v1/traces") bodies.push(body);
      return new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } });
    }),
    async [Symbol.asyncDispose]() {
      await this.server.shutdown();
    },
  };
  await using fred = FakeUpstream.start(fredRoutes());
  fred.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "FLAKY",
    reply: (_r, n) =>
      n === 0
        ? { status: 503, json: { error_code: 503, error_message: "Service Unavailable" } }
        : { json: { observations: [{ date: "2020-01-01", value: "1.5" }], count: 1, offset: 0, limit: 1 } },
  });
  const server = await startHttpServer({
    args: ["--providers", "fred"],
    configYaml: `providers:
  fred:
    base_url: ${fred.origin}
    api_key: ${TEST_KEY}
    rate_limit_per_minute: 0
    rate_limit_per_second: 0
    retry_backoff_ms: 5
    cache_ttl: 0
    max_retries: 1
`,
    env: {
      OTEL_DENO: "true",
      OTEL_TRACES_SAMPLER: "parentbased_always_on",
      OTEL_DENO_METRICS: "false",
      OTEL_DENO_CONSOLE: "ignore",
      OTEL_SERVICE_NAME: "opendata-mcp-test",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.server.addr.port}`,
    },
  });
  try {
    const viaMeta = new Client({ name: "otel-tests", version: "0" }, { capabilities: {} });
    await viaMeta.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    ok(
      await viaMeta.callTool({
        name: "fred_series",
        arguments: { operation: "get_observations", series_id: "FLAKY", output: "screen" },
        _meta: { traceparent: `00-${TRACE_META}-${PARENT_META}-01` },
      }),
    );
    await viaMeta.close();
    const viaHeader = new Client({ name: "otel-tests", version: "0" }, { capabilities: {} });
    await viaHeader.connect(
      new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), {
        requestInit: { headers: { traceparent: `00-${TRACE_HEADER}-${PARENT_HEADER}-01` } },
      }),
    );
    ok(
      await viaHeader.callTool({
        name: "fred_series",
        arguments: { operation: "get", series_id: "GNPCA", output: "screen" },
      }),
    );
    ok(await viaHeader.callTool({ name: "opendata_search", arguments: { query: "gdp" } }));
    await viaHeader.close();
  } finally {
    // The exporter sends what it holds when the process exits.
    assert.equal(await server.stop("SIGTERM"), 0, server.stderr());
  }

  const raw = bodies.map((b) => new TextDecoder().decode(b)).join("\n");
  assert.ok(bodies.length > 0, `trace exports arrived (paths: ${paths.join(", ")})`);
  assert.ok(!raw.includes(TEST_KEY), "the FRED key is in no exported span");
  const spans = bodies.flatMap(decode);

  // _meta.traceparent (SEP-414): the tool span continues the client's trace.
  const tool = spans.find((s) => s.traceId === TRACE_META && s.name === "tools/call fred_series");
  assert.ok(tool, `a tool-call span in the client's trace; got ${spans.map((s) => s.name).join(", ")}`);
  assert.equal(tool.parentSpanId, PARENT_META);
  assert.equal(tool.kind, 2, "SPAN_KIND_SERVER");
  assert.equal(tool.attributes["gen_ai.tool.name"], "fred_series");
  assert.equal(tool.attributes["opendata.status"], "ok");
  const requestId = tool.attributes["opendata.request_id"];
  assert.match(String(requestId), /^[0-9a-f-]{36}$/);

  // Two upstream attempts (503, then 200), each a child of the tool span.
  const attempts = spans.filter((s) => s.parentSpanId === tool.spanId).sort((a, b) =>
    Number(a.attributes["opendata.attempt"]) - Number(b.attributes["opendata.attempt"])
  );
  assert.deepEqual(attempts.map((s) => s.name), ["GET fred", "GET fred"]);
  assert.deepEqual(attempts.map((s) => s.attributes["http.response.status_code"]), [503, 200]);
  assert.deepEqual(attempts.map((s) => s.kind), [3, 3], "SPAN_KIND_CLIENT");
  assert.equal(attempts[0]!.status, 2, "the failed attempt has status ERROR");
  assert.equal(attempts[0]!.attributes["error.type"], "API_ERROR");
  for (const a of attempts) {
    assert.equal(a.traceId, TRACE_META);
    assert.equal(a.attributes["opendata.request_id"], requestId);
    assert.equal(a.attributes["opendata.provider"], "fred");
    assert.match(String(a.attributes["url.full"]), /\/fred\/series\/observations\?.*api_key=\*\*\*/);
  }

  // The HTTP traceparent header, when _meta carries none.
  const second = spans.find((s) => s.traceId === TRACE_HEADER && s.name === "tools/call fred_series");
  assert.ok(second, "the header's trace is joined");
  assert.equal(second.parentSpanId, PARENT_HEADER);
  assert.equal(spans.filter((s) => s.parentSpanId === second.spanId && s.name === "GET fred").length, 1);

  // opendata_search asks each source in a scope of its own: its upstream span keeps the call's request id.
  const search = spans.find((s) => s.traceId === TRACE_HEADER && s.name === "tools/call opendata_search");
  assert.ok(search, "a span for the opendata_search call");
  const asked = spans.filter((s) => s.parentSpanId === search.spanId && s.name === "GET fred");
  assert.equal(asked.length, 1);
  assert.match(String(search.attributes["opendata.request_id"]), /^[0-9a-f-]{36}$/);
  assert.equal(asked[0]!.attributes["opendata.request_id"], search.attributes["opendata.request_id"]);

  // Deno's own fetch spans (whole URL, key included) are not exported.
  assert.equal(
    spans.filter((s) =>
      String(s.attributes["url.full"] ?? "").includes("api_key=") &&
      !String(s.attributes["url.full"]).includes("api_key=***")
    ).length,
    0,
  );
});
