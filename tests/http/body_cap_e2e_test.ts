// The body cap counts decompressed bytes and holds memory to about the cap: gzip and brotli bombs
// (128 MiB of zeros in about 130 KB, and in a few hundred bytes) served to FRED, through the real server over stdio, with FRED's
// default max_body_mb. The server's peak memory is read from /proc (Linux): its peak-RSS mark is
// reset before the call (clear_refs) and RSS is sampled while the call runs.
import assert from "node:assert/strict";
import { brotliCompressSync, constants } from "node:zlib";
import { startStdio } from "../harness/spawn.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredConfig, fredRoutes } from "../providers/fred/fake_fred.ts";

const MIB = 1024 * 1024;

/** `mib` MiB of zeros, compressed with `formats` applied in order. */
async function bomb(mib: number, formats: CompressionFormat[]): Promise<Uint8Array> {
  const zeros = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (mib-- > 0) controller.enqueue(new Uint8Array(MIB));
      else controller.close();
    },
  });
  let stream = zeros;
  for (const format of formats) stream = stream.pipeThrough(new CompressionStream(format)) as typeof zeros;
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

interface Mem {
  rssMib: number;
  peakMib: number;
}

function memOf(pid: number): Mem {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rssMib: kib("VmRSS") / 1024, peakMib: kib("VmHWM") / 1024 };
}

/** How far the process's memory rose above its RSS at the start while `work` ran, in MiB. */
async function growthDuring(pid: number, work: () => Promise<unknown>): Promise<number> {
  let peakReset = true;
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    peakReset = false; // Not allowed here: the sampled RSS alone decides.
  }
  const before = memOf(pid).rssMib;
  let sampled = before;
  let running = true;
  const sampler = (async () => {
    while (running) {
      sampled = Math.max(sampled, memOf(pid).rssMib);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  try {
    await work();
  } finally {
    running = false;
    await sampler;
  }
  const after = memOf(pid);
  return Math.max(sampled, after.rssMib, peakReset ? after.peakMib : 0) - before;
}

const HAS_PROC = Deno.build.os === "linux";

Deno.test("HttpClient body cap: gzip and brotli bombs to FRED fail with DECODE_ERROR and the server's memory grows by well under 64 MiB", async (t) => {
  const gzip = await bomb(128, ["gzip"]);
  const br = new Uint8Array(
    brotliCompressSync(new Uint8Array(128 * MIB), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } }),
  );
  const nested = await bomb(128, ["gzip", "gzip"]);
  const deflate = await bomb(128, ["deflate"]);
  assert.ok(gzip.byteLength < 200_000, `the bomb is small on the wire (${gzip.byteLength} bytes)`);
  await using fake = FakeUpstream.start(fredRoutes());
  const serve = (id: string, body: Uint8Array, encoding: string) =>
    fake.route({
      path: "/fred/series",
      match: (r) => r.url.searchParams.get("series_id") === id,
      reply: { body, headers: { "content-encoding": encoding, "content-type": "application/json" } },
    });
  serve("GZIP", gzip, "gzip");
  serve("BR", br, "br");
  serve("NESTED", nested, "gzip, gzip");
  serve("DEFLATE", deflate, "deflate");
  // FRED's defaults for the cap (max_body_mb 16) and retries; only pacing and the cache are off.
  await using s = await startStdio({ args: ["--providers", "fred"], configYaml: fredConfig(fake.origin) });
  const pid = s.transport.child!.pid;
  const get = (id: string) =>
    s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get", series_id: id, output: "screen" },
    });
  /** The error payload of one call, and how far the server's memory rose during it. */
  const measure = async (id: string): Promise<{ e: Record<string, unknown>; growth: number }> => {
    let result: Awaited<ReturnType<typeof get>> | undefined;
    const growth = HAS_PROC ? await growthDuring(pid, async () => result = await get(id)) : 0;
    result ??= await get(id);
    if (HAS_PROC) assert.ok(growth < 64, `${id}: peak memory grew by ${growth.toFixed(1)} MiB`);
    return { e: errorOf(result), growth };
  };
  // Load the tool's code paths first, so the measurement sees the body and nothing else.
  ok(await get("GNPCA"));

  await t.step("gzip: DECODE_ERROR naming the cap, counted after decompression", async () => {
    const { e } = await measure("GZIP");
    assert.equal(e["error_type"], "DECODE_ERROR");
    assert.match(String(e["message"]), /more than 16 MiB \(counted after decompression\)/);
    assert.match(String(e["hint"]), /providers\.fred\.max_body_mb/);
    assert.equal(e["retryable"], false);
    const sent = fake.requestsTo("/fred/series").filter((r) =>
      r.url.searchParams.get("series_id") === "GZIP"
    );
    assert.equal(sent.length, 1, "not retried");
  });

  await t.step("br: the same cap", async () => {
    const { e } = await measure("BR");
    assert.equal(e["error_type"], "DECODE_ERROR");
    assert.match(String(e["message"]), /more than 16 MiB/);
  });

  await t.step(
    "encodings fetch does not decode (gzip, gzip; deflate) arrive packed: unreadable JSON",
    async () => {
      for (const id of ["NESTED", "DEFLATE"]) {
        const { e } = await measure(id);
        assert.equal(e["error_type"], "DECODE_ERROR", id);
        assert.match(String(e["message"]), /not valid JSON/, id);
      }
    },
  );

  await t.step("an ordinary answer still comes through afterwards", async () => {
    ok(await get("GNPCA"));
  });
});
