// A FRED export whose replica is killed mid-job carries on at another replica from its last
// completed page: three real server processes over one real redis-server and a loopback fake FRED
// that counts the requests for every page (offset). "No row fetched twice" is held strictly here:
// every page whose rows the dead replica had recorded (its checkpoint) is requested exactly
// once, in the whole run; the one page asked twice is the page in flight when the replica died,
// whose answer the dead replica never received. The finished files (a CSV and a JSON export, killed
// together) equal, byte for byte, the files of the same exports run without interruption.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import type { HttpServerProcess } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { ok } from "../harness/results.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";
import { EXPORT_ROWS, EXPORT_SETTINGS, filesNamed, heldSeries, resultBytes } from "./_held_export.ts";
import type { PageRequest } from "./_held_export.ts";
import { startRedis } from "./_redis_server.ts";
import { until } from "../harness/until.ts";

/** The fourth request of the export is held until its replica is killed: three pages are recorded. */
const HELD = 3;
const ROWS = EXPORT_ROWS;

/** Replicas over one Redis with a short lease and scan; checkpoints signed, as deployments run. */
function replicaOptions(redisUrl: string, home: string) {
  return {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: {
      REDIS_URL: redisUrl,
      MCP_JOB_LEASE_TIMEOUT: "1.5",
      MCP_JOB_TAKEOVER_INTERVAL: "0.25",
      MCP_REQUEST_STATE_KEY: "job-resume-test-shared-secret-0123456789",
    },
  };
}

/** An SDK client with a session on `server`. */
async function clientOf(server: HttpServerProcess): Promise<Client> {
  const client = new Client({ name: "job-resume-test", version: "0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  return client;
}

/**
 * Checks an export's page requests after one kill: each recorded page (the first `HELD`) asked
 * once in the whole run, the page in flight at the kill asked twice, every other page once, and
 * the pages tiling the rows without gap or overlap. Resolves to the held page's offset.
 */
function checkPages(asked: readonly PageRequest[], recordedRows: number): number {
  const heldOffset = asked[HELD]!.offset;
  assert.equal(heldOffset, recordedRows, "the held page starts where the recorded rows end");
  const byOffset = new Map<number, number>();
  for (const p of asked) byOffset.set(p.offset, (byOffset.get(p.offset) ?? 0) + 1);
  for (const p of asked.slice(0, HELD)) {
    assert.equal(byOffset.get(p.offset), 1, `recorded page at offset ${p.offset} fetched once`);
  }
  for (const [offset, times] of byOffset) {
    assert.equal(times, offset === heldOffset ? 2 : 1, `page at offset ${offset}: ${times} requests`);
  }
  const tiles = [...new Map(asked.map((p) => [p.offset, p])).values()].sort((x, y) => x.offset - y.offset);
  tiles.reduce((end, p) => {
    assert.equal(p.offset, end, "no gap and no overlap between pages");
    return p.offset + Math.min(p.limit, ROWS - p.offset);
  }, 0);
  assert.equal(asked.length, tiles.length + 1, "one request more than pages: the one in flight at the kill");
  return heldOffset;
}

/** Starts a FRED export of `series` through `client`; resolves to its job id. */
async function startExport(client: Client, series: string, format = "csv"): Promise<string> {
  const started = ok(
    await client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: series, format },
    }),
  );
  return String(started["job_id"]);
}

Deno.test("a FRED job whose replica is killed resumes elsewhere from its last page, fetching none twice", async () => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const resumed = heldSeries(fake, "RESUMED", HELD);
  const resumedJson = heldSeries(fake, "RESUMEDJSON", HELD);
  const whole = heldSeries(fake, "WHOLE", -1);
  heldSeries(fake, "WHOLEJSON", -1);
  const handed = heldSeries(fake, "HANDED", HELD);
  const home = scratchHome(fredConfig(fake.origin, EXPORT_SETTINGS));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = replicaOptions(redis.url, home);
  const replicas = await Promise.all([0, 1, 2].map(() => startHttpServer(options)));
  await using _a = replicas[0]!;
  await using _b = replicas[1]!;
  await using _c = replicas[2]!;
  const [a, b, c] = replicas as [HttpServerProcess, HttpServerProcess, HttpServerProcess];
  const clients: Client[] = [];
  const connect = async (server: HttpServerProcess): Promise<Client> => {
    const client = await clientOf(server);
    clients.push(client);
    return client;
  };
  const status = async (client: Client, args: Record<string, unknown>) =>
    ok(await client.callTool({ name: "fred_job_status", arguments: args }));
  try {
    const [ca, cb] = [await connect(a), await connect(b)];
    // A CSV and a JSON export on the replica that is killed, each held at its fourth page.
    const jobId = await startExport(ca, "RESUMED", "csv");
    const jsonJobId = await startExport(ca, "RESUMEDJSON", "json");
    await resumed.arrived;
    await resumedJson.arrived;
    const recordedRows = resumed.asked.slice(0, HELD).reduce((sum, p) => sum + p.limit, 0);
    // The dead replica's checkpoints: the rows of the pages it finished, seen from another replica.
    for (const id of [jobId, jsonJobId]) {
      await until("the third page's checkpoint", async () => {
        const view = await status(cb, { job_id: id });
        const rows = (view["progress"] as { rows_fetched: number } | undefined)?.rows_fetched;
        return rows === recordedRows ? view : undefined;
      });
    }
    await a.stop("SIGKILL");
    const killedAt = Date.now();
    resumed.release();
    resumedJson.release();

    const results: Record<string, unknown>[] = [];
    for (const id of [jobId, jsonJobId]) {
      const done = await status(cb, { job_id: id, wait_seconds: 30 });
      assert.equal(done["status"], "completed", JSON.stringify(done));
      results.push(done["result"] as Record<string, unknown>);
      assert.equal(results.at(-1)!["rows_written"], ROWS);
    }
    const [result, jsonResult] = results as [
      { rows_written: number; relative_path: string },
      Record<string, unknown>,
    ];
    const asked = resumed.asked;
    const heldOffset = checkPages(asked, recordedRows);
    checkPages(resumedJson.asked, recordedRows);

    // Both takeovers logged (a serving replica's lines reach stderr a moment after its answers).
    const resumedLines = () =>
      [b, c].flatMap((s) => s.stderr().split("\n").filter((l) => l.includes('"action":"resumed"')));
    await until("both takeovers logged", () => resumedLines().length >= 2).catch(() => {});
    const takeovers = resumedLines();
    // Each job taken over once, by one replica, from its recorded rows.
    assert.deepEqual(
      takeovers.map((l) => [JSON.parse(l)["job_id"], JSON.parse(l)["from_row"]]).sort(),
      [[jobId, recordedRows], [jsonJobId, recordedRows]].sort(),
    );
    const takeoverMs = asked.filter((p) => p.offset === heldOffset)[1]!.at - killedAt;
    console.log(
      `takeover: the held page was asked again ${takeoverMs} ms after SIGKILL (lease 1.5 s, scan 0.25 s)`,
    );

    // The same exports, never interrupted, by the same rules.
    const wholeOf = async (series: string, format: string) => {
      const done = await status(cb, { job_id: await startExport(cb, series, format), wait_seconds: 30 });
      assert.equal(done["status"], "completed");
      return resultBytes(home, done["result"] as Record<string, unknown>);
    };
    const wholeBytes = await wholeOf("WHOLE", "csv");
    assert.equal(whole.asked.length, new Set(whole.asked.map((p) => p.offset)).size);
    // The JSON files name their series in their head: the same text once the names are the same.
    const text = (bytes: Uint8Array, series: string) =>
      new TextDecoder().decode(bytes).replaceAll(series, "SERIES");
    assert.equal(
      text(resultBytes(home, jsonResult), "RESUMEDJSON"),
      text(await wholeOf("WHOLEJSON", "json"), "WHOLEJSON"),
      "the JSON file is the uninterrupted export's",
    );
    assert.equal(JSON.parse(text(resultBytes(home, jsonResult), "X"))["observations"].length, ROWS);
    const resumedBytes = resultBytes(home, result);
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

    // A graceful stop (SIGTERM) hands a running export over: the partial file is kept, and the
    // replica left carries on from the last recorded page just the same.
    const cc = await connect(c);
    const handedJob = await startExport(cb, "HANDED");
    await handed.arrived;
    await until("the handed job's checkpoint", async () => {
      const view = await status(cc, { job_id: handedJob });
      const rows = (view["progress"] as { rows_fetched: number } | undefined)?.rows_fetched;
      return rows === recordedRows ? view : undefined;
    });
    assert.equal(await b.stop("SIGTERM"), 0);
    handed.release();
    const handedDone = await status(cc, { job_id: handedJob, wait_seconds: 30 });
    assert.equal(handedDone["status"], "completed", JSON.stringify(handedDone));
    checkPages(handed.asked, recordedRows);
    const handedOver = await c.logged(new RegExp(`"job_id":"${handedJob}".*"action":"resumed"`));
    assert.equal(JSON.parse(handedOver)["from_row"], recordedRows);
    assert.deepEqual(
      resultBytes(home, handedDone["result"] as Record<string, unknown>),
      wholeBytes,
      "the handed-over file is the uninterrupted export's",
    );
  } finally {
    for (const client of clients) await client.close().catch(() => {});
  }
});

Deno.test("a FRED job taken over whose upstream then fails ends failed, naming the upstream's error, with no partial file left", async () => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const failing = heldSeries(fake, "FAILING", HELD, 500);
  const home = scratchHome(fredConfig(fake.origin, EXPORT_SETTINGS));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = replicaOptions(redis.url, home);
  const [a, b] = await Promise.all([0, 1].map(() => startHttpServer(options))) as [
    HttpServerProcess,
    HttpServerProcess,
  ];
  await using _a = a;
  await using _b = b;
  const [ca, cb] = [await clientOf(a), await clientOf(b)];
  try {
    const jobId = await startExport(ca, "FAILING");
    await failing.arrived;
    const recordedRows = failing.asked.slice(0, HELD).reduce((sum, p) => sum + p.limit, 0);
    await until("the third page's checkpoint", async () => {
      const view = ok(await cb.callTool({ name: "fred_job_status", arguments: { job_id: jobId } }));
      const rows = (view["progress"] as { rows_fetched: number } | undefined)?.rows_fetched;
      return rows === recordedRows ? view : undefined;
    });
    await a.stop("SIGKILL");
    failing.release();
    const done = ok(
      await cb.callTool({ name: "fred_job_status", arguments: { job_id: jobId, wait_seconds: 30 } }),
    );
    assert.equal(done["status"], "failed", JSON.stringify(done));
    const error = done["error"] as { code: string; message: string };
    assert.equal(error.code, "SERVER_ERROR", JSON.stringify(error));
    assert.match(error.message, /FRED API server error \(HTTP 500\)/, "the upstream's status is named");
    // The resumed job asked from the recorded rows on, never for a recorded page again.
    const after = failing.asked.slice(HELD + 1);
    assert.ok(after.length > 0, "the taken-over job asked for the next page");
    assert.ok(after.every((p) => p.offset >= recordedRows), JSON.stringify(after));
    // Its partial file is gone with it.
    assert.deepEqual(partialsOf(home, "FAILING"), [], "no partial file is left");
  } finally {
    await ca.close().catch(() => {});
    await cb.close().catch(() => {});
  }
});

/** The files under `root` that name `series`: a failed job leaves none, partial or not. */
function partialsOf(root: string, series: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(root)) {
    const path = `${root}/${e.name}`;
    if (e.isDirectory) out.push(...partialsOf(path, series));
    else if (e.name.includes(series)) out.push(path);
  }
  return out;
}
