// What replayable provenance (docs/ARCHITECTURE.md, "Replayable provenance") costs per upstream request: the
// same loopback GETs with and without a call record (the SHA-256 of the body and one entry), interleaved so
// drift hits both, and what building the provenance of an answer costs (hashing the citation and keeping it).
//
//   deno run -A tools/bench/provenance.ts
import { FakeClock } from "../../lib/clock.ts";
import { ResponseCache } from "../../lib/http/cache.ts";
import { requestScope } from "../../lib/http/request_scope.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { buildProvenance, newRecord } from "../../lib/output/provenance.ts";
import { FakeUpstream } from "../../tests/fakes/upstream.ts";
import type { BenchRow } from "./replicas.ts";

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;
const fmt = (x: number): string => `${x.toFixed(2)} ms`;

/** Paired timings of GETs of a `bodyBytes` body with and without a provenance record. */
export async function benchProvenance(runs: number, bodyBytes = 1024 * 1024): Promise<BenchRow[]> {
  const body = "x".repeat(bodyBytes);
  await using fake = FakeUpstream.start([{ path: "/data", reply: { body, contentType: "text/plain" } }]);
  const clock = new FakeClock(1_800_000_000_000);
  const runtime = new HttpRuntime({ clock });
  await loadHttpClient();
  const client = runtime.client({
    provider: "bench",
    upstreamName: "Bench",
    baseUrl: fake.origin,
    timeoutMs: 5000,
    retry: DEFAULT_RETRY_POLICY,
    maxBodyBytes: 4 * bodyBytes,
  });
  const citations = { store: new ResponseCache(4 << 20), ttlMs: 60_000, now: () => clock.now() };
  const plain: number[] = [];
  const recorded: number[] = [];
  const ratios: number[] = [];
  const build: number[] = [];
  const plainGet = async (i: number): Promise<number> => {
    const t0 = performance.now();
    await client.text("/data", { query: { i, r: 0 } });
    return performance.now() - t0;
  };
  const recordedGet = async (i: number): Promise<number> => {
    const record = newRecord();
    const t0 = performance.now();
    await requestScope.run({ fresh: false, record }, () => client.text("/data", { query: { i, r: 1 } }));
    const took = performance.now() - t0;
    const t1 = performance.now();
    await buildProvenance(record, citations);
    build.push(performance.now() - t1);
    return took;
  };
  const hash: number[] = [];
  const bytes = new TextEncoder().encode(body);
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first, so warm-up and drift do not favour one.
    let a: number;
    let b: number;
    if (i % 2 === 0) {
      a = await plainGet(i);
      b = await recordedGet(i);
    } else {
      b = await recordedGet(i);
      a = await plainGet(i);
    }
    plain.push(a);
    recorded.push(b);
    ratios.push(b / a);
    const t0 = performance.now();
    await crypto.subtle.digest("SHA-256", bytes);
    hash.push(performance.now() - t0);
  }
  const kib = Math.round(bodyBytes / 1024);
  return [
    {
      what: `HttpClient GET, loopback, ${kib} KiB body, no provenance record`,
      median: fmt(median(plain)),
      p95: fmt(p95(plain)),
      note: "",
    },
    {
      what: `same GET recorded for provenance (SHA-256 of the body)`,
      median: fmt(median(recorded)),
      p95: fmt(p95(recorded)),
      note: `paired median ratio ${median(ratios).toFixed(2)}x over ${runs} interleaved pairs`,
    },
    {
      what: `SHA-256 of the ${kib} KiB body alone (crypto.subtle)`,
      median: fmt(median(hash)),
      p95: fmt(p95(hash)),
      note: "",
    },
    {
      what: "building an answer's provenance (one request, citation kept)",
      median: fmt(median(build)),
      p95: fmt(p95(build)),
      note: "",
    },
  ];
}

if (import.meta.main) {
  for (const bytes of [10 * 1024, 1024 * 1024]) {
    for (const row of await benchProvenance(Number(Deno.env.get("BENCH_RUNS") ?? 200), bytes)) {
      console.log(`| ${row.what} | ${row.median} | ${row.p95} | ${row.note} |`);
    }
  }
}
