import assert from "node:assert/strict";
import {
  callDeadline,
  nextPageBudget,
  pageDeadline,
  timeForAnotherRequest,
} from "../../lib/http/deadline.ts";
import { requestScope } from "../../lib/http/request_scope.ts";

const settings = { timeout: 20, deadline_margin_ms: 1500 };

/** Runs `fn` inside a tool call whose deadline is `left` ms after `now`. */
function inCall<T>(now: number, left: number, fn: () => T): T {
  return requestScope.run({ fresh: false, deadline: now + left }, fn);
}

Deno.test("callDeadline() is the provider's timeout, or the call's deadline when that comes first", () => {
  assert.equal(callDeadline(1000, settings), 21_000, "outside a call");
  assert.equal(inCall(1000, 60_000, () => callDeadline(1000, settings)), 21_000);
  assert.equal(inCall(1000, 5000, () => callDeadline(1000, settings)), 6000);
  assert.equal(inCall(1000, -50, () => callDeadline(1000, settings)), 1000, "a passed deadline is now");
});

Deno.test("nextPageBudget() caps a page at the time left less the margin, and stops near the deadline", () => {
  assert.deepEqual(nextPageBudget(0, settings), { go: true }, "outside a call: no cap");
  assert.deepEqual(inCall(0, 60_000, () => nextPageBudget(0, settings)), { go: true, timeoutMs: 20_000 });
  assert.deepEqual(inCall(0, 5000, () => nextPageBudget(0, settings)), { go: true, timeoutMs: 3500 });
  assert.deepEqual(inCall(0, 3000, () => nextPageBudget(0, settings)), { go: false }, "twice the margin");
  const noMargin = { ...settings, deadline_margin_ms: 0 };
  assert.deepEqual(inCall(0, 1, () => nextPageBudget(0, noMargin)), { go: false }, "at least 1 ms");
  assert.deepEqual(inCall(0, 2, () => nextPageBudget(0, noMargin)), { go: true, timeoutMs: 2 });
});

Deno.test("pageDeadline() ends a page the margin before the call's deadline, or gives null", () => {
  assert.equal(pageDeadline(100, settings), 20_100, "outside a call: the provider's timeout");
  assert.equal(inCall(100, 60_000, () => pageDeadline(100, settings)), 20_100);
  assert.equal(inCall(100, 5000, () => pageDeadline(100, settings)), 3600);
  assert.equal(inCall(100, 3000, () => pageDeadline(100, settings)), null);
});

Deno.test("timeForAnotherRequest() wants a second and twice the slowest request left", () => {
  assert.equal(timeForAnotherRequest(0, 60_000), true, "outside a call");
  assert.equal(inCall(0, 1000, () => timeForAnotherRequest(0, 100)), true);
  assert.equal(inCall(0, 999, () => timeForAnotherRequest(0, 100)), false);
  assert.equal(inCall(0, 4000, () => timeForAnotherRequest(0, 2000)), true);
  assert.equal(inCall(0, 3999, () => timeForAnotherRequest(0, 2000)), false);
});
