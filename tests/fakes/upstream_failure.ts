// For tests of the shared HTTP client: the UpstreamError a call fails with.
import assert from "node:assert/strict";
import { UpstreamError } from "../../lib/errors.ts";

/** Awaits `p` and returns the {@linkcode UpstreamError} it rejects with; fails the test otherwise. */
export async function upstreamFailure(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof UpstreamError, String(e));
    return e;
  }
  assert.fail("expected a failure");
}
