import assert from "node:assert/strict";
import { z } from "zod";
import { ToolError, UpstreamError } from "../../lib/errors.ts";
import { Logger } from "../../lib/log.ts";
import type { McpExtra, ToolDefinition } from "../../lib/mcp/provider.ts";
import { requestScope } from "../../lib/http/request_scope.ts";
import {
  callTool as callToolRaw,
  collectTools,
  describeTool,
  errorResult,
  servedInput,
} from "../../lib/mcp/server.ts";
import { isInputRequiredResult } from "../../lib/mcp/sdk.ts";
import type { CallToolResult } from "../../lib/mcp/sdk.ts";
import { payloadOf } from "../harness/results.ts";

/** The SDK's request context, as much of it as callTool() reads. */
function extra(signal = new AbortController().signal): McpExtra {
  return {
    mcpReq: {
      id: 1,
      method: "tools/call",
      signal,
      requestState: () => undefined,
      notify: () => Promise.resolve(),
      send: () => Promise.reject(new Error("none")),
    },
  } as unknown as McpExtra;
}

/** callTool() for tools that never ask the client anything: the result is always complete. */
async function callTool(...args: Parameters<typeof callToolRaw>): Promise<CallToolResult> {
  const result = await callToolRaw(...args);
  assert.ok(!isInputRequiredResult(result), "the tool answered without asking for input");
  return result;
}

function tool(handler: ToolDefinition["handler"]): ToolDefinition<z.ZodObject, undefined> {
  return {
    name: "t",
    title: "T",
    description: "A test tool",
    input: z.strictObject({
      limit: z.number().int().min(1).max(100).default(20).describe("How many"),
      mode: z.enum(["a", "b"]).optional().describe("Mode"),
    }),
    output: undefined,
    annotations: { readOnlyHint: true },
    handler,
  };
}

const lines: string[] = [];
const options = { logger: new Logger({ write: (l) => lines.push(l) }), characterLimit: 1000 };

Deno.test("callTool() turns a schema failure into a VALIDATION_ERROR naming the field", async () => {
  const result = await callTool(
    tool(() => Promise.resolve({ text: "ok" })),
    { limit: 500 },
    extra(),
    options,
  );
  assert.equal(result.isError, true);
  const payload = payloadOf(result);
  assert.equal(payload.error_type, "VALIDATION_ERROR");
  assert.equal(payload.field, "limit");
  assert.match(String(payload["message"]), /"limit": Too big: expected number to be <=100/);
  const bad = await callTool(tool(() => Promise.resolve({ text: "ok" })), { mode: "c" }, extra(), options);
  assert.equal(
    (bad.content[0] as { text: string }).text.split("\n")[0],
    'Error (VALIDATION_ERROR): Invalid arguments: "mode": Invalid option: expected one of "a"|"b"',
  );
});

Deno.test("callTool() returns ToolError payloads with status, message id and retry hint", async () => {
  const result = await callTool(
    tool(() => {
      throw new UpstreamError("API_ERROR", "BOJ API answered HTTP 400", {
        provider: "boj",
        status: 400,
        messageId: "M181005E",
        hint: "Check the code",
      });
    }),
    {},
    extra(),
    options,
  );
  assert.equal(result.isError, true);
  const text = (result.content[0] as { text: string }).text;
  assert.equal(text, "Error (API_ERROR): BOJ API answered HTTP 400\nNext step: Check the code");
  assert.deepEqual((result._meta as Record<string, unknown>)["opendata-mcp/error"], {
    error_type: "API_ERROR",
    message: "BOJ API answered HTTP 400",
    retryable: false,
    status: 400,
    message_id: "M181005E",
    hint: "Check the code",
  });
  assert.equal(result.structuredContent, undefined);
});

Deno.test("callTool() hides unexpected failures behind INTERNAL_ERROR without a stack trace", async () => {
  lines.length = 0;
  const result = await callTool(
    tool(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'x')");
    }),
    {},
    extra(),
    options,
  );
  const all = JSON.stringify(result);
  assert.match(all, /INTERNAL_ERROR/);
  assert.doesNotMatch(all, /Cannot read properties/);
  assert.ok(lines.some((l) => l.includes("Cannot read properties")), "the cause is logged");
  assert.ok(!lines.some((l) => l.includes("    at ")), "no stack in logs");
  const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "tool call");
  assert.equal(logged.status, "error");
  assert.equal(logged.tool_name, "t");
  assert.equal(typeof logged.duration_ms, "number");
  assert.equal(typeof logged.request_id, "string");
});

Deno.test("callTool() clamps an oversized text block to the character limit", async () => {
  const result = await callTool(
    tool(() => Promise.resolve({ text: "z".repeat(5000) })),
    {},
    extra(),
    options,
  );
  const text = (result.content[0] as { text: string }).text;
  assert.ok(text.length <= 1000);
  assert.match(text, /Truncated/);
});

Deno.test("callTool() reports a cancelled call as CANCELLED", async () => {
  const controller = new AbortController();
  controller.abort();
  const result = await callTool(
    tool(() => Promise.reject(new Error("aborted"))),
    {},
    extra(controller.signal),
    options,
  );
  assert.match((result.content[0] as { text: string }).text, /CANCELLED/);
});

Deno.test("describeTool() emits strict JSON Schemas with defaults and descriptions", () => {
  const described = describeTool(tool(() => Promise.resolve({ text: "" })));
  const schema = described.inputSchema as Record<string, unknown>;
  assert.equal(schema["type"], "object");
  assert.equal(schema["additionalProperties"], false);
  const props = schema["properties"] as Record<string, Record<string, unknown>>;
  assert.equal(props["limit"]?.["default"], 20);
  assert.equal(props["limit"]?.["description"], "How many");
  assert.deepEqual(schema["required"] ?? [], []);
});

Deno.test("collectTools() refuses two tools with one name", () => {
  const t = tool(() => Promise.resolve({ text: "" }));
  assert.throws(() => collectTools([{ id: "a", tools: [t] }, { id: "b", tools: [t] }]), /registered twice/);
});

Deno.test("errorResult() writes retry-after and the next step", () => {
  const r = errorResult(
    new ToolError("RATE_LIMITED", "Slow down", { retryable: true, retryAfterS: 30, hint: "Wait" })
      .toPayload(),
  );
  assert.equal(
    (r.content[0] as { text: string }).text,
    "Error (RATE_LIMITED, retryable): Slow down\nRetry after: 30 s\nNext step: Wait",
  );
});

Deno.test("validationError() says required only for arguments that are missing", async () => {
  const t = {
    ...tool(() => Promise.resolve({ text: "" })),
    input: tool(() => Promise.resolve({ text: "" })).input.extend({
      query: z.string().describe("Text"),
      kind: z.enum(["x", "y"]).describe("Kind"),
    }),
  };
  const missing = await callTool(t, {}, extra(), options);
  const text = (missing.content[0] as { text: string }).text;
  assert.match(text, /"query": required/);
  assert.match(text, /"kind": required: Invalid option: expected one of "x"\|"y"/);
  const wrong = await callTool(t, { query: 5, kind: "z" }, extra(), options);
  const wrongText = (wrong.content[0] as { text: string }).text;
  assert.match(wrongText, /"query": Invalid input: expected string, received number/);
  assert.doesNotMatch(wrongText, /required/);
});

Deno.test("servedInput() adds the shared fresh argument to upstream-backed tools and callTool() scopes it", async () => {
  let seen: { args?: Record<string, unknown>; fresh?: boolean } = {};
  const upstream: ToolDefinition<z.ZodObject, undefined> = {
    ...tool((args) => {
      seen = { args: args as Record<string, unknown>, fresh: requestScope.getStore()?.fresh ?? false };
      return Promise.resolve({ text: "ok" });
    }),
    annotations: { readOnlyHint: true, openWorldHint: true },
  };
  const props = (describeTool(upstream).inputSchema as { properties: Record<string, { default?: unknown }> })
    .properties;
  assert.equal(props["fresh"]?.default, false);
  assert.equal(servedInput(tool(() => Promise.resolve({ text: "" }))).addsFresh, false, "closed-world tools");

  await callTool(upstream, { limit: 3, fresh: true }, extra(), options);
  assert.deepEqual(seen, { args: { limit: 3 }, fresh: true }, "the handler never sees fresh; the scope does");
  await callTool(upstream, { limit: 3 }, extra(), options);
  assert.equal(seen.fresh, false);
  assert.equal(requestScope.getStore(), undefined, "the scope ends with the call");
});

Deno.test("callTool() takes null for an optional argument as left out, as strict clients send it", async () => {
  const seen: unknown[] = [];
  const t = tool((args) => {
    seen.push(args);
    return Promise.resolve({ text: "ok" });
  });
  const result = await callTool(t, { limit: null, mode: null }, extra(), options);
  assert.equal(result.isError, undefined);
  assert.deepEqual(seen, [{ limit: 20 }], "the defaults apply");
  const required = {
    ...t,
    input: z.strictObject({ query: z.string().describe("What to look for") }),
  } as ToolDefinition<z.ZodObject, undefined>;
  const refused = await callTool(required, { query: null }, extra(), options);
  assert.equal(refused.isError, true, "null stays an error for a required argument");
});
