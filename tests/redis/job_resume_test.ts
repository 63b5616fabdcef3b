// A FRED export whose replica is killed mid-job carries on at another replica from its last
// completed page: three real server processes over one real redis-server and a loopback fake FRED
// that counts the requests for every page (offset). "No row fetched twice" is held strictly here:
// every page whose rows the dead replica had recorded (its checkpoint) is requested exactly
// once, in the whole run; the one page asked twice is the page in flight when the replica died,
// whose answer the dead replica never received. The finished file equals, byte for byte, the file
// of the same export run without interruption.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import type { HttpServerProcess } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { ok } from "../harness/results.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";
import { EXPORT_ROWS, EXPORT_SETTINGS, filesNamed, heldSeries, resultBytes } from "./_held_export.ts";
import { startRedis } from "./_redis_server.ts";
import { until } from "./_job_replicas.ts";

/** The fourth request of the export is held until its replica is killed: three pages are recorded. */
const HELD = 3;
const ROWS = EXPORT_ROWS;

Deno.test("a FRED job whose replica is killed resumes elsewhere from its last page, fetching none twice", async () => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const resumed = heldSeries(fake, "RESUMED", HELD);
  const whole = heldSeries(fake, "WHOLE", -1);
  const home = scratchHome(fredConfig(fake.origin, EXPORT_SETTINGS));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: {
      REDIS_URL: redis.url,
      MCP_JOB_LEASE_TIMEOUT: "1.5",
      MCP_JOB_TAKEOVER_INTERVAL: "0.25",
      // Checkpoints are signed: the signed path is the one deployments run.
      MCP_REQUEST_STATE_KEY: "job-resume-test-shared-secret-0123456789",
    },
  };
  const replicas = await Promise.all([0, 1, 2].map(() => startHttpServer(options)));
  await using _a = replicas[0]!;
  await using _b = replicas[1]!;
  await using _c = replicas[2]!;
  const [a, b, c] = replicas as [HttpServerProcess, HttpServerProcess, HttpServerProcess];
  const clients: Client[] = [];
  const connect = async (server: HttpServerProcess): Promise<Client> => {
    const client = new Client({ name: "job-resume-test", version: "0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    clients.push(client);
    return client;
  };
  const status = async (client: Client, args: Record<string, unknown>) =>
    ok(await client.callTool({ name: "fred_job_status", arguments: args }));
  try {
    const [ca, cb] = [await connect(a), await connect(b)];
    const accepted = ok(
      await ca.callTool({
        name: "fred_series",
        arguments: { operation: "get_observations", series_id: "RESUMED" },
      }),
    );
    const jobId = String(accepted["job_id"]);
    await resumed.arrived;
    const recorded = resumed.asked.slice(0, HELD);
    const recordedRows = recorded.reduce((sum, p) => sum + p.limit, 0);
    // The dead replica's checkpoint: the rows of the pages it finished, seen from another replica.
    await until("the third page's checkpoint", async () => {
      const view = await status(cb, { job_id: jobId });
      const rows = (view["progress"] as { rows_fetched: number } | undefined)?.rows_fetched;
      return rows === recordedRows ? view : undefined;
    });
    await a.stop("SIGKILL");
    const killedAt = Date.now();
    resumed.release();

    const done = await status(cb, { job_id: jobId, wait_seconds: 30 });
    assert.equal(done["status"], "completed", JSON.stringify(done));
    const result = done["result"] as { rows_written: number; relative_path: string };
    assert.equal(result.rows_written, ROWS);

    const asked = resumed.asked;
    const heldOffset = asked[HELD]!.offset;
    assert.equal(heldOffset, recordedRows, "the held page starts where the recorded rows end");
    const byOffset = new Map<number, number>();
    for (const p of asked) byOffset.set(p.offset, (byOffset.get(p.offset) ?? 0) + 1);
    for (const p of recorded) {
      assert.equal(byOffset.get(p.offset), 1, `recorded page at offset ${p.offset} fetched once`);
    }
    for (const [offset, times] of byOffset) {
      assert.equal(times, offset === heldOffset ? 2 : 1, `page at offset ${offset}: ${times} requests`);
    }
    // The pages tile the series: each starts where the one before ended, up to the last row.
    const tiles = [...new Map(asked.map((p) => [p.offset, p])).values()].sort((x, y) => x.offset - y.offset);
    tiles.reduce((end, p) => {
      assert.equal(p.offset, end, "no gap and no overlap between pages");
      return p.offset + Math.min(p.limit, ROWS - p.offset);
    }, 0);
    assert.equal(
      asked.length,
      tiles.length + 1,
      "one request more than pages: the one in flight at the kill",
    );

    const takeover = await Promise.any([b, c].map((s) => s.logged(/"action":"resumed"/, 10_000)));
    assert.equal(JSON.parse(takeover)["from_row"], recordedRows, "carried on after the recorded rows");
    const takers = [b, c].filter((s) => /"action":"resumed"/.test(s.stderr()));
    assert.equal(takers.length, 1, "one replica took the job over");
    const takeoverMs = asked.filter((p) => p.offset === heldOffset)[1]!.at - killedAt;
    console.log(
      `takeover: the held page was asked again ${takeoverMs} ms after SIGKILL (lease 1.5 s, scan 0.25 s)`,
    );

    // The same export, never interrupted, by the same rules.
    const wholeJob = ok(
      await cb.callTool({
        name: "fred_series",
        arguments: { operation: "get_observations", series_id: "WHOLE" },
      }),
    );
    const wholeDone = await status(cb, { job_id: String(wholeJob["job_id"]), wait_seconds: 30 });
    assert.equal(wholeDone["status"], "completed");
    assert.equal(whole.asked.length, new Set(whole.asked.map((p) => p.offset)).size);
    const resumedBytes = resultBytes(home, result);
    const wholeBytes = resultBytes(home, wholeDone["result"] as Record<string, unknown>);
    assert.equal(resumedBytes.length, wholeBytes.length, "the same length as the uninterrupted file");
    assert.ok(
      resumedBytes.every((byte, i) => byte === wholeBytes[i]),
      "byte for byte the uninterrupted file",
    );
    assert.equal(new TextDecoder().decode(resumedBytes).split("\r\n").length - 2, ROWS, "header and rows");
    const [resumedPath] = filesNamed(home, result.relative_path.split("/").pop()!);
    const folder = resumedPath!.slice(0, resumedPath!.lastIndexOf("/"));
    assert.deepEqual(
      [...Deno.readDirSync(folder)].filter((e) => e.name.startsWith(".")).map((e) => e.name),
      [],
      "no partial file is left",
    );
  } finally {
    for (const client of clients) await client.close().catch(() => {});
  }
});
