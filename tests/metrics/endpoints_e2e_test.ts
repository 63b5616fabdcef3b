// Where /metrics is reachable: over stdio only with --metrics-port (a listener serving /metrics
// alone), and over HTTP unless MCP_METRICS=false; through the real server.
import assert from "node:assert/strict";
import { runInProcess, startHttpInProcess, startInProcess } from "../harness/in_process.ts";

const TOKEN = "metrics-token-for-stdio-tests-0123";

Deno.test("--metrics-port serves /metrics alone over stdio, with the metrics token", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example", "--metrics-port", "0"],
    env: { MCP_METRICS_TOKEN: TOKEN },
  });
  await s.client.callTool({ name: "example-ping", arguments: {} });
  const line = s.stderr().split("\n").find((l) => l.includes('"msg":"serving metrics"'));
  assert.ok(line, s.stderr());
  const { port, url, auth } = JSON.parse(line);
  assert.equal(auth, "bearer");
  assert.equal(url, `http://127.0.0.1:${port}/metrics`);
  const origin = `http://127.0.0.1:${port}`;

  const refused = await fetch(`${origin}/metrics`);
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
  await refused.body?.cancel();
  const other = await fetch(`${origin}/mcp`);
  assert.equal(other.status, 404);
  assert.match(await other.text(), /serves only \/metrics/);

  const res = await fetch(`${origin}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /^opendata_tool_calls_total\{tool="example-ping",status="ok",error_type=""\} 1$/m);
  // No HTTP server runs over stdio: its families are there, empty.
  assert.match(text, /# TYPE opendata_http_sessions gauge\n# HELP/);
});

Deno.test("over stdio without --metrics-port nothing listens for metrics", async () => {
  await using s = await startInProcess({ args: ["--providers", "example"] });
  await s.client.callTool({ name: "example-ping", arguments: {} });
  assert.doesNotMatch(s.stderr(), /serving metrics/);
});

Deno.test("MCP_METRICS=false leaves /metrics out of the HTTP server", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { MCP_METRICS: "false" },
  });
  const res = await fetch(`${server.origin}/metrics`);
  assert.equal(res.status, 404);
  await res.body?.cancel();
  const root = await (await fetch(`${server.origin}/`)).json();
  assert.equal(root.endpoints.metrics, undefined);
});

Deno.test("a metrics port already in use stops the start with the key and the fix", async () => {
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (busy.addr as Deno.NetAddr).port;
    const { code, stderr } = await runInProcess([
      "serve",
      "--providers",
      "example",
      "--metrics-port",
      String(port),
    ]);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /configuration error at "server\.metrics_port": Cannot listen on "127\.0\.0\.1:\d+" for metrics/,
    );
    assert.match(stderr, /Choose another metrics_port \(0 picks a free one\)/);
    assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
  } finally {
    busy.close();
  }
});
