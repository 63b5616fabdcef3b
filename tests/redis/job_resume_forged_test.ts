// Without MCP_REQUEST_STATE_KEY a job's checkpoint is not signed, so whoever can write to Redis can
// change it: the replica taking the job over then checks it against the signed-or-checked recipe
// and the file on disk. A cursor outside what the recipe asks for, or a byte length past the end of
// the partial file, is not used: the job starts again from its first row, reads nothing outside the
// recipe's rows, writes nothing outside its own file, and still ends with the right file.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { ok } from "../harness/results.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";
import { EXPORT_ROWS, EXPORT_SETTINGS, heldSeries, resultBytes } from "./_held_export.ts";
import { startRedis } from "./_redis_server.ts";
import { storedJob } from "./_job_replicas.ts";
import { until } from "../harness/until.ts";

const PREFIX = "opendata-mcp:";

Deno.test("a taken-over FRED job starts again when its unsigned checkpoint was forged", async (t) => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin, EXPORT_SETTINGS));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: { REDIS_URL: redis.url, MCP_JOB_LEASE_TIMEOUT: "1.5", MCP_JOB_TAKEOVER_INTERVAL: "0.25" },
  };
  const clients: Client[] = [];
  const connect = async (origin: string): Promise<Client> => {
    const client = new Client({ name: "job-resume-forged-test", version: "0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
    clients.push(client);
    return client;
  };
  await using survivor = await startHttpServer(options);
  const cs = await connect(survivor.origin);
  const exportOf = async (client: Client, series: string) =>
    String(
      ok(
        await client.callTool({
          name: "fred_series",
          arguments: { operation: "get_observations", series_id: series },
        }),
      )[
        "job_id"
      ],
    );
  const finished = async (jobId: string) => {
    const done = ok(
      await cs.callTool({ name: "fred_job_status", arguments: { job_id: jobId, wait_seconds: 30 } }),
    );
    assert.equal(done["status"], "completed", JSON.stringify(done));
    return done["result"] as Record<string, unknown>;
  };
  try {
    heldSeries(fake, "WHOLE", -1);
    const whole = resultBytes(home, await finished(await exportOf(cs, "WHOLE")));

    const cases: [string, (point: Record<string, unknown>) => Record<string, unknown>][] = [
      ["a cursor past the rows the recipe asks for", (p) => ({
        ...p,
        rows: 1_000_000,
        cursor: { offset: 1_000_000 },
        file: { ...(p["file"] as Record<string, unknown>), rows: 1_000_000 },
      })],
      ["a cursor that does not follow its rows", (p) => ({ ...p, cursor: { offset: 15_001 } })],
      ["a byte length past the partial file's end", (p) => ({
        ...p,
        file: { ...(p["file"] as Record<string, unknown>), bytes: 1_000_000_000 },
      })],
    ];
    // The three run side by side, each on a replica of its own that is killed mid-export.
    const runs = await Promise.all(cases.map(async ([label, forge], i) => {
      const series = `FORGED${i}`;
      const held = heldSeries(fake, series, 3);
      const victim = await startHttpServer(options);
      const jobId = await exportOf(await connect(victim.origin), series);
      await held.arrived;
      const recordedRows = held.asked.slice(0, 3).reduce((sum, p) => sum + p.limit, 0);
      const record = await until("the checkpoint in Redis", async () => {
        const r = await storedJob(redis, PREFIX, jobId);
        const point = r["checkpoint"] as Record<string, unknown> | undefined;
        return point?.["rows"] === recordedRows ? r : undefined;
      });
      assert.equal(record["checkpointSig"], undefined, "unsigned without MCP_REQUEST_STATE_KEY");
      const forged = forge(record["checkpoint"] as Record<string, unknown>);
      await redis.command("SET", `${PREFIX}job:${jobId}`, JSON.stringify({ ...record, checkpoint: forged }));
      await victim.stop("SIGKILL");
      await victim[Symbol.asyncDispose]();
      const killedAt = Date.now();
      held.release();
      return { label, held, killedAt, result: await finished(jobId) };
    }));
    for (const { label, held, killedAt, result } of runs) {
      await t.step(`${label}: started again, nothing read outside the recipe, the right file`, () => {
        assert.equal(result["rows_written"], EXPORT_ROWS);
        const after = held.asked.filter((p) => p.at >= killedAt);
        assert.equal(after[0]?.offset, 0, "the survivor started again from the first row");
        assert.ok(held.asked.every((p) => p.offset < EXPORT_ROWS), "no page outside the recipe's rows");
        assert.deepEqual(resultBytes(home, result), whole, "the file is the uninterrupted export's");
      });
    }
    // A log line may reach stderr after the answer it goes with.
    const refusals = () => survivor.stderr().match(/job checkpoint not usable: starting again/g)?.length ?? 0;
    await until("the refusals logged", () => Promise.resolve(refusals() >= cases.length ? true : undefined));
    assert.equal(refusals(), cases.length, "each forged checkpoint was refused and logged");
  } finally {
    for (const client of clients) await client.close().catch(() => {});
  }
});
