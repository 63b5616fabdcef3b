// What a result may hold, end to end: every series of a large layer is reachable by following
// continue_with, no upstream field can push a result past the character limit, and include_raw
// keeps a useful excerpt. The real server over stdio against a fake BOJ API.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import type { Received } from "../../fakes/upstream.ts";
import { boj, ok, texts } from "./_helpers.ts";
import { payloadOf } from "../../harness/results.ts";

const LAYER = "/api/v1/getDataLayer";
const q = (r: Received, name: string) => r.url.searchParams.get(name);
const LIMIT = 25_000;

/** One synthetic daily series of the FM01 shape (constructed_getDataLayer_FM01_D_en.json). */
function series(i: number, points: number): Record<string, unknown> {
  return {
    SERIES_CODE: `SYNTH${String(i).padStart(4, "0")}`,
    NAME_OF_TIME_SERIES: `Synthetic call rate series number ${i}, uncollateralized overnight (daily)`,
    UNIT: "percent per annum",
    FREQUENCY: "DAILY",
    CATEGORY: "Call Rate",
    LAST_UPDATE: 20260220,
    VALUES: {
      SURVEY_DATES: Array.from({ length: points }, (_, d) => 20260201 + d),
      VALUES: Array.from(
        { length: points },
        (_, d) => d === points - 1 ? null : Math.round(i * 7 + d) / 1000,
      ),
    },
  };
}

/**
 * A layer of 300 series, as BOJ pages it: at most 250 per request, then NEXTPOSITION (the rank
 * of the next series in the whole database, here 251).
 */
function layerAnswer(startPosition: number): Record<string, unknown> {
  const base = JSON.parse(fixtureText("boj/constructed_getDataLayer_FM01_D_en.json"));
  const first = startPosition - 1;
  const count = Math.min(250, 300 - first);
  return {
    ...base,
    PARAMETER: {
      ...base.PARAMETER,
      LAYER1: "*",
      STARTPOSITION: startPosition === 1 ? "" : String(startPosition),
    },
    NEXTPOSITION: first + count < 300 ? first + count + 1 : null,
    RESULTSET: Array.from({ length: count }, (_, i) => series(first + i, 5)),
  };
}

Deno.test("boj_get_data_layer delivers all 300 series of a layer exactly once by following continue_with", async () => {
  await using s = await openProvider(boj({
    routes: [
      { path: LAYER, reply: (r) => ({ json: layerAnswer(Number(q(r, "startPosition") ?? "1")) }) },
    ],
  }));
  const { fake } = s;
  const expected = Array.from({ length: 300 }, (_, i) => `SYNTH${String(i).padStart(4, "0")}`);
  for (const format of ["markdown", "json"]) {
    const delivered: string[] = [];
    const perCall: number[] = [];
    let next: { start_position: number | null; series_offset: number } | null = null;
    let calls = 0;
    do {
      const args: Record<string, unknown> = { db: "FM01", frequency: "D", layers: ["*"], lang: "en" };
      if (next?.start_position != null) args["start_position"] = next.start_position;
      if (next && next.series_offset > 0) args["series_offset"] = next.series_offset;
      args["response_format"] = format;
      const r = await s.client.callTool({ name: "boj_get_data_layer", arguments: args });
      const sc = ok(r);
      assert.ok(texts(r)[0]!.length <= LIMIT, `${format} call ${calls}: text ${texts(r)[0]!.length}`);
      assert.ok(JSON.stringify(sc).length <= LIMIT, `${format} call ${calls}: structured`);
      const codes = sc.series.map((x: { series_code: string }) => x.series_code);
      assert.ok(codes.length > 0, "every call moves on");
      delivered.push(...codes);
      perCall.push(codes.length);
      for (const x of sc.series) assert.equal(x.points.length, 5, "no observation was cut");
      next = sc.continue_with;
      if (next !== null) {
        // The text says the same as continue_with.
        assert.match(
          sc.notices[0],
          next.series_offset > 0 ? new RegExp(`series_offset=${next.series_offset}`) : new RegExp(
            `start_position=${next.start_position}`,
          ),
        );
      }
      calls++;
    } while (next !== null && calls < 40);
    assert.equal(next, null, `${format}: complete after ${calls} calls`);
    assert.deepEqual(delivered, expected, `${format}: all 300 codes, each exactly once, in BOJ's order`);
    assert.ok(calls >= 4, `${format}: ${calls} calls (${perCall.join(", ")} series each)`);
  }
  const positions = new Set(fake.requests.map((r) => q(r, "startPosition")));
  assert.deepEqual([...positions].sort(), ["251", null].sort(), "BOJ's own paging was followed too");

  // Past the end of BOJ's answer: a VALIDATION_ERROR naming series_offset.
  const past = await s.client.callTool({
    name: "boj_get_data_layer",
    arguments: { db: "FM01", frequency: "D", layers: ["*"], series_offset: 250 },
  });
  assert.equal(past.isError, true);
  const payload = payloadOf(past);
  assert.deepEqual([payload.error_type, payload.field], ["VALIDATION_ERROR", "series_offset"]);
});

Deno.test("boj tools keep text and structuredContent within the limit when BOJ sends 5 MB fields", async () => {
  const huge = "X".repeat(5 * 1024 * 1024);
  const base = JSON.parse(fixtureText("boj/json_success_code_api.json"));
  const code = {
    ...base,
    MESSAGE: "M".repeat(1_000_000),
    PARAMETER: {
      ...base.PARAMETER,
      DB: huge,
      ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`K${i}`, "v"])),
    },
    RESULTSET: [{
      ...base.RESULTSET[0],
      NAME_OF_TIME_SERIES_J: "名".repeat(1_000_000),
      UNIT_J: "U".repeat(500_000),
    }],
  };
  const metadata = JSON.parse(fixtureText("boj/observed_getMetadata_FM01_en.json"));
  metadata.DB = huge;
  metadata.RESULTSET[0].NOTES = "N".repeat(2_000_000);
  await using s = await openProvider(boj({
    routes: [
      { path: "/api/v1/getDataCode", reply: { json: code } },
      { path: "/api/v1/getMetadata", reply: { json: metadata } },
    ],
  }));
  for (const format of ["markdown", "json"]) {
    for (const include_raw of [false, true]) {
      for (
        const [name, args] of [
          ["boj_get_data_code", { db: "CO", codes: ["TK99F1000601GCQ01000"] }],
          ["boj_get_metadata", { db: "FM01", lang: "en" }],
        ] as const
      ) {
        const label = `${name} ${format}${include_raw ? " include_raw" : ""}`;
        const r = await s.client.callTool({
          name,
          arguments: { ...args, response_format: format, include_raw },
        });
        const sc = ok(r);
        const size = JSON.stringify(r).length;
        assert.ok(texts(r)[0]!.length <= LIMIT, `${label}: text ${texts(r)[0]!.length}`);
        assert.ok(JSON.stringify(sc).length <= LIMIT, `${label}: structured ${JSON.stringify(sc).length}`);
        assert.ok(size <= 2 * LIMIT + 2_000, `${label}: whole reply ${size}`);
        assert.equal(sc.truncated, true, label);
        assert.ok(sc.notices.some((n: string) => /far longer than any real value/.test(n)), label);
        if (include_raw) {
          assert.ok(sc.raw.length >= 5_000, `${label}: a useful raw excerpt (${sc.raw.length} characters)`);
          assert.equal(sc.raw_truncated, true);
          assert.ok(
            sc.notices.some((n: string) => /raw holds the first [\d,]+ of the [\d,]+ characters/.test(n)),
          );
        }
      }
    }
  }
  // The data itself is whole: the series, its point and its latest value.
  const sc = ok(
    await s.client.callTool({ name: "boj_get_data_code", arguments: { db: "CO", codes: ["X1"] } }),
  );
  assert.deepEqual(sc.series[0].latest, { survey_date: "202401", period: "2024Q1", value: 11 });
});

Deno.test("boj include_raw keeps an excerpt of the body next to a large answer, with a notice", async () => {
  const answer = {
    ...JSON.parse(fixtureText("boj/json_success_code_api.json")),
    RESULTSET: Array.from({ length: 40 }, (_, i) => series(i, 200)),
  };
  await using s = await openProvider(
    boj({ routes: [{ path: "/api/v1/getDataCode", reply: { json: answer } }] }),
  );
  const codes = Array.from({ length: 40 }, (_, i) => `SYNTH${String(i).padStart(4, "0")}`);
  const r = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db: "FM01", codes, include_raw: true },
  });
  const sc = ok(r);
  assert.ok(texts(r)[0]!.length <= LIMIT && JSON.stringify(sc).length <= LIMIT);
  assert.ok(sc.raw.length >= 0.25 * LIMIT * 0.8, `raw excerpt of ${sc.raw.length} characters`);
  assert.equal(
    sc.raw,
    JSON.stringify(answer).slice(0, sc.raw.length),
    "the excerpt is the start of the body",
  );
  assert.match(texts(r)[0]!, /## Raw body \(excerpt\)/);
  assert.ok(sc.notices.some((n: string) => /raw holds the first/.test(n)));
  // The data is still reachable: the series left out follow with series_offset.
  assert.ok(sc.continue_with === null || sc.continue_with.series_offset === sc.series_count);
});
