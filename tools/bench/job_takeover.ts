// Part of `deno task bench` (called from replicas.ts): how long a FRED job stands still when the
// replica running it is killed. Two replicas share one Redis and a loopback fake FRED; a long
// export runs on the first, whose fourth page request is held; the first replica is SIGKILLed
// while that request is in flight, and the time until the other replica asks for the same page
// (carrying on from the checkpoint) is the takeover time. With a lease of L seconds and a scan
// every S seconds it is about L plus up to S; the default settings (30 s, 10 s) scale it.
//
//   deno run -A tools/bench/job_takeover.ts     prints the rows
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import type { FakeUpstream } from "../../tests/fakes/upstream.ts";
import { fredConfig, startFakeFred } from "../../tests/providers/fred/fake_fred.ts";
import { EXPORT_ROWS, heldSeries } from "../../tests/redis/_held_export.ts";
import { startRedis } from "../../tests/redis/_redis_server.ts";
import type { BenchRow } from "./replicas.ts";
import { quantile } from "./startup.ts";

const RUNS = Number(Deno.env.get("BENCH_TAKEOVER_RUNS") ?? 5);
const LEASE_S = 1.5;
const SCAN_S = 0.25;
const ROWS = EXPORT_ROWS;
/** The request (0-based) held until the replica running the job is killed. */
const HELD = 3;

/**
 * One kill: ms from SIGKILL to the next page asked by another replica and to the job's end, and
 * the rows asked for beyond one pass over the series (the page in flight at the kill, and any the
 * job fetches again).
 */
async function oneTakeover(
  series: string,
  start: () => Promise<HttpServerProcess>,
  survivor: HttpServerProcess,
  fake: FakeUpstream,
): Promise<{ takeoverMs: number; finishMs: number; rowsAgain: number }> {
  const { asked, arrived, release } = heldSeries(fake, series, HELD);
  const victim = await start();
  const client = new Client({ name: "bench-takeover", version: "0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${victim.origin}/mcp`)));
  const accepted = await client.callTool({
    name: "fred_series",
    arguments: { operation: "get_observations", series_id: series },
  });
  const jobId = String((accepted.structuredContent as Record<string, unknown>)["job_id"]);
  await arrived;
  await client.close().catch(() => {});
  await victim.stop("SIGKILL");
  const killedAt = Date.now();
  release();
  const watcher = new Client({ name: "bench-takeover", version: "0" }, { capabilities: {} });
  await watcher.connect(new StreamableHTTPClientTransport(new URL(`${survivor.origin}/mcp`)));
  const done = await watcher.callTool({
    name: "fred_job_status",
    arguments: { job_id: jobId, wait_seconds: 60 },
  });
  const finishMs = Date.now() - killedAt;
  await watcher.close();
  const status = (done.structuredContent as Record<string, unknown>)["status"];
  if (status !== "completed") throw new Error(`takeover bench: the job ended ${String(status)}`);
  // The first request after the kill is the other replica's: the held page, or a page before it
  // when the job starts again from its first row.
  const next = asked.slice(HELD + 1)[0];
  if (!next) throw new Error("takeover bench: no page was asked after the kill");
  const rowsAsked = asked.reduce((sum, a) => sum + Math.max(0, Math.min(a.limit, ROWS - a.offset)), 0);
  return { takeoverMs: next.at - killedAt, finishMs, rowsAgain: rowsAsked - ROWS };
}

/** Kills the replica running a FRED export `RUNS` times and reports how long the job stood still. */
export async function benchJobTakeover(): Promise<BenchRow[]> {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin, { page_size: 2000, job_row_threshold: 1000 }));
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: {
      REDIS_URL: redis.url,
      MCP_JOB_LEASE_TIMEOUT: String(LEASE_S),
      MCP_JOB_TAKEOVER_INTERVAL: String(SCAN_S),
      MCP_REQUEST_STATE_KEY: "bench-takeover-shared-secret-0123456789",
    },
  };
  const survivor = await startHttpServer(options);
  const takeovers: number[] = [];
  const finishes: number[] = [];
  let rowsAgain = 0;
  try {
    for (let run = 0; run < RUNS; run++) {
      const r = await oneTakeover(`TAKEOVER${run}`, () => startHttpServer(options), survivor, fake);
      takeovers.push(r.takeoverMs);
      finishes.push(r.finishMs);
      rowsAgain += r.rowsAgain;
    }
  } finally {
    await survivor.stop();
    removeHome(home);
  }
  const note =
    `${RUNS} kills; lease ${LEASE_S} s, scan every ${SCAN_S} s (defaults 30 s and 10 s: about lease + scan)`;
  return [
    {
      what: "FRED job takeover: SIGKILL of its replica → its next page asked by another replica",
      median: `${quantile(takeovers, 0.5).toFixed(0)} ms`,
      p95: `${quantile(takeovers, 0.95).toFixed(0)} ms`,
      note: `${note}; rows asked for again: ${
        Math.round(rowsAgain / RUNS)
      } a kill (the page in flight is 2,000; the kill does not wait for the last page's checkpoint to reach Redis, so that page may be asked again too)`,
    },
    {
      what: `FRED job takeover: SIGKILL → the ${ROWS.toLocaleString("en-US")}-row export completed elsewhere`,
      median: `${quantile(finishes, 0.5).toFixed(0)} ms`,
      p95: `${quantile(finishes, 0.95).toFixed(0)} ms`,
      note: `carries on from the last recorded page; ${note}`,
    },
  ];
}

if (import.meta.main) {
  for (const r of await benchJobTakeover()) {
    console.log(`${r.what}: median ${r.median}, p95 ${r.p95}; ${r.note}`);
  }
}
