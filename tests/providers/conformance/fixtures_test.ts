// The conformance provider's multi round-trip and protocol fixtures, end to end through the real
// HTTP handler: as 2026-07-28 requests (the client answers `inputRequests` and retries) and, for
// the same tools, through a 2025-era SDK client session (the SDK's shim asks the client).
import assert from "node:assert/strict";
import { JSON_SCHEMA_2020_12_INPUT } from "../../conformance/provider/protocol_schemas.ts";
import {
  Client,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  StreamableHTTPClientTransport,
} from "../../harness/sdk_client.ts";
import { texts } from "../../harness/results.ts";
import { BASE, startHarness } from "../../mcp/http/_harness.ts";
import type { Harness } from "../../mcp/http/_harness.ts";

const ALL_CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };

interface Answer {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** One 2026-07-28 request: the `_meta` envelope and the routing headers the revision requires. */
async function modern(
  h: Harness,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = ALL_CAPABILITIES,
): Promise<Answer> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": method,
  };
  const name = params["name"] ?? params["uri"];
  if (typeof name === "string") headers["Mcp-Name"] = name;
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
  const res = await h.fetch(`${BASE}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta } }),
  });
  const body = await res.json();
  return { status: res.status, ...body };
}

function call(h: Harness, name: string, extra: Record<string, unknown> = {}, caps?: Record<string, unknown>) {
  return modern(h, "tools/call", { name, arguments: {}, ...extra }, caps);
}

function accept(content: Record<string, unknown>): Record<string, unknown> {
  return { action: "accept", content };
}

const SAMPLED = {
  role: "assistant",
  content: { type: "text", text: "Hello there!" },
  model: "m",
  stopReason: "endTurn",
};
const ROOTS = { roots: [{ uri: "file:///test/root", name: "Test Root" }] };

function inputKeys(a: Answer): string[] {
  assert.equal(
    a.result?.["resultType"],
    "input_required",
    `expected input_required, got ${JSON.stringify(a)}`,
  );
  return Object.keys(a.result!["inputRequests"] as Record<string, unknown>).sort();
}

function text(a: Answer): string {
  assert.equal(a.result?.["resultType"], "complete", `expected a complete result, got ${JSON.stringify(a)}`);
  assert.notEqual(a.result!["isError"], true, JSON.stringify(a.result));
  const content =
    (a.result!["content"] ?? (a.result!["messages"] as { content: unknown }[])?.map((m) => m.content) ??
      (a.result!["contents"])) as { text: string }[];
  return content[0]!.text;
}

Deno.test("test_input_required_result_elicitation asks again until it gets a name, then greets", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const name = "test_input_required_result_elicitation";
  const first = await call(h, name);
  assert.deepEqual(inputKeys(first), ["user_name"]);
  // A wrong key, an answer that is not an elicitation result and a null list are all asked again.
  assert.deepEqual(inputKeys(await call(h, name, { inputResponses: { wrong_key: accept({ name: "x" }) } })), [
    "user_name",
  ]);
  assert.deepEqual(inputKeys(await call(h, name, { inputResponses: { user_name: 12345 } })), ["user_name"]);
  assert.deepEqual(inputKeys(await call(h, name, { inputResponses: null })), ["user_name"]);
  // Extra keys beside the answer are ignored.
  const done = await call(h, name, {
    inputResponses: { user_name: accept({ name: "Alice" }), unknown_extra_key: accept({ foo: "bar" }) },
  });
  assert.equal(text(done), "Hello, Alice!");
  const declined = await call(h, name, { inputResponses: { user_name: { action: "decline" } } });
  assert.equal(text(declined), "No name was given (action=decline)");
});

Deno.test("test_input_required_result_multi_round carries the round in a sealed state that changes", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const name = "test_input_required_result_multi_round";
  const r1 = await call(h, name);
  assert.deepEqual(inputKeys(r1), ["step1"]);
  const s1 = r1.result!["requestState"] as string;
  assert.equal(typeof s1, "string");
  const r2 = await call(h, name, { inputResponses: { step1: accept({ name: "Alice" }) }, requestState: s1 });
  assert.deepEqual(inputKeys(r2), ["step2"]);
  const s2 = r2.result!["requestState"] as string;
  assert.notEqual(s2, s1, "each round mints a new state");
  const r3 = await call(h, name, { inputResponses: { step2: accept({ color: "blue" }) }, requestState: s2 });
  assert.equal(text(r3), "Multi-round complete: Alice likes blue");
  // A state another fixture minted is valid but not this tool's: it starts over.
  const other = await call(h, "test_input_required_result_request_state");
  const foreign = await call(h, name, {
    inputResponses: { step2: accept({ color: "red" }) },
    requestState: other.result!["requestState"],
  });
  assert.deepEqual(inputKeys(foreign), ["step1"]);
});

Deno.test("test_input_required_result_tampered_state refuses a modified requestState with -32602", async () => {
  await using h = await startHarness({ providers: "conformance" });
  for (
    const name of ["test_input_required_result_tampered_state", "test_input_required_result_request_state"]
  ) {
    const first = await call(h, name);
    const state = first.result!["requestState"] as string;
    const confirm = { confirm: accept({ ok: true }) };
    const tampered = await call(h, name, { inputResponses: confirm, requestState: `${state}-TAMPERED` });
    assert.equal(tampered.error?.code, -32602, JSON.stringify(tampered));
    assert.equal(tampered.error?.data?.["reason"], "invalid_request_state");
    const missing = await call(h, name, { inputResponses: confirm });
    assert.deepEqual(inputKeys(missing), ["confirm"], "without the state it asks again");
    const ok = await call(h, name, { inputResponses: confirm, requestState: state });
    assert.match(text(ok), /^(state-ok|integrity-ok): requestState verified/);
  }
});

Deno.test("test_input_required_result_multiple_inputs asks for all three kinds in one round", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const name = "test_input_required_result_multiple_inputs";
  const first = await call(h, name);
  assert.deepEqual(inputKeys(first), ["client_roots", "greeting", "user_name"]);
  const requests = first.result!["inputRequests"] as Record<string, { method: string }>;
  assert.deepEqual(
    Object.values(requests).map((r) => r.method).sort(),
    ["elicitation/create", "roots/list", "sampling/createMessage"],
  );
  const answers = { user_name: accept({ name: "Alice" }), greeting: SAMPLED, client_roots: ROOTS };
  const partial = await call(h, name, {
    inputResponses: { user_name: answers.user_name },
    requestState: first.result!["requestState"],
  });
  assert.equal(inputKeys(partial).length, 3, "a partial answer is asked again");
  const done = await call(h, name, { inputResponses: answers, requestState: first.result!["requestState"] });
  assert.equal(text(done), "Hello there! Alice (1 root(s) visible)");
});

Deno.test("test_input_required_result_sampling and _list_roots return what the client answered", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const sampling = await call(h, "test_input_required_result_sampling");
  assert.deepEqual(inputKeys(sampling), ["capital_question"]);
  const answer = { ...SAMPLED, content: { type: "text", text: "Paris." } };
  assert.equal(
    text(
      await call(h, "test_input_required_result_sampling", { inputResponses: { capital_question: answer } }),
    ),
    "Sampling response: Paris.",
  );
  assert.deepEqual(inputKeys(await call(h, "test_input_required_result_list_roots")), ["client_roots"]);
  assert.equal(
    text(await call(h, "test_input_required_result_list_roots", { inputResponses: { client_roots: ROOTS } })),
    "Client exposed 1 root(s): file:///test/root",
  );
});

Deno.test("test_input_required_result_capabilities asks only for what the request declares", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const name = "test_input_required_result_capabilities";
  assert.deepEqual(inputKeys(await call(h, name, {}, { sampling: {} })), ["greeting"]);
  assert.deepEqual(inputKeys(await call(h, name, {}, { elicitation: {}, roots: {} })), [
    "client_roots",
    "user_name",
  ]);
  assert.equal(text(await call(h, name, {}, {})), "No declared client capability supports an input request");
});

Deno.test("test_missing_capability is refused with -32021 and HTTP 400 without the sampling capability", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const refused = await call(h, "test_missing_capability", {}, {});
  assert.equal(refused.status, 400);
  assert.equal(refused.error?.code, -32021);
  assert.deepEqual(refused.error?.data?.["requiredCapabilities"], { sampling: {} });
  assert.deepEqual(inputKeys(await call(h, "test_missing_capability", {}, { sampling: {} })), ["llm_answer"]);
});

Deno.test("test_input_required_result_prompt and the input-required resource ask before they answer", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const prompt = await modern(h, "prompts/get", { name: "test_input_required_result_prompt" });
  assert.deepEqual(inputKeys(prompt), ["user_context"]);
  const rendered = await modern(h, "prompts/get", {
    name: "test_input_required_result_prompt",
    inputResponses: { user_context: accept({ context: "test context" }) },
  });
  assert.equal(text(rendered), "Use the following context: test context");
  const uri = "test://input-required-resource";
  assert.deepEqual(inputKeys(await modern(h, "resources/read", { uri })), ["reader_name"]);
  const read = await modern(h, "resources/read", {
    uri,
    inputResponses: { reader_name: accept({ name: "Ada" }) },
  });
  assert.equal(text(read), "Read by Ada");
  const listed = await modern(h, "resources/list", {});
  const uris = (listed.result!["resources"] as { uri: string }[]).map((r) => r.uri);
  assert.equal(uris.at(-1), uri, "listed last: the caching scenario reads the first resource");
});

Deno.test("json_schema_2020_12_tool is listed with its 2020-12 schema verbatim and validates arguments", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const listed = await modern(h, "tools/list", {});
  const tool = (listed.result!["tools"] as { name: string; inputSchema: unknown }[]).find((t) =>
    t.name === "json_schema_2020_12_tool"
  );
  assert.deepEqual(tool?.inputSchema, JSON_SCHEMA_2020_12_INPUT);
  const name = "json_schema_2020_12_tool";
  const ok = await call(h, name, { arguments: { name: "Ada", contactMethod: "phone", phone: "+47 1" } });
  assert.equal(
    text(ok),
    'JSON Schema 2020-12 tool called with: {"name":"Ada","contactMethod":"phone","phone":"+47 1"}',
  );
  for (
    const [args, field] of [
      [{ contactMethod: "phone", email: "a@example.org" }, "phone"],
      [{ phone: "+47 1" }, "email"],
      [{ email: "a@example.org", fax: "1" }, "fax"],
    ] as const
  ) {
    const bad = await call(h, name, { arguments: args });
    assert.equal(bad.result?.["isError"], true, JSON.stringify(bad));
    const payload = (bad.result!["_meta"] as Record<string, { error_type: string; field: string }>)[
      "opendata-mcp/error"
    ]!;
    assert.equal(payload.error_type, "VALIDATION_ERROR");
    assert.equal(payload.field, field);
  }
});

Deno.test("the multi round-trip fixtures serve a 2025-era session through the SDK's shim", async () => {
  await using h = await startHarness({ providers: "conformance" });
  const client = new Client({ name: "t", version: "0" }, { capabilities: { ...ALL_CAPABILITIES } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    const field = Object.keys(
      (req.params as { requestedSchema: { properties: object } }).requestedSchema.properties,
    )[0]!;
    return { action: "accept", content: { [field]: field === "color" ? "green" : "Ada" } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => ({ ...SAMPLED, stopReason: "endTurn" }));
  client.setRequestHandler(ListRootsRequestSchema, () => ROOTS);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { fetch: h.fetch }));
  const multiRound = await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} });
  assert.deepEqual(texts(multiRound), ["Multi-round complete: Ada likes green"]);
  assert.deepEqual(asked, ["Step 1: What is your name?", "Step 2: What is your favorite color?"]);
  const multiple = await client.callTool({
    name: "test_input_required_result_multiple_inputs",
    arguments: {},
  });
  assert.deepEqual(texts(multiple), ["Hello there! Ada (1 root(s) visible)"]);
  const state = await client.callTool({ name: "test_input_required_result_request_state", arguments: {} });
  assert.deepEqual(texts(state), ["state-ok: requestState verified and confirmation received"]);
  const prompt = await client.getPrompt({ name: "test_input_required_result_prompt" });
  assert.deepEqual(prompt.messages[0]?.content, { type: "text", text: "Use the following context: Ada" });
  await client.close();
});
