// Background jobs end to end: a 100,000-row series streamed to CSV with progress notifications
// and bounded memory, a cancelled job, a shape file, a job that fails after its retries.
import assert from "node:assert/strict";
import type { StdioSession } from "../../harness/spawn.ts";
import type { Received } from "../../fakes/upstream.ts";
import { openProvider } from "../../harness/provider.ts";
import { fredError, startFakeFred, syntheticObservations, TEST_KEY } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";
import { errorOf, ok } from "../../harness/results.ts";

type Result = Awaited<ReturnType<StdioSession["client"]["callTool"]>>;
type Block = { type: string; text?: string; uri?: string };

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Peak resident memory of a process in MiB (Linux), or undefined elsewhere. */
function peakRssMb(pid: number): number | undefined {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const series = (id: string) => (r: Received) => r.url.searchParams.get("series_id") === id;
const offsetOf = (r: Received) => Number(r.url.searchParams.get("offset") ?? 0);
const limitOf = (r: Received) => Number(r.url.searchParams.get("limit") ?? 100_000);

Deno.test("fred background jobs stream large pulls to files, report progress, cancel and fail cleanly", async (t) => {
  await using fake = startFakeFred();
  const pagesGate = gate();
  const stuckGate = gate();
  // GATED: 100,000 rows; pages after the first wait until the test has seen progress.
  fake.route({
    path: "/fred/series/observations",
    match: series("GATED"),
    reply: async (r) => {
      if (offsetOf(r) > 0) await pagesGate.wait;
      return { json: syntheticObservations(100_000, offsetOf(r), limitOf(r)) };
    },
  });
  // STUCK: the second page never comes until the test is over.
  fake.route({
    path: "/fred/series/observations",
    match: series("STUCK"),
    reply: async (r) => {
      if (offsetOf(r) > 0) await stuckGate.wait;
      return { json: syntheticObservations(50_000, offsetOf(r), limitOf(r)) };
    },
  });
  // FLAKY: the second page always fails with 500.
  fake.route({
    path: "/fred/series/observations",
    match: series("FLAKY"),
    reply: (r) =>
      offsetOf(r) > 0
        ? fredError(500, "Internal Server Error.")
        : { json: syntheticObservations(20_000, offsetOf(r), limitOf(r)) },
  });

  // Spawned: the job's memory is measured on the server's own process (and this is FRED's smoke
  // test of the real entry point).
  await using s = await openProvider(
    fred({ fake, settings: { job_retries: 2, breaker_threshold: 100 }, spawn: true }),
  );
  const outputs: string[] = [];
  const call = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const r = await s.client.callTool({ name, arguments: args });
    outputs.push(JSON.stringify(r));
    return r;
  };
  await s.client.listTools();
  const pid = s.transport.child!.pid;
  const baselineMb = peakRssMb(pid);

  try {
    await t.step("a 100,000-row series is accepted as a job and written to CSV page by page", async () => {
      const started = performance.now();
      const accepted = ok(await call("fred_series", { operation: "get_observations", series_id: "GATED" }));
      assert.equal(accepted["status"], "accepted");
      assert.equal(accepted["output_mode"], "file");
      assert.equal(accepted["estimated_rows"], 100_000);
      assert.equal(typeof accepted["estimated_time_seconds"], "number");
      assert.equal(accepted["check_status"], "Use fred_job_status tool with this job_id");
      const jobId = String(accepted["job_id"]);
      assert.match(jobId, /^fred-job-[0-9a-f]{8}-\d{8}-\d{6}$/);

      const progress: { progress: number; total?: number | undefined; message?: string | undefined }[] = [];
      const status = await s.client.callTool(
        { name: "fred_job_status", arguments: { job_id: jobId, wait_seconds: 30 } },
        undefined,
        {
          onprogress: (p) => {
            progress.push(p);
            pagesGate.open(); // the job goes on once progress is seen to flow
          },
        },
      );
      outputs.push(JSON.stringify(status));
      const done = ok(status);
      const seconds = (performance.now() - started) / 1000;
      assert.equal(done["status"], "completed", JSON.stringify(done));
      const result = done["result"] as Record<string, unknown>;
      assert.equal(result["rows_written"], 100_000);
      assert.equal(result["format"], "csv");
      assert.equal(done["message"], "Data successfully saved to file. Ready for analysis.");
      const source = result["source"] as Record<string, string>;
      assert.match(source["url"]!, /\/fred\/series\/observations\?series_id=GATED&file_type=json$/);
      assert.match(source["notice"]!, /not endorsed or certified by the Federal Reserve Bank of St\. Louis/);
      assert.match((status.content as Block[])[0]!.text!, /Source: .*\n.*not endorsed or certified/);
      assert.deepEqual(done["progress"], {
        rows_fetched: 100_000,
        estimated_total: 100_000,
        percent_complete: 100,
        elapsed_seconds: (done["progress"] as Record<string, number>)["elapsed_seconds"],
      });

      assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
      // A job not yet past its first page may report 0 rows first.
      // Notifications are sampled as the job runs: each reports whole pages of 10,000 rows.
      const moved = progress.filter((p) => p.progress > 0);
      assert.ok(moved.length >= 1, "progress moved past the first page");
      for (const p of moved) {
        assert.equal(p.progress % 10_000, 0, `progress ${p.progress} counts whole pages`);
        assert.ok(p.progress <= 100_000);
        assert.equal(p.total, 100_000);
      }
      for (let i = 1; i < progress.length; i++) {
        assert.ok(progress[i]!.progress > progress[i - 1]!.progress, "progress only moves forward");
      }

      const pages = fake.requests.filter(series("GATED"));
      assert.deepEqual(pages.map(offsetOf), [
        0,
        10_000,
        20_000,
        30_000,
        40_000,
        50_000,
        60_000,
        70_000,
        80_000,
        90_000,
      ]);
      assert.ok(pages.every((p) => limitOf(p) === 10_000), "no request asked for more than one page");

      const csv = Deno.readTextFileSync(String(result["file_path"]));
      const lines = csv.split("\r\n");
      assert.equal(lines.length - 1, 100_001);
      assert.equal(lines[1], "1900-01-01,,2024-01-02,2024-01-02");
      assert.equal(
        lines[100_000]!.slice(0, 10),
        new Date(Date.UTC(1900, 0, 1) + 99_999 * 86_400_000).toISOString().slice(0, 10),
      );

      const link = (status.content as Block[]).find((b) => b.type === "resource_link");
      assert.equal(link?.uri, result["resource_uri"]);
      const peak = peakRssMb(pid);
      if (baselineMb !== undefined && peak !== undefined) {
        console.log(
          `100,000-row job: ${seconds.toFixed(2)} s; server peak RSS ${baselineMb.toFixed(0)} MiB before, ${
            peak.toFixed(0)
          } MiB after (+${(peak - baselineMb).toFixed(0)} MiB) for a ${
            (csv.length / 1_048_576).toFixed(1)
          } MB file`,
        );
        // A guard against gross regressions only: V8 collects lazily, so peak RSS plateaus
        // (measured: +71 MiB for 100,000 rows, +83 MiB for 400,000, in 10,000-row pages). What
        // bounds memory is structural: one page per request (above) and a writer that never holds
        // more than one page (tests/output/writers_test.ts).
        assert.ok(peak - baselineMb < 150, `peak RSS grew ${(peak - baselineMb).toFixed(0)} MiB`);
      }
    });

    await t.step(
      "a running job is cancelled, its partial file removed and no further page asked for",
      async () => {
        const accepted = ok(
          await call("fred_series", { operation: "get_observations", series_id: "STUCK", filename: "stuck" }),
        );
        const jobId = String(accepted["job_id"]);
        const running = ok(await call("fred_job_status", { job_id: jobId }));
        assert.ok(["accepted", "processing"].includes(String(running["status"])));
        const cancelled = ok(await call("fred_job_cancel", { job_id: jobId }));
        assert.equal(cancelled["status"], "cancelled");
        assert.match(String(cancelled["message"]), /cancelled/);
        const after = ok(await call("fred_job_status", { job_id: jobId }));
        assert.equal(after["status"], "cancelled");
        const seriesDir = `${s.home}/.local/share/opendata-mcp/fred/default/series`;
        const left = [...Deno.readDirSync(seriesDir)].map((e) => e.name).filter((n) => n.includes("stuck"));
        assert.deepEqual(left, [], "neither the file nor its partial remains");
        assert.ok(fake.requests.filter(series("STUCK")).length <= 2, "no page after the one in flight");
        const again = ok(await call("fred_job_cancel", { job_id: jobId }));
        assert.equal(again["status"], "cancelled", "cancelling twice changes nothing");
      },
    );

    await t.step("a shape file is fetched by a job and written as GeoJSON", async () => {
      const accepted = ok(
        await call("fred_maps", { operation: "get_shapes", shape: "state", format: "json" }),
      );
      assert.equal(accepted["status"], "accepted");
      assert.equal(accepted["estimated_rows"], null);
      const done = ok(await call("fred_job_status", { job_id: accepted["job_id"], wait_seconds: 30 }));
      assert.equal(done["status"], "completed");
      const result = done["result"] as Record<string, unknown>;
      assert.equal(result["rows_written"], 61);
      assert.match(String(result["relative_path"]), /^maps\/state_shapes_/);
      const geo = JSON.parse(Deno.readTextFileSync(String(result["file_path"])));
      assert.equal(geo.type, "FeatureCollection");
      assert.equal(geo.features.length, 61);
      assert.equal(geo.crs.properties.name, "urn:ogc:def:crs:EPSG:102004");
      assert.ok(geo.features[0].geometry.coordinates.length > 0);

      const csvJob = ok(await call("fred_maps", { operation: "get_shapes", shape: "state", output: "file" }));
      const csvDone = ok(await call("fred_job_status", { job_id: csvJob["job_id"], wait_seconds: 30 }));
      const header = Deno.readTextFileSync(
        String((csvDone["result"] as Record<string, unknown>)["file_path"]),
      ).split("\r\n")[0]!;
      assert.match(
        header,
        /^type,id,properties\..*,geometry\.type,geometry\.coordinates$/,
        "features flattened to columns",
      );
    });

    await t.step(
      "a job whose page keeps failing retries, then fails with the error and no file",
      async () => {
        const accepted = ok(
          await call("fred_series", { operation: "get_observations", series_id: "FLAKY", filename: "flaky" }),
        );
        const done = ok(await call("fred_job_status", { job_id: accepted["job_id"], wait_seconds: 30 }));
        assert.equal(done["status"], "failed");
        assert.equal((done["error"] as Record<string, unknown>)["code"], "SERVER_ERROR");
        assert.equal(done["retry_count"], 2);
        assert.equal(done["next_retry_in_seconds"], null);
        // Each attempt of the page is one request plus the client's two 5xx retries; the job tries it three times.
        assert.equal(fake.requests.filter((r) => series("FLAKY")(r) && offsetOf(r) > 0).length, 9);
        const seriesDir = `${s.home}/.local/share/opendata-mcp/fred/default/series`;
        assert.deepEqual([...Deno.readDirSync(seriesDir)].filter((e) => e.name.includes("flaky")), []);
      },
    );

    await t.step("jobs are listed newest first and filtered by status", async () => {
      const all = ok(await call("fred_job_list", {}));
      assert.equal(all["total"], 5);
      const statuses = (all["jobs"] as Record<string, unknown>[]).map((j) => j["status"]);
      assert.deepEqual(statuses, ["failed", "completed", "completed", "cancelled", "completed"]);
      const failed = ok(await call("fred_job_list", { status_filter: "failed", limit: 5 }));
      assert.equal(failed["count"], 1);
      const md = await call("fred_job_list", { response_format: "markdown", limit: 2 });
      assert.match((md.content as Block[])[0]!.text!, /FRED jobs \(1-2 of 5\)/);
      assert.match((md.content as Block[])[0]!.text!, /More: call again with offset=2\./);
      const jobId = String((all["jobs"] as Record<string, unknown>[])[1]!["job_id"]);
      const statusMd = await call("fred_job_status", { job_id: jobId });
      assert.match((statusMd.content as Block[])[0]!.text!, /Status: \*\*completed\*\*/);
      for (
        const [tool, args] of [
          ["fred_job_list", {}],
          ["fred_job_status", { job_id: jobId }],
          ["fred_job_cancel", { job_id: jobId }],
        ] as const
      ) {
        const js = await call(tool, { ...args, response_format: "json" });
        assert.deepEqual(JSON.parse((js.content as Block[])[0]!.text!), js.structuredContent, tool);
      }
      const finished = await call("fred_job_cancel", { job_id: jobId });
      assert.match((finished.content as Block[])[0]!.text!, /already finished; nothing was cancelled/);
    });

    await t.step("a job's status stays within the response limit however long its request", async () => {
      const day0 = Date.UTC(1990, 0, 1);
      const vintages = Array.from(
        { length: 2000 },
        (_, i) => new Date(day0 + i * 86_400_000).toISOString().slice(0, 10),
      );
      const accepted = ok(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "BIG",
          vintage_dates: vintages,
          filename: "many_vintages",
        }),
      );
      assert.equal(accepted["status"], "accepted");
      assert.ok(JSON.stringify(accepted).length <= 25_000, `accepted: ${JSON.stringify(accepted).length}`);
      const sent = fake.requests.filter(series("BIG")).at(-1)!.url.searchParams.get("vintage_dates");
      assert.equal(sent?.split(",").length, 2000, "FRED gets every vintage date");
      for (const args of [{ wait_seconds: 30 }, { response_format: "json" }]) {
        const r = await call("fred_job_status", { job_id: accepted["job_id"], ...args });
        const done = ok(r);
        assert.equal(done["status"], "completed");
        const shown = (done["request"] as Record<string, unknown[]>)["vintage_dates"]!;
        assert.deepEqual(shown.slice(0, 2), ["1990-01-01", "1990-01-02"]);
        assert.equal(shown.at(-1), "... 1990 more", "the request is abridged, and says so");
        assert.ok(JSON.stringify(done).length <= 25_000, `structured: ${JSON.stringify(done).length}`);
        const text = (r.content as Block[])[0]!.text!;
        assert.ok(text.length <= 25_000, `text: ${text.length}`);
        assert.doesNotMatch(text, /\[Truncated/, "cut by the tool, not by the last-resort clamp");
      }
    });

    await t.step("unknown job ids get JOB_NOT_FOUND and bad waits a VALIDATION_ERROR", async () => {
      const e = errorOf(await call("fred_job_status", { job_id: "fred-job-00000000-20250101-000000" }));
      assert.equal(e["error_type"], "JOB_NOT_FOUND");
      assert.match(String(e["hint"]), /24 hours/);
      assert.equal(errorOf(await call("fred_job_cancel", { job_id: "nope" }))["error_type"], "JOB_NOT_FOUND");
      assert.equal(
        errorOf(await call("fred_job_status", { job_id: "x", wait_seconds: 600 }))["error_type"],
        "VALIDATION_ERROR",
      );
    });
  } finally {
    pagesGate.open();
    stuckGate.open();
  }

  await t.step("no job output, file or log line holds the key", async () => {
    await s.close();
    for (const out of [...outputs, s.stderr()]) assert.ok(!out.includes(TEST_KEY));
    const dir = `${s.home}/.local/share/opendata-mcp/fred/default/maps`;
    for (const e of Deno.readDirSync(dir)) {
      assert.ok(!Deno.readTextFileSync(`${dir}/${e.name}`).includes(TEST_KEY));
    }
  });
});
