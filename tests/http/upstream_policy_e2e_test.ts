// The shared HTTP client's redirect policy and per-endpoint circuit breakers, end to end: the
// real server over stdio with FRED, World Bank and BOJ pointed at loopback fakes, and a second
// loopback fake ("elsewhere", another port) that a redirect must never reach.
import assert from "node:assert/strict";
import { startInProcess } from "../harness/in_process.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredRoutes, TEST_KEY } from "../providers/fred/fake_fred.ts";

const BOJ_CODE = "/api/v1/getDataCode";
const WDS = "/api/v3/wds";

function config(fred: string, worldbank: string, boj: string): string {
  return `providers:
  fred:
    base_url: ${fred}
    api_key: ${TEST_KEY}
    rate_limit_per_minute: 0
    rate_limit_per_second: 0
    retry_backoff_ms: 5
    rate_limit_retry_delay: 0.05
    cache_ttl: 0
    max_retries: 2
    breaker_threshold: 2
  worldbank:
    base_url: ${worldbank}${WDS}
    rate_limit_per_second: 0
    max_retries: 0
  boj:
    base_url: ${boj}
    cache_ttl: 0
    retry_backoff_ms: 1
    max_retries: 1
    breaker_threshold: 2
`;
}

Deno.test("the shared client refuses off-origin redirects and keeps per-endpoint breakers, through the real server", async (t) => {
  await using elsewhere = FakeUpstream.start([{ path: /.*/, reply: { json: { stolen: true } } }]);
  await using fred = FakeUpstream.start(fredRoutes());
  await using worldbank = FakeUpstream.start([{
    path: WDS,
    reply: { status: 302, headers: { location: `${elsewhere.origin}${WDS}?format=json` } },
  }]);
  await using boj = FakeUpstream.start([
    {
      path: BOJ_CODE,
      match: (r) => r.url.searchParams.get("db") === "REDIR",
      reply: { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data/" } },
    },
    {
      path: BOJ_CODE,
      match: (r) => r.url.searchParams.get("db") === "A500",
      reply: { status: 500, fixture: "boj/json_error_500_internal.json" },
    },
    { path: "/api/v1/getMetadata", reply: { fixture: "boj/json_success_metadata_api.json" } },
  ]);
  // The red team's repro: FRED answers with the same path and query (api_key included) on
  // another loopback port.
  fred.route({
    path: "/fred/series",
    reply: (r) => ({ status: 302, headers: { location: `${elsewhere.origin}/fred/series${r.url.search}` } }),
  });
  // A redirect within the configured origin is still followed, key and all.
  fred.route({
    path: "/fred/category",
    match: (r) => !r.url.searchParams.has("moved"),
    reply: (r) => ({ status: 301, headers: { location: `/fred/category${r.url.search}&moved=1` } }),
  });
  fred.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "DOWN",
    reply: { status: 500, json: { error_code: 500, error_message: "Internal Server Error." } },
  });
  await using s = await startInProcess({
    args: ["--providers", "fred,worldbank,boj"],
    configYaml: config(fred.origin, worldbank.origin, boj.origin),
  });
  const call = (name: string, args: Record<string, unknown>) => s.client.callTool({ name, arguments: args });
  const outputs: string[] = [];
  const fail = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const r = await call(name, args);
    outputs.push(JSON.stringify(r));
    return errorOf(r);
  };

  await t.step("FRED: a redirect to another loopback port is refused and the key never leaves", async () => {
    const e = await fail("fred_series", { operation: "get", series_id: "GNPCA", output: "screen" });
    assert.equal(e["error_type"], "UPSTREAM_REDIRECT_REFUSED");
    assert.equal(e["status"], 302);
    assert.equal(e["retryable"], false);
    assert.match(
      String(e["message"]),
      new RegExp(
        `FRED API redirected to another host \\("127\\.0\\.0\\.1:${new URL(elsewhere.origin).port}"\\)`,
      ),
    );
    assert.match(String(e["hint"]), /base_url/);
    assert.equal(elsewhere.requests.length, 0, "the other port was never contacted");
    assert.equal(fred.requestsTo("/fred/series").length, 1, "a refused redirect is not retried");
  });

  await t.step("FRED: a redirect within the configured origin is followed", async () => {
    const r = await call("fred_category", { operation: "get", category_id: 125, output: "screen" });
    ok(r);
    const moved = fred.requestsTo("/fred/category").filter((q) => q.url.searchParams.has("moved"));
    assert.equal(moved.length, 1);
    assert.equal(moved[0]!.url.searchParams.get("api_key"), TEST_KEY, "same origin: the key goes along");
  });

  await t.step("World Bank: a redirect to another origin is refused", async () => {
    const e = await fail("worldbank_search_documents", { query: "post office" });
    assert.equal(e["error_type"], "UPSTREAM_REDIRECT_REFUSED");
    assert.equal(elsewhere.requests.length, 0);
  });

  await t.step("BOJ: a redirect to the cloud metadata address is refused and says why", async () => {
    const e = await fail("boj_get_data_code", { db: "REDIR", codes: ["TK99F1000601GCQ01000"] });
    assert.equal(e["error_type"], "UPSTREAM_REDIRECT_REFUSED");
    assert.equal(e["status"], 307);
    assert.match(String(e["message"]), /"169\.254\.169\.254" is the cloud metadata service address/);
  });

  await t.step("FRED: the breaker counts failed calls, not attempts, per endpoint family", async () => {
    const down = { operation: "get_observations", series_id: "DOWN", output: "screen" };
    const downSent = () =>
      fred.requestsTo("/fred/series/observations").filter((q) =>
        q.url.searchParams.get("series_id") === "DOWN"
      )
        .length;
    const first = await fail("fred_series", down);
    assert.equal(first["error_type"], "SERVER_ERROR");
    assert.equal(downSent(), 3, "one call: an attempt and two retries");
    assert.equal(
      (await fail("fred_series", down))["error_type"],
      "SERVER_ERROR",
      "3 failures did not open it",
    );
    assert.equal(downSent(), 6);
    const open = await fail("fred_series", down);
    assert.equal(open["error_type"], "CIRCUIT_OPEN", "two failed calls opened it (breaker_threshold 2)");
    assert.equal(open["status"], 500, "the open circuit still reports the upstream's status");
    assert.equal(open["retryable"], true);
    assert.ok(Number(open["retry_after_s"]) > 50, `retry_after_s ${open["retry_after_s"]}`);
    assert.match(String(open["message"]), /last failure: HTTP 500.*"127\.0\.0\.1:\d+\/fred\/series"/);
    assert.equal(downSent(), 6, "nothing was sent while open");
    // Categories are another endpoint family: unaffected.
    ok(await call("fred_category", { operation: "get", category_id: 125, output: "screen" }));
  });

  await t.step(
    "BOJ: an open breaker keeps the last status and MESSAGEID; other endpoints still answer",
    async () => {
      const args = { db: "A500", codes: ["TK99F1000601GCQ01000"] };
      for (let i = 0; i < 2; i++) {
        const e = await fail("boj_get_data_code", args);
        assert.deepEqual([e["error_type"], e["status"], e["message_id"]], ["API_ERROR", 500, "M181090S"]);
      }
      assert.equal(boj.requestsTo(BOJ_CODE).filter((q) => q.url.searchParams.get("db") === "A500").length, 4);
      const open = await fail("boj_get_data_code", args);
      assert.deepEqual(
        [open["error_type"], open["status"], open["message_id"], open["retryable"]],
        ["API_ERROR", 500, "M181090S", true],
        "not a bare TRANSPORT_ERROR",
      );
      assert.match(String(open["message"]), /failing repeatedly \(last failure: HTTP 500 M181090S\)/);
      assert.equal(typeof open["retry_after_s"], "number");
      assert.equal(boj.requestsTo(BOJ_CODE).filter((q) => q.url.searchParams.get("db") === "A500").length, 4);
      ok(await call("boj_get_metadata", { db: "FM01" }));
    },
  );

  assert.ok(!outputs.join("\n").includes(TEST_KEY), "the key appears in no result");
  assert.ok(!s.stderr().includes(TEST_KEY), "nor in the server's log");
});
