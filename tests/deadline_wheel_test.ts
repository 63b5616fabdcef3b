// The shared timer of the POST body deadlines and the tool call deadlines (lib/deadline_wheel.ts),
// driven by hand.
import assert from "node:assert/strict";
import { DeadlineWheel } from "../lib/deadline_wheel.ts";

/** A wheel on a hand-moved clock and a hand-fired interval, with how many intervals it set. */
function handWheel(ms: number): { wheel: DeadlineWheel; advance(byMs: number): void; timers: () => number } {
  let now = 0;
  let fire: (() => void) | undefined;
  let set = 0;
  const wheel = new DeadlineWheel(ms, {
    now: () => now,
    every: (_tick, fn) => {
      set++;
      fire = fn;
      return () => {
        fire = undefined;
      };
    },
  });
  return {
    wheel,
    advance(byMs) {
      now += byMs;
      fire?.();
    },
    timers: () => set,
  };
}

Deno.test("DeadlineWheel.after() runs a deadline once it is due, and never once cancelled", () => {
  const { wheel, advance } = handWheel(30_000);
  const fell: string[] = [];
  wheel.after(() => fell.push("a"));
  const cancelB = wheel.after(() => fell.push("b"));
  advance(10_000);
  wheel.after(() => fell.push("c"));
  cancelB();
  advance(19_999);
  assert.deepEqual(fell, [], "nothing falls before its time");
  advance(1);
  assert.deepEqual(fell, ["a"], "a falls at 30 s; b was cancelled");
  advance(10_000);
  assert.deepEqual(fell, ["a", "c"], "c falls 30 s after it started, once");
  advance(60_000);
  assert.deepEqual(fell, ["a", "c"]);
});

Deno.test("DeadlineWheel.after() shares one timer among the deadlines of many requests, and stops it when idle", () => {
  const { wheel, advance, timers } = handWheel(30_000);
  for (let i = 0; i < 100; i++) wheel.after(() => {})();
  assert.equal(timers(), 1, "one timer for a hundred deadlines");
  assert.ok(wheel.running);
  advance(1000);
  assert.equal(wheel.running, false, "a tick with nothing pending stops the timer");
  wheel.after(() => {});
  assert.equal(timers(), 2, "the next deadline starts it again");
  wheel.stop();
  assert.equal(wheel.running, false);
});

Deno.test("DeadlineWheel ticks a twentieth of its length, within 10 ms and maxTickMs", () => {
  const tickOf = (ms: number, maxTickMs?: number): number => {
    let tick = 0;
    const wheel = new DeadlineWheel(ms, {
      now: () => 0,
      every: (t) => {
        tick = t;
        return () => {};
      },
      ...(maxTickMs ? { maxTickMs } : {}),
    });
    wheel.after(() => {})();
    return tick;
  };
  assert.equal(tickOf(2_000), 100);
  assert.equal(tickOf(100), 10);
  assert.equal(tickOf(60_000), 1_000, "at most a second by default");
  assert.equal(tickOf(45_000, 100), 100, "a tool call's deadline falls at most 100 ms late");
});
