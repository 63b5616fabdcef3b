// The sliding-window rate limiter, in process: many concurrent calls through HttpClient to a
// loopback fake under virtual time (every wait overlaps as in real time), counting when each
// request reaches the fake. FRED's numbers (docs/apis/fred.md): 120 in any 60 s window, about 2 a second.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { UpstreamError } from "../../lib/errors.ts";
import { MemoryRateWindowStore, RateLimiter, RateLimitWaitError } from "../../lib/http/rate_limiter.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { rateLimitsOf } from "../../lib/http/settings.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { runVirtual, VirtualClock } from "./_virtual_clock.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

interface Burst {
  /** When each request reached the fake, in ms after the start. */
  arrivals: number[];
  /** When each refused call failed, in ms after the start, with its error. */
  refusals: { at: number; error: UpstreamError }[];
}

async function burst(
  limits: { perMinute: number; perSecond: number },
  calls: number,
  timeoutMs: number,
): Promise<Burst> {
  const clock = new VirtualClock();
  const start = clock.now();
  const arrivals: number[] = [];
  await using fake = FakeUpstream.start([{
    path: "/r",
    reply: () => {
      arrivals.push(clock.now() - start);
      return { json: 1 };
    },
  }]);
  const runtime = new HttpRuntime({ clock, random: () => 0.5 });
  const client = runtime.client({
    provider: "t",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, maxRetries: 0 },
    rateLimits: rateLimitsOf({
      rate_limit_per_minute: limits.perMinute,
      rate_limit_per_second: limits.perSecond,
    }),
  });
  const refusals: Burst["refusals"] = [];
  let open = calls;
  const all = Array.from({ length: calls }, () =>
    client.json("/r").catch((e: unknown) => {
      assert.ok(e instanceof UpstreamError, String(e));
      refusals.push({ at: clock.now() - start, error: e });
    }).finally(() => open--));
  await runVirtual(clock, () => open);
  await Promise.all(all);
  return { arrivals: arrivals.sort((a, b) => a - b), refusals };
}

function before(arrivals: number[], ms: number): number {
  return arrivals.filter((t) => t < ms).length;
}

/** The most requests in any window of `ms` (half-open: a request at t and one at t + ms do not share one). */
function mostInAnyWindow(arrivals: number[], ms: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (arrivals[i]! - arrivals[j]! >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

Deno.test("RateLimiter with FRED's limits (120/min, 2/s) lets 2 through in the first second, 10 in five, 120 in any minute", async () => {
  const { arrivals, refusals } = await burst({ perMinute: 120, perSecond: 2 }, 200, 3_600_000);
  assert.equal(refusals.length, 0);
  assert.equal(arrivals.length, 200);
  assert.equal(before(arrivals, 1000), 2, "the token bucket let 3 (4 by t = 1 s) through");
  assert.equal(before(arrivals, 5000), 10, "the token bucket let 11 through");
  assert.equal(mostInAnyWindow(arrivals, 1000), 2);
  assert.equal(mostInAnyWindow(arrivals, 60_000), 120, "the token bucket let 121 through");
  assert.deepEqual(arrivals.slice(0, 4), [0, 500, 1000, 1500], "evenly paced");
});

Deno.test("RateLimiter with only a per-minute limit allows a burst but never 121 in a 60 s window", async () => {
  const { arrivals } = await burst({ perMinute: 120, perSecond: 0 }, 200, 3_600_000);
  assert.equal(before(arrivals, 1000), 120);
  assert.equal(before(arrivals, 5000), 120, "the token bucket let 129 through by 5 s");
  assert.equal(mostInAnyWindow(arrivals, 60_000), 120, "the token bucket let 200 through within 60 s");
  assert.equal(arrivals[120], 60_000, "the 121st starts when the first leaves the window");
});

Deno.test("RateLimiter refuses at once, with the real wait, every call whose slot is past its deadline", async () => {
  const { arrivals, refusals } = await burst({ perMinute: 120, perSecond: 2 }, 100, 30_000);
  // Slots every 500 ms: 0 … 29,500 ms fit a 30 s deadline, the rest do not.
  assert.equal(arrivals.length, 60);
  assert.equal(refusals.length, 40);
  for (const { at, error } of refusals) {
    assert.equal(at, 0, "refused without waiting");
    assert.equal(error.errorType, "RATE_LIMITED");
    assert.equal(error.retryable, true);
  }
  // Refused calls reserve nothing, so each is told when the next free slot opens: 30 s on.
  assert.deepEqual(
    new Set(refusals.map((r) => r.error.retryAfterS)),
    new Set([30]),
    "the real wait, not 1 s",
  );
  assert.match(refusals[0]!.error.message, /next free slot is in \d+ s, past this call's deadline/);
});

Deno.test("RateLimiter gives back the slot of a caller that cancels while waiting", async () => {
  const clock = new VirtualClock();
  const store = new MemoryRateWindowStore();
  const limiter = new RateLimiter([{ requests: 1, perMs: 1000 }], clock, { store, key: "k" });
  await limiter.acquire(clock.now() + 10_000);
  const controller = new AbortController();
  const waiting = limiter.acquire(clock.now() + 10_000, controller.signal);
  assert.equal(store.count("k", clock.now()), 2, "the second slot is reserved");
  controller.abort(new Error("gone"));
  await assert.rejects(waiting, /gone/);
  assert.equal(store.count("k", clock.now()), 1, "and given back");
});

Deno.test("RateLimiter reserves nothing when it refuses", async () => {
  const clock = new FakeClock();
  const store = new MemoryRateWindowStore();
  const limiter = new RateLimiter([{ requests: 2, perMs: 60_000 }], clock, { store, key: "k" });
  await limiter.acquire(clock.now() + 1000);
  await limiter.acquire(clock.now() + 1000);
  await assert.rejects(limiter.acquire(clock.now() + 1000), (e: unknown) => {
    assert.ok(e instanceof RateLimitWaitError);
    assert.equal(e.waitMs, 60_000);
    return true;
  });
  assert.equal(store.count("k", clock.now()), 2);
  assert.deepEqual(clock.sleeps, []);
});

Deno.test("MemoryRateWindowStore windows are half-open: a start leaves the window exactly perMs later", () => {
  const store = new MemoryRateWindowStore();
  const limits = [{ requests: 2, perMs: 1000 }];
  assert.deepEqual(store.reserve("k", limits, 0, Infinity), { at: 0, reserved: true });
  assert.deepEqual(store.reserve("k", limits, 400, Infinity), { at: 400, reserved: true });
  assert.deepEqual(store.reserve("k", limits, 500, Infinity), { at: 1000, reserved: true });
  assert.deepEqual(store.reserve("k", limits, 500, 1399), { at: 1400, reserved: false });
  assert.deepEqual(
    store.reserve("other", limits, 500, Infinity),
    { at: 500, reserved: true },
    "keys are separate",
  );
});
