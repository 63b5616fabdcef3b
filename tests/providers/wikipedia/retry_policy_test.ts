// The retry policy (3 attempts in all, docs/apis/wikipedia.md and docs/apis/snl.md) and the tool call's
// deadline, for the two providers whose clients compute their own per-call deadline (Wikipedia and SNL):
// one server serves both.
import assert from "node:assert/strict";
import { FakeClock } from "../../../lib/clock.ts";
import { requestScope } from "../../../lib/http/request_scope.ts";
import { HttpRuntime, loadHttpClient } from "../../../lib/http/runtime.ts";
import { SnlApi } from "../../../lib/providers/snl/client.ts";
import { snlSpec } from "../../../lib/providers/snl/config.ts";
import { WikipediaApi } from "../../../lib/providers/wikipedia/client.ts";
import { wikipediaSpec } from "../../../lib/providers/wikipedia/config.ts";
import { startInProcess } from "../../harness/in_process.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import { errorOf } from "../../harness/results.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

Deno.test("wikipediaSpec and snlSpec default to 2 retries: 3 attempts in all", () => {
  assert.equal(wikipediaSpec.schema.parse({}).max_retries, 2);
  assert.equal(snlSpec.schema.parse({}).max_retries, 2);
});

Deno.test("WikipediaApi.deadline() and SnlApi.deadline() end no later than the tool call's deadline", () => {
  const clock = new FakeClock();
  const http = new HttpRuntime({ clock });
  const wiki = new WikipediaApi(wikipediaSpec.schema.parse({ timeout: 30 }), http, clock);
  const snl = new SnlApi(snlSpec.schema.parse({ timeout: 30 }), http, clock);
  const now = clock.now();
  // Outside a call (a background job) the provider's own timeout applies.
  assert.equal(wiki.deadline(), now + 30_000);
  assert.equal(snl.deadline(), now + 30_000);
  requestScope.run({ fresh: false, deadline: now + 2_000 }, () => {
    assert.equal(wiki.deadline(), now + 2_000);
    assert.equal(snl.deadline(), now + 2_000);
  });
  requestScope.run({ fresh: false, deadline: now + 60_000 }, () => {
    assert.equal(wiki.deadline(), now + 30_000, "the provider's timeout when it comes first");
  });
});

Deno.test("wikipedia and snl tools make 3 attempts by default and wait for maxlag only within the call's deadline", async () => {
  await using fake = FakeUpstream.start([
    { path: "/w/api.php", match: (r) => r.url.searchParams.get("titles") === "Nede", reply: { status: 503 } },
    {
      path: "/w/api.php",
      match: (r) => r.url.searchParams.get("titles") === "Etterslep",
      reply: {
        json: { error: { code: "maxlag", info: "Waiting for a database server: 7 seconds lagged.", lag: 7 } },
        headers: { "retry-after": "10" },
      },
    },
    { path: "/api/v1/search", reply: { status: 503 } },
  ]);
  // No max_retries: the defaults are under test. The call deadline (3 s) comes before the
  // providers' own timeout (30 s).
  const configYaml = [
    "server:",
    "  call_timeout: 3",
    "providers:",
    "  wikipedia:",
    `    base_url: ${fake.origin}`,
    "    retry_backoff_ms: 1",
    "    timeout: 30",
    // Both providers share the fake's host, and so its breaker.
    "    breaker_threshold: 100",
    "  snl:",
    `    base_url: ${fake.origin}`,
    "    retry_backoff_ms: 1",
    "    timeout: 30",
    // Both providers share the fake's host, and so its breaker.
    "    breaker_threshold: 100",
  ].join("\n");
  await using s = await startInProcess({ args: ["--providers", "wikipedia,snl"], configYaml });

  const wiki = errorOf(await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Nede" } }));
  assert.deepEqual([wiki["error_type"], wiki["status"]], ["API_ERROR", 503]);
  assert.equal(
    fake.requests.filter((r) => r.url.searchParams.get("titles") === "Nede").length,
    3,
    "3 attempts",
  );
  const snl = errorOf(await s.client.callTool({ name: "snl-search", arguments: { query: "nede" } }));
  assert.deepEqual([snl["error_type"], snl["status"]], ["API_ERROR", 503]);
  assert.equal(fake.requestsTo("/api/v1/search").length, 3, "3 attempts");

  // Retry-After 10 s fits the 30 s provider timeout but not the 3 s call: say when to come back
  // at once, rather than wait until the core gives up with a TIMEOUT.
  const lag = errorOf(
    await s.client.callTool({ name: "wikipedia-summary", arguments: { title: "Etterslep" } }),
  );
  assert.equal(lag["error_type"], "RATE_LIMITED");
  assert.equal(lag["retry_after_s"], 10);
  assert.equal(lag["message_id"], "maxlag");
  assert.equal(fake.requests.filter((r) => r.url.searchParams.get("titles") === "Etterslep").length, 1);
});
