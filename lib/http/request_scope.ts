import { AsyncLocalStorage } from "node:async_hooks";

/** What one tool call asks of every upstream request it makes. */
export interface RequestScope {
  /** Bypass the response cache (the `fresh` argument); answers are still stored. */
  fresh: boolean;
}

/**
 * The scope of the tool call in progress. The core sets it around each handler, so a caller's
 * `fresh: true` reaches every upstream request the call makes (background jobs it starts
 * included) without each provider passing it along.
 */
export const requestScope: AsyncLocalStorage<RequestScope> = new AsyncLocalStorage<RequestScope>();
