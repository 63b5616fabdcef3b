// FredClient in process against the fake FRED, with a fake clock: the rate limits, retry counts,
// jittered backoff and breaker of docs/apis/fred.md ("Upstream discipline") are checked without sleeping.
import assert from "node:assert/strict";
import { FakeClock } from "../../../lib/clock.ts";
import { ToolError } from "../../../lib/errors.ts";
import { HttpRuntime, loadHttpClient } from "../../../lib/http/runtime.ts";
import { rateLimitsOf } from "../../../lib/http/settings.ts";
import { Logger } from "../../../lib/log.ts";
import {
  checkKeyFormat,
  DEMO_KEY,
  FredClient,
  fredErrorMessage,
  fredRetryPolicy,
} from "../../../lib/providers/fred/client.ts";
import { fredSpec } from "../../../lib/providers/fred/config.ts";
import type { FredSettings } from "../../../lib/providers/fred/config.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import { fredError, fredRoutes, TEST_KEY } from "./fake_fred.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

function settings(origin: string, extra: Record<string, unknown> = {}): FredSettings {
  return fredSpec.schema.parse({
    base_url: origin,
    api_key: TEST_KEY,
    cache_ttl: 0,
    ...extra,
  }) as FredSettings;
}

function setup(extra: Record<string, unknown> = {}, random = () => 0.5) {
  const fake = FakeUpstream.start(fredRoutes());
  const clock = new FakeClock();
  const lines: string[] = [];
  const logger = new Logger({ level: "debug", write: (l) => lines.push(l), secrets: [TEST_KEY] });
  const runtime = new HttpRuntime({ clock, random, logger });
  const client = new FredClient(settings(fake.origin, extra), runtime);
  return { fake, clock, lines, client };
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ToolError, String(e));
    return e;
  }
  assert.fail("expected a failure");
}

Deno.test("fredSpec defaults are 120/min, 2/s, 3 retries for 429, 2 for 5xx, breaker 5", () => {
  const s = settings("https://api.stlouisfed.org");
  assert.equal(s.rate_limit_per_minute, 120);
  assert.equal(s.rate_limit_per_second, 2);
  assert.equal(s.breaker_threshold, 5);
  assert.equal(s.timeout, 30);
  assert.equal(s.job_retention_hours, 24);
  assert.equal(s.storage_dir, "");
  assert.equal(s.project_name, "default");
  assert.equal(s.filename_pattern, "{series_id}_{operation}_{date}_{time}");
  const policy = fredRetryPolicy(s);
  assert.deepEqual(policy.retryStatuses, [429, 500, 502, 503, 504]);
  assert.deepEqual(policy.statusMaxRetries, { 429: 3, 500: 2, 502: 2, 503: 2, 504: 2 });
  assert.equal(policy.retryNetworkErrors, false);
  assert.equal(policy.jitter, 0.25);
  assert.equal(policy.maxDelayMs, 60_000);
  // 120 in any 60 s window, and 2 a second as even pacing (one every 500 ms).
  assert.deepEqual(rateLimitsOf(s), [{ requests: 120, perMs: 60_000 }, { requests: 1, perMs: 500 }]);
  assert.deepEqual(rateLimitsOf({ ...s, rate_limit_per_minute: 0, rate_limit_per_second: 0.5 }), [{
    requests: 1,
    perMs: 2000,
  }]);
  assert.deepEqual(fredRetryPolicy({ ...s, max_retries: 1 }).statusMaxRetries, {
    429: 1,
    500: 1,
    502: 1,
    503: 1,
    504: 1,
  });
  assert.deepEqual(fredSpec.secrets, ["api_key"]);
  assert.deepEqual(fredSpec.allowNet, ["api.stlouisfed.org"]);
});

Deno.test("fredSpec binds every FRED_* variable docs/apis/fred.md lists", () => {
  const names = fredSpec.env.map((b) => b.name);
  for (
    const name of [
      "FRED_API_KEY",
      "FRED_BASE_URL",
      "FRED_STORAGE_DIR",
      "FRED_PROJECT_NAME",
      "FRED_OUTPUT_MODE",
      "FRED_OUTPUT_FORMAT",
      "FRED_FILENAME_PATTERN",
      "FRED_MODEL_NAME",
      "FRED_MODEL_TOKEN_LIMIT",
      "FRED_SAFETY_MARGIN",
      "FRED_SCREEN_ROW_THRESHOLD",
      "FRED_SAFE_TOKEN_LIMIT",
      "FRED_ASSUME_CONTEXT_USED",
      "FRED_JOB_RETENTION_HOURS",
      "FRED_RATE_LIMIT_PER_MINUTE",
      "FRED_RATE_LIMIT_RETRY_DELAY",
      "FRED_MAX_RETRIES",
      "FRED_CIRCUIT_BREAKER_THRESHOLD",
    ]
  ) assert.ok(names.includes(name), name);
  const keys = Object.keys(fredSpec.defaults);
  for (const b of fredSpec.env) assert.ok(keys.includes(b.key), `${b.name} sets a known key`);
});

Deno.test("FredClient paces requests at the per-second limit", async () => {
  const { fake, clock, client } = setup({ rate_limit_per_second: 2 });
  try {
    for (let i = 0; i < 4; i++) await client.get("fred/category", { category_id: 125 });
    assert.equal(fake.requests.length, 4);
    assert.deepEqual(clock.sleeps, [500, 500, 500], "one every half second, never two at once");
  } finally {
    await fake.close();
  }
});

Deno.test("FredClient retries 429 with exponential backoff and ±25 % jitter, then succeeds", async () => {
  for (const [random, waits] of [[0.5, [1000, 2000]], [0, [750, 1500]], [0.999, [1250, 2499]]] as const) {
    const { fake, clock, client } = setup(
      { rate_limit_per_second: 0, rate_limit_per_minute: 0 },
      () => random,
    );
    try {
      fake.route({
        path: "/fred/series",
        reply: [
          fredError(429, "Too Many Requests.  Exceeded Rate Limit"),
          fredError(429, "Too Many Requests.  Exceeded Rate Limit"),
          { fixture: "fred/recorded_series_GNPCA.json" },
        ],
      });
      const r = await client.get("fred/series", { series_id: "GNPCA" });
      assert.equal((r.data as { seriess: { id: string }[] }).seriess[0]!.id, "GNPCA");
      assert.deepEqual(clock.sleeps, waits);
    } finally {
      await fake.close();
    }
  }
});

Deno.test("FredClient gives 429 three retries and 5xx two, and never retries 400 or 404", async () => {
  const { fake, client } = setup({
    rate_limit_per_second: 0,
    rate_limit_per_minute: 0,
    breaker_threshold: 100,
  });
  try {
    const count = (id: string) =>
      fake.requests.filter((r) => r.url.searchParams.get("series_id") === id).length;
    const route = (id: string, reply: ReturnType<typeof fredError>) =>
      fake.route({ path: "/fred/series", match: (r) => r.url.searchParams.get("series_id") === id, reply });

    route("R429", fredError(429, "Too Many Requests.  Exceeded Rate Limit"));
    const limited = await failure(client.get("fred/series", { series_id: "R429" }));
    assert.equal(limited.errorType, "RATE_LIMIT_EXCEEDED");
    assert.match(limited.message, /120 requests per minute/);
    assert.equal(limited.retryAfterS, 60);
    assert.equal(count("R429"), 4);

    route("R502", { status: 502, body: "Bad Gateway" });
    const server = await failure(client.get("fred/series", { series_id: "R502" }));
    assert.equal(server.errorType, "SERVER_ERROR");
    assert.equal(server.retryable, true);
    assert.equal(count("R502"), 3);

    route("R400", fredError(400, "Bad Request.  Variable series_id is not set."));
    const bad = await failure(client.get("fred/series", { series_id: "R400" }));
    assert.equal(bad.errorType, "INVALID_REQUEST");
    assert.equal(bad.message, "FRED rejected the request: Variable series_id is not set");
    assert.equal(count("R400"), 1);

    route("R404", fredError(404, "Not Found.  The series does not exist."));
    const missing = await failure(client.get("fred/series", { series_id: "R404" }));
    assert.equal(missing.errorType, "NOT_FOUND");
    assert.equal(count("R404"), 1);

    route(
      "ALFRED",
      fredError(400, "Bad Request.  The series does not exist in ALFRED but may exist in FRED."),
    );
    const alfred = await failure(client.get("fred/series", { series_id: "ALFRED" }));
    assert.match(alfred.hint ?? "", /realtime_start/);

    route("R423", { status: 423, body: "" });
    assert.equal((await failure(client.get("fred/series", { series_id: "R423" }))).errorType, "HTTP_ERROR");
  } finally {
    await fake.close();
  }
});

Deno.test("FredClient opens the circuit after breaker_threshold consecutive failures", async () => {
  const { fake, client } = setup({ rate_limit_per_second: 0, max_retries: 0, breaker_threshold: 3 });
  try {
    fake.route({ path: "/fred/series", reply: { status: 500, body: "down" } });
    for (let i = 0; i < 3; i++) {
      assert.equal((await failure(client.get("fred/series", { series_id: "X" }))).errorType, "SERVER_ERROR");
    }
    const open = await failure(client.get("fred/series", { series_id: "X" }));
    assert.equal(open.errorType, "CIRCUIT_OPEN");
    assert.equal(fake.requests.length, 3, "the open breaker sent nothing");
  } finally {
    await fake.close();
  }
});

Deno.test("FredClient keeps the key out of messages, URLs and logs, even when FRED echoes it", async () => {
  const { fake, client, lines } = setup({ rate_limit_per_second: 0 });
  try {
    fake.route({
      path: "/fred/series",
      reply: fredError(400, `Bad Request.  The value ${TEST_KEY} is not registered.`),
    });
    const e = await failure(client.get("fred/series", { series_id: "X" }));
    assert.equal(e.errorType, "INVALID_REQUEST");
    assert.ok(!JSON.stringify(e.toPayload()).includes(TEST_KEY));
    assert.match(e.message, /The value \*\*\* is not registered/);
    const ok = await client.get("fred/category", { category_id: 125 });
    assert.equal(ok.url, `${fake.origin}/fred/category?category_id=125&file_type=json`);
    assert.ok(fake.requests.every((r) => r.url.searchParams.get("api_key") === TEST_KEY));
    assert.ok(lines.length >= 2);
    for (const line of lines) assert.ok(!line.includes(TEST_KEY), line);
  } finally {
    await fake.close();
  }
});

Deno.test("FredClient without a key refuses before any request with a configuration error", async () => {
  const fake = FakeUpstream.start(fredRoutes());
  try {
    const client = new FredClient(
      settings(fake.origin, { api_key: "" }),
      new HttpRuntime({ clock: new FakeClock() }),
    );
    assert.equal(client.hasKey, false);
    const e = await failure(client.get("fred/series", { series_id: "GNPCA" }));
    assert.equal(e.errorType, "CONFIGURATION_ERROR");
    assert.match(e.hint ?? "", /FRED_API_KEY/);
    assert.equal(fake.requests.length, 0);
  } finally {
    await fake.close();
  }
});

Deno.test("checkKeyFormat() warns about a demo or malformed key without quoting it, and leaves a missing one to the provider", () => {
  assert.equal(checkKeyFormat(TEST_KEY), undefined);
  assert.equal(checkKeyFormat(""), undefined);
  assert.match(checkKeyFormat(DEMO_KEY)!, /example key/);
  const upper = "0123456789ABCDEF0123456789abcdef";
  const warning = checkKeyFormat(upper)!;
  assert.match(warning, /32 lower-case letters and digits/);
  assert.match(warning, /upper-case/);
  assert.ok(!warning.includes(upper));
  assert.match(checkKeyFormat("short")!, /5 characters/);
});

Deno.test("fredErrorMessage() reads v1 JSON, v2 JSON and XML error bodies", () => {
  assert.equal(fredErrorMessage('{"error_code":400,"error_message":"Bad Request.  x"}'), "Bad Request.  x");
  assert.equal(
    fredErrorMessage('{"code":400,"message":"release_id is not a positive integer"}'),
    "release_id is not a positive integer",
  );
  assert.equal(
    fredErrorMessage(
      '<?xml version="1.0"?>\n<error code="400" message="Bad Request.  Variable api_key has not been set."/>',
    ),
    "Bad Request.  Variable api_key has not been set.",
  );
  assert.equal(fredErrorMessage("<html>down</html>"), undefined);
  assert.equal(fredErrorMessage(undefined), undefined);
});
