// How much of the tool call's deadline a further upstream page may use. A tool that reads
// several pages asks before each one after the first; when too little time is left it stops
// and answers with what it has and a cursor, instead of letting the client time out.
import type { Clock } from "../../clock.ts";
import { remainingMs } from "../../http/request_scope.ts";

/** Whether to fetch one more page, and the timeout that page gets so the answer still fits. */
export type PageBudget = { go: false } | { go: true; timeoutMs?: number };

/**
 * Stop when no more than twice `marginMs` is left; otherwise the page must end `marginMs`
 * before the deadline (the rest is for rendering the answer). Outside a tool call there is no
 * deadline and no cap.
 */
export function nextPageBudget(clock: Clock, marginMs: number, ownTimeoutMs: number): PageBudget {
  const left = remainingMs(clock.now());
  if (left === Infinity) return { go: true };
  if (left <= Math.max(2 * marginMs, 1)) return { go: false };
  return { go: true, timeoutMs: Math.max(1, Math.min(ownTimeoutMs, left - marginMs)) };
}
