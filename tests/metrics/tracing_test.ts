import assert from "node:assert/strict";
import { checkTracingEnv, parseTraceparent } from "../../lib/metrics/tracing.ts";
import { ConfigError } from "../../lib/errors.ts";

Deno.test("parseTraceparent() reads a W3C traceparent and refuses malformed or all-zero ids", () => {
  assert.deepEqual(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    traceFlags: 1,
  });
  assert.equal(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.traceFlags, 0);
  // A later version may add fields after the flags; version 00 may not.
  assert.ok(parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));
  for (
    const bad of [
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
      "",
      42,
      undefined,
    ]
  ) {
    assert.equal(parseTraceparent(bad), undefined, String(bad));
  }
});

Deno.test("checkTracingEnv() is off without OTEL_DENO=true and refuses a sampler that would export keys", () => {
  assert.equal(checkTracingEnv({}), false);
  assert.equal(checkTracingEnv({ OTEL_DENO: "true", OTEL_DENO_TRACING: "false" }), false);
  assert.equal(checkTracingEnv({ OTEL_DENO: "true", OTEL_TRACES_SAMPLER: "always_off" }), false);
  assert.equal(checkTracingEnv({ OTEL_DENO: "true", OTEL_TRACES_SAMPLER: "parentbased_always_on" }), true);
  assert.equal(checkTracingEnv({ OTEL_DENO: "true", OTEL_TRACES_SAMPLER: "parentbased_traceidratio" }), true);
  for (const sampler of [undefined, "always_on", "traceidratio"]) {
    const env = { OTEL_DENO: "true", ...(sampler ? { OTEL_TRACES_SAMPLER: sampler } : {}) };
    assert.throws(() => checkTracingEnv(env), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(e.path, "OTEL_TRACES_SAMPLER");
      assert.match(e.message, /OTEL_TRACES_SAMPLER=parentbased_always_on/);
      assert.match(e.message, /OTEL_DENO_TRACING=false/);
      return true;
    });
  }
});
