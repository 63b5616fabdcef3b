// A tool call's deadline (lib/mcp/call_deadline.ts, on a shared DeadlineWheel): it falls even where
// nothing else keeps the process alive (an in-memory transport, a handler that never settles), and
// a failure at the deadline itself is answered as the call's deadline.
import assert from "node:assert/strict";
import { z } from "zod";
import { Logger } from "../../lib/log.ts";
import { callTool, createServer } from "../../lib/mcp/server.ts";
import type { McpExtra, ToolDefinition } from "../../lib/mcp/provider.ts";
import { isInputRequiredResult } from "../../lib/mcp/sdk.ts";
import { requestScope } from "../../lib/http/request_scope.ts";
import { Client, InMemoryTransport } from "../harness/sdk_client.ts";

const output = z.object({ done: z.boolean() });

function tool(name: string, handler: ToolDefinition<z.ZodObject, typeof output>["handler"]) {
  return {
    name,
    title: name,
    description: "A tool for the call deadline tests.",
    input: z.strictObject({}),
    output,
    annotations: { readOnlyHint: true },
    handler,
  } as ToolDefinition<z.ZodObject, typeof output>;
}

/** The error payload of a call to `name` on a server whose calls have `callTimeoutMs`. */
async function errorOf(name: string, tools: ToolDefinition[], callTimeoutMs: number) {
  const server = createServer([{ id: "deadline", tools }], {
    logger: new Logger(),
    characterLimit: 25_000,
    callTimeoutMs,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "0" }, { capabilities: {} });
  await client.connect(clientSide);
  try {
    const started = performance.now();
    const result = await client.callTool({ name, arguments: {} });
    const ms = performance.now() - started;
    assert.equal(result.isError, true);
    const payload =
      (result._meta as Record<string, { error_type: string; message: string }>)["opendata-mcp/error"];
    assert.ok(payload, JSON.stringify(result));
    return { payload, ms };
  } finally {
    await client.close();
  }
}

Deno.test("a call whose handler never settles gets its TIMEOUT at the deadline, with nothing else pending", async () => {
  // The call alone, as the server runs it: no transport or client timer keeps the process alive,
  // only the call's deadline.
  const hangs = tool("hangs", () => new Promise(() => {}));
  const extra = {
    mcpReq: { signal: new AbortController().signal, id: 1, method: "tools/call" },
  } as unknown as McpExtra;
  const started = performance.now();
  const result = await callTool(hangs, {}, extra, {
    logger: new Logger(),
    characterLimit: 25_000,
    callTimeoutMs: 300,
  });
  const ms = performance.now() - started;
  assert.ok(!isInputRequiredResult(result) && result.isError);
  const payload =
    (result._meta as Record<string, { error_type: string; message: string }>)["opendata-mcp/error"];
  assert.equal(payload?.error_type, "TIMEOUT");
  assert.match(payload?.message ?? "", /within the server's 0\.3 s per-call deadline/);
  assert.ok(ms >= 290, `not before the deadline: ${ms.toFixed(0)} ms`);
});

Deno.test("a failure that comes at the deadline (an upstream timed to it) is answered as the deadline", async () => {
  // Fails exactly when the deadline is due, as the HTTP client's own timeout does, before the
  // shared timer's next tick.
  const failsAtDeadline = tool("fails", () =>
    new Promise((_, reject) => {
      setTimeout(() => reject(new Error("upstream timed out")), 400);
    }));
  const { payload } = await errorOf("fails", [failsAtDeadline], 400);
  assert.equal(payload.error_type, "TIMEOUT");
  assert.match(payload.message, /within the server's 0\.4 s per-call deadline/);
});

Deno.test("an upstream timed from the clock's whole milliseconds, a millisecond early, is the deadline too", async () => {
  // The HTTP client sizes its timeout as the deadline (the clock's whole milliseconds) less the
  // clock's time now, so it may fire up to a millisecond before the deadline in real time. This
  // handler fails exactly then: as soon as the clock reads a millisecond before the deadline.
  const early = tool("early", async () => {
    const at = requestScope.getStore()?.deadline ?? 0;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now() - 10)));
    while (Date.now() < at - 1) {
      // The last few milliseconds, to the millisecond.
    }
    throw new Error("upstream timed out");
  });
  for (let run = 0; run < 3; run++) {
    const { payload } = await errorOf("early", [early], 100);
    assert.equal(payload.error_type, "TIMEOUT", `run ${run}: ${payload.message}`);
    assert.match(payload.message, /within the server's 0\.1 s per-call deadline/, `run ${run}`);
  }
});
