// Deadline arithmetic for a tool call that makes one or several upstream requests. A tool that
// reads several pages asks before each one after the first; when too little time is left it
// stops and answers with what it has and a way to continue, instead of letting the client time
// out. The provider's settings give the numbers; the call's deadline comes from the request scope.
import { remainingMs } from "./request_scope.ts";

/** The provider settings that time a call's pages. */
export interface PageTiming {
  /** Seconds one upstream request may take (the provider's `timeout`). */
  timeout: number;
  /** Time kept before the call's deadline for rendering the answer. */
  deadline_margin_ms: number;
}

/** Whether to fetch one more page, and the timeout that page gets so the answer still fits. */
export type PageBudget = { go: false } | { go: true; timeoutMs?: number };

/**
 * A deadline for one tool call, covering every request and retry it makes: the provider's
 * `timeout`, or the tool call's own deadline when that comes first.
 */
export function callDeadline(now: number, settings: Pick<PageTiming, "timeout">): number {
  return now + Math.min(settings.timeout * 1000, Math.max(0, remainingMs(now)));
}

/**
 * Stop when no more than twice the margin is left; otherwise the page must end the margin
 * before the deadline (the rest is for rendering the answer). Outside a tool call there is no
 * deadline and no cap.
 */
export function nextPageBudget(now: number, settings: PageTiming): PageBudget {
  const left = pageTimeMs(now, settings.deadline_margin_ms);
  if (left === null) return { go: false };
  if (left === Infinity) return { go: true };
  return { go: true, timeoutMs: Math.max(1, Math.min(settings.timeout * 1000, left)) };
}

/**
 * The deadline of one more page of a multi-page answer, ending the margin before the call's
 * deadline and no later than the provider's `timeout` from now; null when too little time is
 * left for it.
 */
export function pageDeadline(now: number, settings: PageTiming): number | null {
  const left = pageTimeMs(now, settings.deadline_margin_ms);
  return left === null ? null : now + Math.min(settings.timeout * 1000, left);
}

/** Time a further page may take, the margin kept; null when no more than twice the margin is left. */
function pageTimeMs(now: number, marginMs: number): number | null {
  const left = remainingMs(now);
  if (left === Infinity) return Infinity;
  if (left <= Math.max(2 * marginMs, 1)) return null;
  return left - marginMs;
}

/**
 * Whether one more request of a multi-page answer still fits before the call's deadline: at
 * least a second, and twice the slowest request so far, must be left. Always true outside a call.
 */
export function timeForAnotherRequest(now: number, slowestMs: number): boolean {
  return remainingMs(now) >= Math.max(1000, 2 * slowestMs);
}
