import assert from "node:assert/strict";
import { mapLimit } from "../../lib/http/map_limit.ts";

Deno.test("mapLimit() keeps at most n calls in flight and the results in order", async () => {
  let inFlight = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  const done = mapLimit([1, 2, 3, 4, 5], 2, async (x) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((resolve) => gates.push(resolve));
    inFlight--;
    return x * 10;
  });
  // Release the waiting calls one at a time until all five have run.
  for (let released = 0; released < 5; released++) {
    for (let turns = 0; gates.length === 0 && turns < 100; turns++) await Promise.resolve();
    assert.ok(gates.length > 0, "a call is waiting");
    gates.shift()!();
  }
  assert.deepEqual(await done, [10, 20, 30, 40, 50]);
  assert.equal(most, 2);
});

Deno.test("mapLimit() of no items calls nothing", async () => {
  assert.deepEqual(await mapLimit([], 4, () => Promise.reject(new Error("called"))), []);
});
