import assert from "node:assert/strict";
import { ToolError, UpstreamError } from "../../../lib/errors.ts";
import { backoffDelay, retriesFor } from "../../../lib/http/retry.ts";
import { apiError, bojRetryPolicy, toBojError } from "../../../lib/providers/boj/client.ts";
import { fixtureText } from "../../fakes/upstream.ts";

Deno.test("bojRetryPolicy() retries 500 and 503 only, with initial_backoff_ms * 2^n and no jitter", () => {
  const policy = bojRetryPolicy({ max_retries: 2, retry_backoff_ms: 200 });
  assert.equal(retriesFor(policy, 500), 2);
  assert.equal(retriesFor(policy, 503), 2);
  for (const status of [400, 404, 429, 502, 504]) {
    assert.equal(retriesFor(policy, status), 0, `status ${status}`);
  }
  assert.equal(policy.retryNetworkErrors, true);
  const random = () => 0.99;
  assert.deepEqual([1, 2, 3].map((n) => backoffDelay(policy, n, random)), [200, 400, 800]);
});

function upstream(errorType: string, options: Partial<ConstructorParameters<typeof UpstreamError>[2]> = {}) {
  return new UpstreamError(errorType, `upstream ${errorType}`, { provider: "boj", ...options });
}

Deno.test("toBojError() turns an HTTP error with a BOJ body into API_ERROR with its message id", () => {
  const e = toBojError(
    upstream("API_ERROR", { status: 400, body: fixtureText("boj/json_error_400_invalid_db.json") }),
    { endpoint: "getDataCode" },
  ) as ToolError;
  assert.equal(e.errorType, "API_ERROR");
  assert.equal(e.status, 400);
  assert.equal(e.messageId, "M181005E");
  assert.equal(e.retryable, false);
  assert.match(e.message, /M181005E: "DB名が正しくありません" \(Invalid database name\)/);
  assert.match(e.hint ?? "", /boj_list_databases/);
});

Deno.test("toBojError() marks BOJ 500 and 503 retryable and keeps Retry-After", () => {
  const e500 = toBojError(
    upstream("API_ERROR", { status: 500, body: fixtureText("boj/json_error_500_internal.json") }),
    { endpoint: "getMetadata" },
  ) as ToolError;
  assert.equal(e500.messageId, "M181090S");
  assert.equal(e500.retryable, true);
  const e503 = toBojError(
    upstream("API_ERROR", { status: 503, retryAfterS: 7, body: "<html>busy</html>" }),
    { endpoint: "getMetadata" },
  ) as ToolError;
  assert.equal(e503.errorType, "API_ERROR");
  assert.equal(e503.retryable, true);
  assert.equal(e503.retryAfterS, 7);
  assert.equal(e503.messageId, undefined);
});

Deno.test("toBojError() keeps a non-BOJ 502 answer an API_ERROR that is not retryable", () => {
  const e = toBojError(upstream("API_ERROR", { status: 502, body: "<html></html>" }), {
    endpoint: "getDataCode",
  }) as ToolError;
  assert.equal(e.errorType, "API_ERROR");
  assert.equal(e.status, 502);
  assert.equal(e.retryable, false);
  assert.match(e.hint ?? "", /try again later/, "the hint does not promise a retry");
});

Deno.test("toBojError() makes a 429 retryable, with retry_after_s when BOJ sent Retry-After, as its hint says", () => {
  const timed = toBojError(
    upstream("RATE_LIMITED", { status: 429, retryAfterS: 30, body: "<html></html>" }),
    {
      endpoint: "getDataCode",
    },
  ) as ToolError;
  assert.deepEqual([timed.errorType, timed.status, timed.retryable, timed.retryAfterS], [
    "API_ERROR",
    429,
    true,
    30,
  ]);
  assert.match(timed.hint ?? "", /Wait 30 seconds/);
  const bare = toBojError(upstream("RATE_LIMITED", { status: 429 }), {
    endpoint: "getDataCode",
  }) as ToolError;
  assert.deepEqual([bare.retryable, bare.retryAfterS], [true, undefined]);
  assert.match(bare.hint ?? "", /^Wait a minute/);
});

Deno.test("toBojError() maps timeouts, an open breaker and transport failures to a retryable TRANSPORT_ERROR", () => {
  for (const type of ["TIMEOUT", "CIRCUIT_OPEN", "TRANSPORT_ERROR", "RATE_LIMITED"]) {
    const e = toBojError(upstream(type), { endpoint: "getDataCode" }) as ToolError;
    assert.equal(e.errorType, "TRANSPORT_ERROR", type);
    assert.equal(e.retryable, true);
  }
});

Deno.test("toBojError() keeps DECODE_ERROR non-retryable and passes other errors through", () => {
  const e = toBojError(upstream("DECODE_ERROR", { status: 200 }), { endpoint: "getDataCode" }) as ToolError;
  assert.equal(e.errorType, "DECODE_ERROR");
  assert.equal(e.retryable, false);
  const cancelled = upstream("CANCELLED");
  assert.equal(toBojError(cancelled, { endpoint: "getDataCode" }), cancelled);
  const plain = new Error("x");
  assert.equal(toBojError(plain, { endpoint: "getDataCode" }), plain);
});

Deno.test("apiError() names the code a M181013E position points at", () => {
  const e = apiError(
    {
      status: 400,
      message_id: "M181013E",
      message: "指定した系列コードは存在しません。:2番目のコード",
      date: null,
    },
    { endpoint: "getDataCode", codes: ["A", "NOPE"] },
  );
  assert.match(e.message, /\(Series code 2 of the request, "NOPE", does not exist\)$/);
  assert.doesNotMatch(e.message, /\*/, "no template asterisk");
  assert.match(e.hint ?? "", /boj_get_metadata/);
});

Deno.test("apiError() adds the 1,250-series cap to an unexplained layer refusal", () => {
  const e = apiError(
    { status: 400, message_id: "M181020E", message: "階層情報設定が正しくありません。", date: null },
    { endpoint: "getDataLayer" },
  );
  assert.match(e.hint ?? "", /1,250 series/);
});
