// Large FRED pulls end to end over stdio: the row threshold alone decides on a job, every page
// of a list is saved, a pull past max_rows or past what FRED really holds ends `incomplete`
// with what is missing, impossible dates are refused, files keep FRED's number text, and text
// that is no number stays text in every output.
import assert from "node:assert/strict";
import type { StdioSession } from "../../harness/spawn.ts";
import type { Received } from "../../fakes/upstream.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import { errorOf, ok, texts } from "../../harness/results.ts";
import { openProvider } from "../../harness/provider.ts";
import { startFakeFred, syntheticObservations } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";

type Result = Awaited<ReturnType<StdioSession["client"]["callTool"]>>;

const seriesIs = (id: string) => (r: Received) => r.url.searchParams.get("series_id") === id;
const categoryIs = (id: string) => (r: Received) => r.url.searchParams.get("category_id") === id;
const pageOf = (
  r: Received,
) => [Number(r.url.searchParams.get("offset")), Number(r.url.searchParams.get("limit"))];

/** `count` series built from the recorded GNPCA series, ids S00001, S00002, ... */
function seriesList(count: number, r: Received): Record<string, unknown> {
  const recorded = JSON.parse(fixtureText("fred/recorded_series_GNPCA.json")).seriess[0];
  const offset = Number(r.url.searchParams.get("offset") ?? 0);
  const limit = Number(r.url.searchParams.get("limit") ?? 1000);
  const seriess = [];
  for (let i = offset; i < Math.min(count, offset + limit); i++) {
    seriess.push({ ...recorded, id: `S${String(i + 1).padStart(5, "0")}` });
  }
  return { realtime_start: "2023-07-20", realtime_end: "2023-07-20", count, offset, limit, seriess };
}

Deno.test("fred large pulls: every page saved, jobs by row count, incomplete results say what is missing", async (t) => {
  await using fake = startFakeFred();
  for (const rows of [400, 600, 2500]) {
    fake.route({
      path: "/fred/series/observations",
      match: seriesIs(`R${rows}`),
      reply: (r) => ({ json: syntheticObservations(rows, pageOf(r)[0]!, pageOf(r)[1]!) }),
    });
  }
  // FRED's count says 1,500, but the rows end at 1,200 (a revision between pages).
  fake.route({
    path: "/fred/series/observations",
    match: seriesIs("SHORT"),
    reply: (r) => ({ json: { ...syntheticObservations(1200, pageOf(r)[0]!, pageOf(r)[1]!), count: 1500 } }),
  });
  // FRED's own value texts next to text that is no number (undocumented, but FRED sends text).
  fake.route({
    path: "/fred/series/observations",
    match: seriesIs("ODD"),
    reply: (r) => {
      const body = syntheticObservations(3, pageOf(r)[0]!, pageOf(r)[1]!);
      const values = ["1065.0", ".", "n/a"];
      body["observations"] = (body["observations"] as Record<string, unknown>[]).map((o, i) => ({
        ...o,
        value: values[i],
      }));
      return { json: body };
    },
  });
  fake.route({
    path: "/fred/category/series",
    match: categoryIs("999"),
    reply: (r) => ({ json: seriesList(1800, r) }),
  });
  fake.route({
    path: "/fred/category/series",
    match: categoryIs("998"),
    reply: (r) => ({ json: seriesList(450, r) }),
  });

  // One page could hold 100,000 rows; the job threshold is 500 rows; a file holds at most 2,000.
  await using s = await openProvider(fred({
    fake,
    settings: {
      job_row_threshold: 500,
      page_size: 100_000,
      max_rows: 2000,
      screen_row_threshold: 100,
    },
  }));
  const call = (name: string, args: Record<string, unknown>): Promise<Result> =>
    s.client.callTool({ name, arguments: args });
  const finished = async (accepted: Record<string, unknown>): Promise<Record<string, unknown>> => {
    assert.equal(accepted["status"], "accepted", JSON.stringify(accepted));
    for (let i = 0; i < 10; i++) {
      const view = ok(await call("fred_job_status", { job_id: accepted["job_id"], wait_seconds: 30 }));
      if (!["accepted", "processing"].includes(String(view["status"]))) return view;
    }
    throw new Error("the job did not finish");
  };

  await t.step(
    "the row threshold alone decides: 600 rows run as a job although one page holds them",
    async () => {
      const accepted = ok(
        await call("fred_series", { operation: "get_observations", series_id: "R600", output: "file" }),
      );
      assert.equal(accepted["estimated_rows"], 600);
      const done = await finished(accepted);
      assert.equal(done["status"], "completed");
      assert.equal((done["result"] as Record<string, unknown>)["rows_written"], 600);
      assert.deepEqual(fake.requests.filter(seriesIs("R600")).map(pageOf), [[0, 501], [501, 99]]);

      const small = ok(
        await call("fred_series", { operation: "get_observations", series_id: "R400", output: "file" }),
      );
      assert.equal(small["status"], "success", "400 rows stay in the call");
      assert.equal(small["rows_written"], 400);
      assert.deepEqual(fake.requests.filter(seriesIs("R400")).map(pageOf), [[0, 501]]);
    },
  );

  await t.step(
    "a pull past max_rows ends incomplete with what is missing, why, and where to go on",
    async () => {
      const accepted = ok(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "R2500",
          output: "file",
          format: "json",
        }),
      );
      assert.equal(accepted["estimated_rows"], 2000);
      const done = await finished(accepted);
      assert.equal(done["status"], "incomplete");
      assert.doesNotMatch(String(done["message"]), /Ready for analysis/);
      assert.match(String(done["message"]), /500 rows asked for are missing .*max_rows.*offset=2000/);
      const result = done["result"] as Record<string, unknown>;
      assert.equal(result["rows_written"], 2000);
      assert.equal(result["incomplete"], true);
      const missing = result["missing"] as Record<string, unknown>;
      assert.equal(missing["rows"], 500);
      assert.equal(missing["next_offset"], 2000);
      assert.match(String(missing["reason"]), /at most 2,000 rows \(max_rows\)/);
      const file = JSON.parse(Deno.readTextFileSync(String(result["file_path"])));
      assert.equal(file.observations.length, 2000);
      assert.equal(file.rows_written, 2000);
      assert.equal(file.limit, 2000, "the file's limit is the rows it was to hold, not the first page's");
      assert.equal(file.offset, 0);
      assert.equal(file.count, 2500);
      assert.equal(file.incomplete, true);
      assert.equal(file.missing.next_offset, 2000);
      const md = texts(await call("fred_job_status", { job_id: accepted["job_id"] }))[0]!;
      assert.match(md, /Status: \*\*incomplete\*\*/);
      assert.match(md, /\*\*Incomplete:\*\* 500 rows missing/);
      const listed = ok(await call("fred_job_list", { status_filter: "incomplete" }));
      assert.equal(listed["count"], 1);

      const rest = ok(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "R2500",
          offset: 2000,
          output: "file",
        }),
      );
      assert.equal(rest["rows_written"], 500, "the rest comes with the offset given");
      assert.equal(rest["incomplete"], undefined);
    },
  );

  await t.step("a series that ends before FRED's count is reported incomplete, not completed", async () => {
    const done = await finished(
      ok(await call("fred_series", { operation: "get_observations", series_id: "SHORT", output: "file" })),
    );
    assert.equal(done["status"], "incomplete");
    const result = done["result"] as Record<string, unknown>;
    assert.equal(result["rows_written"], 1200);
    assert.match(
      String((result["missing"] as Record<string, unknown>)["reason"]),
      /FRED stopped answering rows after 1,200/,
    );
    const csv = Deno.readTextFileSync(String(result["file_path"])).split("\r\n");
    assert.equal(csv.length - 2, 1200);
  });

  await t.step("a list longer than one FRED page is saved whole, in a job when large", async () => {
    const done = await finished(
      ok(await call("fred_category", { operation: "get_series", category_id: 999, output: "file" })),
    );
    assert.equal(done["status"], "completed");
    const result = done["result"] as Record<string, unknown>;
    assert.equal(result["rows_written"], 1800);
    assert.match(String(result["relative_path"]), /^categories\/category_999_series_/);
    const ids = Deno.readTextFileSync(String(result["file_path"])).trim().split("\r\n").slice(1).map((l) =>
      l.split(",")[0]
    );
    assert.equal(ids.length, 1800);
    assert.equal(new Set(ids).size, 1800, "no page twice");
    assert.equal(ids[0], "S00001");
    assert.equal(ids[1799], "S01800");
    assert.deepEqual(fake.requests.filter(categoryIs("999")).map(pageOf), [[0, 501], [501, 1000], [
      1501,
      299,
    ]]);

    const small = ok(
      await call("fred_category", { operation: "get_series", category_id: 998, output: "file" }),
    );
    assert.equal(small["status"], "success");
    assert.equal(small["rows_written"], 450);
    assert.equal(small["has_more"], undefined);
  });

  await t.step("impossible dates are refused naming the field, and FRED is not asked", async () => {
    const before = fake.requests.length;
    for (
      const [args, field] of [
        [{ observation_start: "2020-13-45" }, "observation_start"],
        [{ realtime_end: "2021-02-29" }, "realtime_end"],
        [{ vintage_dates: "2020-01-01,2021-02-30" }, "vintage_dates"],
        [{ vintage_dates: ["2020-01-01", "2020-04-31"] }, "vintage_dates"],
      ] as const
    ) {
      const e = errorOf(
        await call("fred_series", { operation: "get_observations", series_id: "GNPCA", ...args }),
      );
      assert.equal(e["error_type"], "VALIDATION_ERROR", JSON.stringify(args));
      assert.equal(e["field"], field);
      assert.match(String(e["message"]), new RegExp(field));
    }
    const leap = ok(
      await call("fred_series", {
        operation: "get_observations",
        series_id: "GNPCA",
        observation_start: "2020-02-29",
      }),
    );
    assert.equal(leap["status"], "success", "a real leap day is accepted");
    assert.equal(fake.requests.length, before + 1);
  });

  await t.step("files keep FRED's number text: 1065.0 stays 1065.0 in CSV and in JSON", async () => {
    const recorded = JSON.parse(fixtureText("fred/official_doc_series_observations_GNPCA.json"))
      .observations as {
        date: string;
        value: string;
      }[];
    const csv = ok(
      await call("fred_series", { operation: "get_observations", series_id: "GNPCA", output: "file" }),
    );
    const rows = Deno.readTextFileSync(String(csv["file_path"])).trim().split("\r\n").slice(1);
    assert.deepEqual(rows.map((l) => l.split(",").slice(0, 2)), recorded.map((o) => [o.date, o.value]));
    assert.ok(rows.some((l) => l.includes(",1065.0,")), "the recorded body's 1065.0");
    const json = ok(
      await call("fred_series", {
        operation: "get_observations",
        series_id: "GNPCA",
        output: "file",
        format: "json",
      }),
    );
    const text = Deno.readTextFileSync(String(json["file_path"]));
    assert.match(text, /"date":"1929-01-01","value":1065\.9\}/);
    assert.match(text, /"value":1065\.0\}/, "a JSON number with FRED's digits");
    const screen = ok(
      await call("fred_series", {
        operation: "get_observations",
        series_id: "GNPCA",
        output: "screen",
        limit: 84,
      }),
    );
    const values = (screen["items"] as { value: unknown }[]).map((i) => i.value);
    assert.ok(values.every((v) => typeof v === "number"), "structured values are numbers");
  });

  await t.step("text that is no number is kept in every output, never nulled", async () => {
    const args = { operation: "get_observations", series_id: "ODD" };
    const screen = await call("fred_series", { ...args, output: "screen" });
    const items = ok(screen)["items"] as { value: unknown }[];
    assert.deepEqual(items.map((i) => i.value), [1065, null, "n/a"]);
    assert.match(
      texts(screen)[0]!,
      /\| 1900-01-01 \| 1065\.0 \|[^\n]*\n\| 1900-01-02 \| missing \|[^\n]*\n\| 1900-01-03 \| n\/a \|/,
    );
    const csv = ok(await call("fred_series", { ...args, output: "file" }));
    const rows = Deno.readTextFileSync(String(csv["file_path"])).trim().split("\r\n").slice(1);
    assert.deepEqual(rows.map((l) => l.split(",").slice(0, 2)), [
      ["1900-01-01", "1065.0"],
      ["1900-01-02", ""],
      ["1900-01-03", "n/a"],
    ]);
    const json = ok(await call("fred_series", { ...args, output: "file", format: "json" }));
    const text = Deno.readTextFileSync(String(json["file_path"]));
    assert.match(text, /"date":"1900-01-01","value":1065\.0\}/);
    assert.match(text, /"date":"1900-01-02","value":null\}/);
    assert.match(text, /"date":"1900-01-03","value":"n\/a"\}/);
  });
});

Deno.test("fred sends a pull whose pages would not finish well within the call's deadline to a job", async () => {
  await using fake = startFakeFred();
  // 84 rows in pages of 20: four pages after the first, about four seconds by the server's
  // reckoning, more than half of a 6 s call deadline (the most a call's pages may take).
  await using s = await openProvider(
    fred({ fake, settings: { page_size: 20 }, env: { MCP_CALL_TIMEOUT: "6" } }),
  );
  const accepted = ok(
    await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", output: "file" },
    }),
  );
  assert.equal(accepted["status"], "accepted", "84 rows, far below the row threshold, still go to a job");
  const done = ok(
    await s.client.callTool({
      name: "fred_job_status",
      arguments: { job_id: accepted["job_id"], wait_seconds: 30 },
    }),
  );
  assert.equal(done["status"], "completed");
  assert.equal((done["result"] as Record<string, unknown>)["rows_written"], 84);
});
