import assert from "node:assert/strict";
import { runCli, startStdio } from "../harness/spawn.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

Deno.test("notifications/cancelled aborts the upstream fetch in flight", async () => {
  await using fake = FakeUpstream.start([{ path: "/api/v3/wds", reply: { json: {}, delayMs: 3000 } }]);
  await using s = await startStdio({
    args: ["--providers", "worldbank"],
    configYaml: `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n    timeout: 20\n`,
  });
  const controller = new AbortController();
  const call = s.client.callTool(
    { name: "worldbank_search_documents", arguments: { query: "water" } },
    undefined,
    { signal: controller.signal },
  );
  for (let i = 0; i < 100 && fake.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await assert.rejects(call);
  let cancelled = false;
  for (let i = 0; i < 100 && !cancelled; i++) {
    await new Promise((r) => setTimeout(r, 10));
    cancelled = s.stderr().split("\n").filter(Boolean).some((l) => {
      const line = JSON.parse(l);
      return line.msg === "upstream" && line.error === "CANCELLED";
    });
  }
  assert.ok(cancelled, "the server logged the upstream call as cancelled, well before the 3 s reply");
});

Deno.test("a base_url outside the network allowlist fails at start-up with exit 2 and the fix", async () => {
  const r = await runCli(["tools", "--providers", "worldbank"], {
    exactPermissions: true,
    env: { WORLDBANK_BASE_URL: "http://10.11.12.13:9999/api" },
  });
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /"10.11.12.13:9999" of providers.worldbank.base_url is outside this process's network allowlist/,
  );
  assert.match(r.stderr, /--allow-net=10.11.12.13:9999/);
});

Deno.test("upstream log lines carry the call's request_id and tool_name", async () => {
  await using fake = FakeUpstream.start([{ path: "/api/v3/wds", reply: { status: 503 } }]);
  await using s = await startStdio({
    args: ["--providers", "worldbank"],
    configYaml:
      `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n    max_retries: 0\n    timeout: 5\n`,
  });
  const result = await s.client.callTool({ name: "worldbank_search_documents", arguments: { query: "x" } });
  assert.equal(result.isError, true);
  const lines = s.stderr().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const upstream = lines.find((l) => l.msg === "upstream");
  const call = lines.find((l) => l.msg === "tool call");
  assert.equal(upstream?.tool_name, "worldbank_search_documents");
  assert.equal(upstream?.request_id, call?.request_id);
  assert.equal(upstream?.status, 503);
  assert.equal(call?.status, "error");
  assert.equal(call?.error_type, "API_ERROR");
});

Deno.test("fresh: true bypasses the response cache for every upstream request of the call", async () => {
  await using fake = FakeUpstream.start([{
    path: "/api/v3/wds",
    reply: { fixture: "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json" },
  }]);
  await using s = await startStdio({
    args: ["--providers", "worldbank"],
    configYaml: `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n    cache_ttl: 3600\n`,
  });
  const args = { query: "post office", limit: 1 };
  const first = await s.client.callTool({ name: "worldbank_search_documents", arguments: args });
  assert.equal(first.isError, undefined);
  await s.client.callTool({ name: "worldbank_search_documents", arguments: args });
  assert.equal(fake.requests.length, 1, "the second call is served from the cache");
  const fresh = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { ...args, fresh: true },
  });
  assert.equal(fresh.isError, undefined);
  assert.equal(fake.requests.length, 2, "fresh: true went to the upstream again");
  const caches = s.stderr().split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((l) =>
    l.msg === "upstream"
  )
    .map((l) => l.cache);
  assert.deepEqual(caches, ["miss", "hit", "bypass"]);
});

Deno.test("a tool call answers a structured TIMEOUT at the per-call deadline, under the provider's longer timeout", async () => {
  await using fake = FakeUpstream.start([{ path: "/api/v3/wds", reply: { json: {}, delayMs: 10_000 } }]);
  await using s = await startStdio({
    args: ["--providers", "worldbank"],
    env: { MCP_CALL_TIMEOUT: "0.5" },
    configYaml: `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n    timeout: 30\n`,
  });
  const result = await s.client.callTool({ name: "worldbank_search_documents", arguments: { query: "x" } });
  assert.equal(result.isError, true);
  const payload =
    (result._meta as Record<string, { error_type: string; message: string }>)["opendata-mcp/error"];
  assert.equal(payload?.error_type, "TIMEOUT");
  assert.match(
    payload?.message ?? "",
    /within the server.s 0\.5 s per-call deadline/,
    "the call.s own deadline",
  );
  assert.equal(fake.requests.length, 1, "no retry was started past the call's deadline");
});
