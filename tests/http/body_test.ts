// Reading bodies under the cap (lib/http/_body.ts) and the error snippets HttpClient keeps.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { UpstreamError } from "../../lib/errors.ts";
import { BodyTooLargeError, readCapped } from "../../lib/http/_body.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

/** A Response over a JS stream (not a byte stream) of `chunks` chunks of `size` bytes each; counts pulls. */
function chunked(chunks: number, size: number, headers: Record<string, string> = {}) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled++ < chunks) controller.enqueue(new Uint8Array(size).fill(pulled));
      else controller.close();
    },
  });
  return { response: new Response(body, { headers }), pulled: () => pulled };
}

Deno.test("readCapped() reads a stream in full when it fits, and stops at the cap when it does not", async () => {
  const fits = chunked(10, 1000);
  const bytes = await readCapped(fits.response, 10_000);
  assert.equal(bytes.byteLength, 10_000);
  assert.equal(bytes[0], 1);
  assert.equal(bytes[9_999], 10);
  const big = chunked(1000, 1000);
  await assert.rejects(readCapped(big.response, 10_000), BodyTooLargeError);
  assert.ok(big.pulled() < 20, `stopped reading at the cap (${big.pulled()} chunks pulled)`);
});

Deno.test("readCapped() refuses a declared Content-Length over the cap without reading, unless truncating", async () => {
  const declared = chunked(5, 1000, { "content-length": "5000" });
  await assert.rejects(readCapped(declared.response, 4000), BodyTooLargeError);
  assert.ok(declared.pulled() <= 1, "nothing read beyond the stream's start-up pull");
  const prefix = await readCapped(chunked(5, 1000, { "content-length": "5000" }).response, 1500, {
    truncate: true,
  });
  assert.equal(prefix.byteLength, 1500);
  assert.equal(prefix[1499], 2);
});

Deno.test("readCapped() reads a fetched byte stream exactly", async () => {
  const data = new Uint8Array(200_000).map((_, i) => i % 251);
  await using fake = FakeUpstream.start([{
    path: "/b",
    reply: { body: data, contentType: "application/octet-stream" },
  }]);
  const exact = await readCapped(await fetch(`${fake.origin}/b`), 200_000);
  assert.deepEqual(exact, data);
  await assert.rejects(readCapped(await fetch(`${fake.origin}/b`), 199_999), BodyTooLargeError);
});

Deno.test("HttpClient keeps the first 4 KiB of a long error body for the provider to read", async () => {
  const long = `{"error_message":"Bad Request.  Variable series_id is not set.","pad":"${
    "x".repeat(10_000)
  }"}`;
  await using fake = FakeUpstream.start([{ path: "/e", reply: { status: 400, body: long } }]);
  const client = new HttpRuntime({ clock: new FakeClock() }).client({
    provider: "test",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5000,
    retry: DEFAULT_RETRY_POLICY,
  });
  await assert.rejects(client.json("/e"), (e: unknown) => {
    assert.ok(e instanceof UpstreamError);
    assert.equal(e.body?.length, 4096);
    assert.match(e.body ?? "", /^\{"error_message":"Bad Request\./);
    return true;
  });
});
