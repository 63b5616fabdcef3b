// A tool call's one deadline (tool_call.ts runs the call): when it falls, on a timer every call of
// that length shares; the signal the handler gets; the race that ends a handler still running; and
// the TIMEOUT a call at its deadline answers with.
import { systemClock } from "../clock.ts";
import { DeadlineWheel } from "../deadline_wheel.ts";
import type { ErrorPayload } from "../errors.ts";
import type { McpExtra } from "./provider.ts";
import type { CallToolOptions } from "./server_options.ts";
import { DEFAULT_CALL_TIMEOUT_MS } from "./server_options.ts";

/** The call's deadline: when it falls, the signal the handler gets, and what ends it. */
export interface CallDeadline {
  timeoutMs: number;
  /** The clock time upstream requests must end by. */
  at: number;
  /** Why the call ended at its deadline, once it has fallen. */
  reason: DOMException | undefined;
  /** Rejects the race under way (see {@linkcode raceDeadline}) when the deadline falls. */
  onFall: ((reason: DOMException) => void) | undefined;
  /**
   * Aborts at the deadline or when the client cancels; made on first use, with what it combines:
   * a handler that never reads it (an echo, an answer from memory) costs no signals.
   */
  readonly signal: AbortSignal;
  /** Ends the deadline: the call is answered. */
  cancel: () => void;
  /** Whether the deadline has come: fallen, or due though its timer has not run yet. */
  due(): boolean;
}

/**
 * The shared timers of call deadlines, one per length (a server has two: its calls' and the rounds
 * of tasks): a timer set and cleared per call cost each call about 9 µs in the running handler
 * (docs/BENCHMARKS.md). A deadline falls at most a tenth of a second late (a failure at the
 * deadline itself, such as the upstream request's timeout, is answered as the deadline: `due()`),
 * and, like the timer it replaces, keeps the process alive while a call runs.
 */
const wheels = new Map<number, DeadlineWheel>();
const CALL_DEADLINE_TICK_MS = 100;
/** How early a failure may come and still be the deadline's (see `due()`). */
const DUE_SLACK_MS = 2;

function wheelOf(ms: number): DeadlineWheel {
  let wheel = wheels.get(ms);
  if (!wheel) {
    wheel = new DeadlineWheel(ms, { maxTickMs: CALL_DEADLINE_TICK_MS, keepsAlive: true });
    // Lengths come from configuration: a handful at most. Past that, a wheel per call still works.
    if (wheels.size < 16) wheels.set(ms, wheel);
  }
  return wheel;
}

/** Starts the call's one deadline, covering every retry and upstream request the call makes. */
export function startDeadline(extra: McpExtra, options: CallToolOptions): CallDeadline {
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  const started = performance.now();
  let expired: AbortController | undefined;
  let signal: AbortSignal | undefined;
  const deadline: CallDeadline = {
    timeoutMs,
    at: clock.now() + timeoutMs,
    reason: undefined,
    onFall: undefined,
    get signal(): AbortSignal {
      if (!signal) {
        expired = new AbortController();
        if (deadline.reason) expired.abort(deadline.reason);
        signal = AbortSignal.any([extra.mcpReq.signal, expired.signal]);
      }
      return signal;
    },
    cancel: wheelOf(timeoutMs).after(() => {
      const reason = deadline.reason = new DOMException("The call reached its deadline", "TimeoutError");
      expired?.abort(reason);
      deadline.onFall?.(reason);
    }),
    // In real time, as the timers that end the call's upstream requests run; those are sized from
    // the clock's whole milliseconds (`at`), so they may fire up to a millisecond sooner.
    due: () => deadline.reason !== undefined || performance.now() - started >= timeoutMs - DUE_SLACK_MS,
  };
  return deadline;
}

/** Settles with `work`, or rejects as soon as `deadline` falls (the handler is told through its signal). */
export function raceDeadline<T>(work: Promise<T>, deadline: CallDeadline): Promise<T> {
  if (deadline.reason) return Promise.reject(deadline.reason);
  return new Promise<T>((resolve, reject) => {
    deadline.onFall = reject;
    work.then(resolve, reject).finally(() => deadline.onFall = undefined);
  });
}

/** The TIMEOUT of a call that reached the server's per-call deadline, with how to ask for less. */
export function deadlinePayload(callTimeoutMs: number): ErrorPayload {
  const s = Math.round(callTimeoutMs / 100) / 10;
  return {
    error_type: "TIMEOUT",
    message: `The call did not finish within the server's ${s} s per-call deadline`,
    retryable: true,
    hint:
      "Ask for less in one call (a smaller limit, a narrower area, filter or date range), continue from " +
      "the last cursor or offset, or use file output or a background job where the tool offers one",
  };
}
