// FRED's client-side rate limit through the real server: a call whose slot in the 60 s window
// would start after the tool call's deadline fails at once with FRED's RATE_LIMIT_EXCEEDED
// and the real wait, instead of queueing until the deadline.
import assert from "node:assert/strict";
import { startInProcess } from "../harness/in_process.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";

Deno.test("FRED rate limit: past the call's deadline the call fails at once with RATE_LIMIT_EXCEEDED and the real wait", async () => {
  await using fake = startFakeFred();
  // FRED's own timeout (120 s) would allow waiting for the slot; the tool call's (20 s) does not.
  const configYaml = "server:\n  call_timeout: 20\n" +
    fredConfig(fake.origin, { rate_limit_per_minute: 2, rate_limit_per_second: 0, timeout: 120 });
  await using s = await startInProcess({ args: ["--providers", "fred"], configYaml });
  const get = () =>
    s.client.callTool({
      name: "fred_category",
      arguments: { operation: "get", category_id: 125, output: "screen" },
    });
  ok(await get());
  ok(await get());
  const e = errorOf(await get());
  assert.equal(e["error_type"], "RATE_LIMIT_EXCEEDED");
  assert.equal(e["retryable"], true);
  const wait = Number(e["retry_after_s"]);
  assert.ok(wait > 40 && wait <= 60, `retry_after_s is the wait for the window (${wait})`);
  assert.match(String(e["message"]), /next free slot is in \d+ s, past this call's deadline/);
  assert.match(String(e["hint"]), new RegExp(`Wait ${wait} seconds`));
  assert.equal(fake.requestsTo("/fred/category").length, 2, "the third request was never sent");
});
