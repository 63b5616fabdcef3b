import assert from "node:assert/strict";
import { describeError, ToolError, UpstreamError } from "../lib/errors.ts";

Deno.test("describeError() names the error type of a ToolError, the message of any other error", () => {
  assert.equal(
    describeError(new ToolError("TIMEOUT", "No answer within 5 s")),
    "TIMEOUT: No answer within 5 s",
  );
  assert.equal(
    describeError(
      new UpstreamError("API_ERROR", "Upstream answered 503", { provider: "boj", status: 503 }),
    ),
    "API_ERROR: Upstream answered 503",
  );
  assert.equal(describeError(new TypeError("fetch failed")), "fetch failed");
  assert.equal(describeError("a string"), "a string");
});
