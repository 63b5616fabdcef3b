// Both protocol eras on the same endpoints, end to end against the real server (in process, HTTP on
// a real socket; the stdio test spawns it, as its stdout must carry nothing but JSON-RPC): the
// 2026-07-28 stateless core (SDK v2 client pinned to it, and @ai-sdk/mcp 2.x, which probes with
// server/discover first), next to 2025-era clients (SDK v1 over Streamable HTTP and legacy SSE).
import assert from "node:assert/strict";
import { providerTools } from "../harness/results.ts";
import { createMCPClient } from "@ai-sdk/mcp";
import {
  Client as V1Client,
  SSEClientTransport,
  StreamableHTTPClientTransport as V1Http,
} from "../harness/sdk_client.ts";
import {
  childEnv,
  DenoStdioTransport,
  entryOf,
  removeHome,
  scratchHome,
  startArgs,
} from "../harness/spawn.ts";
import { Client, MODERN, StreamableHTTPClientTransport } from "../harness/sdk2_client.ts";
import { startHttpInProcess } from "../harness/in_process.ts";

/** The server these tests spawn: the sources' main.ts. */
const MAIN = entryOf({});

function echoText(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.type === "text" ? first.text ?? "" : "";
}

for (const stateless of [false, true]) {
  const mode = stateless ? "stateless" : "stateful";

  Deno.test(`HTTP (${mode}): a 2026-07-28 client and 2025-era clients are served on the same /mcp`, async () => {
    await using server = await startHttpInProcess({
      args: ["--providers", "example", ...(stateless ? ["--stateless"] : [])],
    });
    const url = new URL(`${server.origin}/mcp`);

    const modern = new Client({ name: "eras-test", version: "0" }, {
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await modern.connect(new StreamableHTTPClientTransport(url));
    assert.equal(modern.getProtocolEra(), "modern");
    const tools = await modern.listTools();
    assert.deepEqual(providerTools(tools.tools).map((t) => t.name), ["example-ping", "example-echo"]);
    const echoed = await modern.callTool({ name: "example-echo", arguments: { era: "2026" } });
    assert.deepEqual(echoed.structuredContent, { echo: { era: "2026" } });
    const bad = await modern.callTool({ name: "example-echo", arguments: { nested: "x".repeat(10) } });
    assert.equal(bad.isError, undefined, "example-echo takes any object");
    await modern.close();

    const legacy = new V1Client({ name: "eras-test-v1", version: "0" });
    await legacy.connect(new V1Http(url));
    assert.equal(legacy.getServerVersion()?.name, "opendata-mcp");
    const pong = await legacy.callTool({ name: "example-ping", arguments: {} });
    assert.deepEqual(pong.structuredContent, { pong: true });
    await legacy.close();

    if (!stateless) {
      const sse = new V1Client({ name: "eras-test-sse", version: "0" });
      await sse.connect(new SSEClientTransport(new URL(`${server.origin}/sse`)));
      const viaSse = await sse.callTool({ name: "example-echo", arguments: { via: "sse" } });
      assert.deepEqual(viaSse.structuredContent, { echo: { via: "sse" } });
      await sse.close();
    }
    // Stopped first, so the whole log is in (a serving process writes it asynchronously).
    assert.equal(await server.stop(), 0);
    assert.doesNotMatch(server.stderr(), /"level":"error"/);
  });

  Deno.test(`HTTP (${mode}): @ai-sdk/mcp 2.x negotiates 2026-07-28 through server/discover and calls a tool`, async () => {
    await using server = await startHttpInProcess({
      args: ["--providers", "example", ...(stateless ? ["--stateless"] : [])],
    });
    const seen: { version: string | null; method: string | null }[] = [];
    const client = await createMCPClient({
      transport: {
        type: "http",
        url: `${server.origin}/mcp`,
        fetch: (input: RequestInfo | URL, init?: RequestInit) => {
          const headers = new Headers(init?.headers);
          seen.push({ version: headers.get("mcp-protocol-version"), method: headers.get("mcp-method") });
          return fetch(input, init);
        },
      },
    });
    try {
      const tools = await client.tools();
      assert.ok("example-echo" in tools, Object.keys(tools).join(", "));
      const echo = tools["example-echo"]!;
      const result = await echo.execute!({ from: "ai-sdk" }, { toolCallId: "1", messages: [], context: {} });
      assert.match(JSON.stringify(result), /ai-sdk/);
    } finally {
      await client.close();
    }
    assert.equal(seen[0]?.method, "server/discover", "the client probes with server/discover first");
    assert.ok(
      seen.filter((s) => s.method === "tools/call").every((s) => s.version === MODERN),
      `every tool call went out as ${MODERN}: ${JSON.stringify(seen)}`,
    );
    assert.ok(!seen.some((s) => s.method === "initialize"), "no fallback to the 2025 handshake");
  });
}

Deno.test("stdio: the opening message picks the era, 2026-07-28 or 2025", async () => {
  for (const era of ["modern", "legacy"] as const) {
    const home = scratchHome();
    const transport = new DenoStdioTransport(
      new Deno.Command(Deno.execPath(), {
        args: ["run", ...startArgs(home), MAIN, "--providers", "example"],
        env: childEnv(home),
        clearEnv: true,
        cwd: home,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }),
    );
    try {
      if (era === "modern") {
        const client = new Client({ name: "eras-stdio", version: "0" }, {
          versionNegotiation: { mode: { pin: MODERN } },
        });
        await client.connect(transport);
        assert.equal(client.getProtocolEra(), "modern");
        const result = await client.callTool({ name: "example-echo", arguments: { over: "stdio" } });
        assert.deepEqual(result.structuredContent, { echo: { over: "stdio" } });
        assert.match(echoText(result), /"over":\s*"stdio"/);
        await client.close();
      } else {
        const client = new V1Client({ name: "eras-stdio-v1", version: "0" });
        await client.connect(transport);
        const result = await client.callTool({ name: "example-ping", arguments: {} });
        assert.deepEqual(result.structuredContent, { pong: true });
        await client.close();
      }
      assert.ok(
        transport.stdoutLines.every((l) => JSON.parse(l).jsonrpc === "2.0"),
        "stdout carries nothing but JSON-RPC",
      );
    } finally {
      await transport.close();
      removeHome(home);
    }
  }
});
