// The in-process harness (tests/harness/in_process.ts) stands in for a new process per server:
// what one server counted is gone for the next in the same test file, but not while another
// server still runs.
import assert from "node:assert/strict";
import { serveInProcess, startHttpInProcess } from "../harness/in_process.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";

/** The server's count of `example-ping` calls, as /metrics says it. */
async function pings(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const line = text.split("\n").find((l) =>
    l.startsWith("opendata_tool_calls_total{") && l.includes('tool="example-ping"')
  );
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

async function ping(origin: string): Promise<void> {
  const client = new Client({ name: "harness", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  await client.callTool({ name: "example-ping", arguments: {} });
  await client.close();
}

Deno.test("startHttpInProcess() counts each server's metrics from zero, as a new process would", async () => {
  {
    await using first = await startHttpInProcess({ args: ["--providers", "example", "--stateless"] });
    await ping(first.origin);
    await ping(first.origin);
    assert.equal(await pings(first.origin), 2);
  }
  await using second = await startHttpInProcess({ args: ["--providers", "example", "--stateless"] });
  assert.equal(await pings(second.origin), 0);
  await ping(second.origin);
  assert.equal(await pings(second.origin), 1);
});

Deno.test("serveInProcess() ending while an HTTP server runs leaves that server's metrics on", async () => {
  await using http = await startHttpInProcess({ args: ["--providers", "example", "--stateless"] });
  await ping(http.origin);
  const stdio = serveInProcess({ args: ["--providers", "example"] });
  await stdio[Symbol.asyncDispose]();
  assert.equal(await stdio.exited, 0);
  await ping(http.origin);
  assert.equal(await pings(http.origin), 2);
});
