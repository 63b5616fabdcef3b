// Shared pieces of the BOJ end-to-end tests.
import assert from "node:assert/strict";
import type { FakeUpstream } from "../../fakes/upstream.ts";
import { preset } from "../../harness/provider.ts";
import type { ProviderSetup } from "../../harness/provider.ts";
import type { CallToolResult } from "../../harness/sdk_client.ts";
import { payloadOf } from "../../harness/results.ts";

/** The config block pointing the boj provider at `fake`, with test-sized timings. */
export function bojConfig(fake: FakeUpstream, extra: Record<string, string | number> = {}): string {
  const settings = {
    base_url: fake.origin,
    cache_ttl: 0,
    retry_backoff_ms: 1,
    timeout: 5,
    breaker_threshold: 100,
    ...extra,
  };
  return `providers:\n  boj:\n${Object.entries(settings).map(([k, v]) => `    ${k}: ${v}`).join("\n")}\n`;
}

/**
 * The boj provider against a fake upstream (tests/harness/provider.ts), with the timings of
 * bojConfig(): no cache, and a breaker that never opens between a test's calls.
 */
export const boj: (more?: Partial<ProviderSetup>) => ProviderSetup = preset({
  provider: "boj",
  settings: { cache_ttl: 0, breaker_threshold: 100 },
});

/** Spawn arguments serving only the boj provider. */
export const BOJ_ARGS = ["--providers", "boj"];

/** The text blocks of a result. */
export function texts(result: unknown): string[] {
  return ((result as CallToolResult).content as { type: string; text: string }[]).map((c) => c.text);
}

/** The error payload of an `isError` result (_meta["opendata-mcp/error"]), asserting the contract's shape. */
export function errorPayload(result: unknown): Record<string, unknown> {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, `expected an error result, got ${JSON.stringify(r).slice(0, 400)}`);
  assert.equal(r.structuredContent, undefined);
  const payload = payloadOf(r);
  assert.equal(typeof payload.error_type, "string");
  assert.equal(typeof payload.message, "string");
  assert.equal(typeof payload.retryable, "boolean");
  return payload;
}

/** structuredContent of a successful result. */
// deno-lint-ignore no-explicit-any
export function ok(result: unknown): any {
  const r = result as CallToolResult;
  assert.notEqual(r.isError, true, `expected success, got ${texts(r).join("\n")}`);
  assert.ok(r.structuredContent, "structuredContent is present");
  return r.structuredContent;
}
