// The log lines that tell an upstream's story (FRED's design asks to "log retry
// attempts with backoff times", docs/apis/fred.md), and the counters that go with them, through the real HttpClient against a loopback
// fake with an injected clock: each retry at info, a breaker opening and closing at warn, a
// rate-limit refusal at warn.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { UpstreamError } from "../../lib/errors.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import type { ClientOptions } from "../../lib/http/runtime.ts";
import { Logger } from "../../lib/log.ts";
import { disableMetrics, enableMetrics } from "../../lib/metrics/mod.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

function setup(fake: FakeUpstream, options: Partial<ClientOptions> = {}) {
  const clock = new FakeClock();
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({
    level: "info",
    write: (l) => lines.push(JSON.parse(l)),
    now: () => clock.now(),
  });
  const runtime = new HttpRuntime({ clock, random: () => 0.5, logger });
  const client = runtime.client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5_000,
    retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxRetries: 1 },
    secretParams: ["api_key"],
    ...options,
  });
  return { clock, lines, client };
}

async function fails(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof UpstreamError);
    return e;
  }
  return assert.fail("expected the call to fail");
}

Deno.test("HttpClient logs each retry at info with attempt, status and backoff, and counts it", async () => {
  const m = enableMetrics();
  try {
    await using fake = FakeUpstream.start([{
      path: "/data",
      reply: [{ status: 503, body: "busy" }, { json: { ok: 1 } }],
    }]);
    const { client, lines } = setup(fake);
    await client.json("/data", { query: { api_key: "SECRET-KEY-123" } });
    const retry = lines.find((l) => l["msg"] === "upstream retry");
    assert.ok(retry, "the retry is logged at the default level");
    assert.equal(retry["level"], "info");
    assert.equal(retry["attempt"], 1);
    assert.equal(retry["next_attempt"], 2);
    assert.equal(retry["status"], 503);
    assert.equal(retry["error_type"], "API_ERROR");
    assert.equal(retry["wait_ms"], 100, "the backoff");
    assert.equal(retry["backoff_from"], "policy");
    assert.match(String(retry["upstream_url"]), /api_key=\*\*\*/);
    assert.equal(
      m.upstreamRetries.labels("test", `127.0.0.1:${new URL(fake.origin).port}/data`, "503").value,
      1,
    );
  } finally {
    disableMetrics();
  }
});

Deno.test("HttpClient logs a breaker opening and closing at warn, and counts the transitions", async () => {
  const m = enableMetrics();
  try {
    let healthy = false;
    await using fake = FakeUpstream.start([{
      path: "/flaky",
      reply: () => healthy ? { json: { ok: 1 } } : { status: 500, body: "down" },
    }]);
    const { client, lines, clock } = setup(fake, {
      breaker: { threshold: 2, cooldownMs: 10_000 },
      retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    });
    const endpoint = `127.0.0.1:${new URL(fake.origin).port}/flaky`;
    await fails(client.json("/flaky"));
    assert.equal(lines.filter((l) => String(l["msg"]).startsWith("circuit breaker")).length, 0);
    await fails(client.json("/flaky"));
    const opened = lines.find((l) =>
      l["msg"] === "circuit breaker opened: calls to this endpoint are paused"
    );
    assert.ok(opened);
    assert.equal(opened["level"], "warn");
    assert.equal(opened["endpoint"], endpoint);
    assert.equal(opened["status"], 500);
    assert.equal(opened["threshold"], 2);
    assert.equal(opened["cooldown_s"], 10);
    assert.equal((await fails(client.json("/flaky"))).errorType, "CIRCUIT_OPEN");
    assert.equal(m.breakerRejections.labels("test", endpoint).value, 1);

    clock.advance(10_000);
    healthy = true;
    await client.json("/flaky");
    const closed = lines.find((l) => l["msg"] === "circuit breaker closed: the upstream answers again");
    assert.ok(closed);
    assert.equal(closed["level"], "warn");
    assert.deepEqual(
      ["open", "half_open", "closed"].map((to) => m.breakerTransitions.labels("test", endpoint, to).value),
      [1, 1, 1],
    );
  } finally {
    disableMetrics();
  }
});

Deno.test("HttpClient logs a rate-limit refusal at warn and counts it", async () => {
  const m = enableMetrics();
  try {
    await using fake = FakeUpstream.start([{ path: "/r", reply: { json: { ok: 1 } } }]);
    const { client, lines } = setup(fake, { rateLimits: [{ requests: 1, perMs: 60_000 }], timeoutMs: 1_000 });
    await client.json("/r");
    const e = await fails(client.json("/r"));
    assert.equal(e.errorType, "RATE_LIMITED");
    const refused = lines.find((l) => String(l["msg"]).startsWith("rate limit refused"));
    assert.ok(refused);
    assert.equal(refused["level"], "warn");
    assert.equal(refused["provider"], "test");
    assert.ok(Number(refused["wait_ms"]) > 1_000);
    assert.equal(m.rateLimitRefusals.labels("test").value, 1);
  } finally {
    disableMetrics();
  }
});
