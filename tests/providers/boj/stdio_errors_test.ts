// BOJ's error contract (docs/apis/boj.md "Errors") end to end: every error class, the retry policy and
// input validation, through the real server over stdio against a fake BOJ API.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { FakeUpstream, fixtureText } from "../../fakes/upstream.ts";
import type { Received, Route } from "../../fakes/upstream.ts";
import { boj, errorPayload, ok, texts } from "./_helpers.ts";

const byDb = (db: string) => (r: Received) => r.url.searchParams.get("db") === db;
const CODE = "/api/v1/getDataCode";
const M181091S = {
  STATUS: 503,
  MESSAGEID: "M181091S",
  MESSAGE: "データベースにアクセス中にエラーになりました。時間をおいてからやり直してください。",
  DATE: "2026-02-19T12:38:21.000+09:00",
};

const ROUTES: Route[] = [
  { path: CODE, match: byDb("E400"), reply: { status: 400, fixture: "boj/json_error_400_invalid_db.json" } },
  {
    path: CODE,
    match: byDb("R500"),
    reply: [{ status: 500, fixture: "boj/json_error_500_internal.json" }, {
      fixture: "boj/json_success_code_api.json",
    }],
  },
  { path: CODE, match: byDb("A500"), reply: { status: 500, fixture: "boj/json_error_500_internal.json" } },
  { path: CODE, match: byDb("A503"), reply: { status: 503, json: M181091S } },
  { path: CODE, match: byDb("B200"), reply: { status: 200, fixture: "boj/json_error_400_invalid_db.json" } },
  { path: CODE, match: byDb("CSVE"), reply: { status: 400, fixture: "boj/csv_error_json_payload.json" } },
  {
    path: CODE,
    match: byDb("B502"),
    reply: { status: 502, body: "<html><body>Bad gateway</body></html>", contentType: "text/html" },
  },
  {
    path: CODE,
    match: byDb("RST"),
    reply: { fixture: "boj/json_success_code_api.json", resetAfterBytes: 20 },
  },
  {
    path: CODE,
    match: byDb("HTML"),
    reply: { body: "<!DOCTYPE html><html><body>Maintenance</body></html>", contentType: "text/html" },
  },
  { path: CODE, match: byDb("CUT"), reply: { fixture: "boj/json_success_code_api.json", truncateAt: 150 } },
  { path: "/api/v1/getDataLayer", reply: { status: 400, fixture: "boj/observed_error_M181018E.json" } },
];

const sentTo = (fake: FakeUpstream, db: string) => fake.requests.filter(byDb(db)).length;

Deno.test("boj tools report each error class with its documented payload and retry only transport errors and 500/503", async () => {
  await using s = await openProvider(boj({
    routes: ROUTES,
    settings: { max_retries: 2, retry_backoff_ms: 5 },
    env: { LOG_LEVEL: "debug" },
  }));
  const { fake } = s;
  const seen: string[] = [];
  const fail = (result: unknown) => {
    seen.push(...texts(result));
    return errorPayload(result);
  };
  const call = (db: string, extra: Record<string, unknown> = {}) =>
    s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db, codes: ["TK99F1000601GCQ01000"], ...extra },
    });

  // API error with a message id: a 400 is not retried.
  const e400 = await call("E400");
  const p400 = fail(e400);
  assert.deepEqual(
    [p400.error_type, p400.status, p400.message_id, p400.retryable],
    ["API_ERROR", 400, "M181005E", false],
  );
  assert.match(String(p400.message), /M181005E: "DB名が正しくありません" \(Invalid database name\)/);
  assert.match(texts(e400)[0]!, /^Error \(API_ERROR\): .*\nNext step: .*boj_list_databases/);
  assert.equal(sentTo(fake, "E400"), 1, "a 400 is not retried");

  // A 500 is retried, and the retry succeeds.
  const r500 = ok(await call("R500"));
  assert.equal(r500.series[0].series_code, "TK99F1000601GCQ01000");
  assert.equal(sentTo(fake, "R500"), 2, "one retry after the 500");

  // A 500 that persists: 1 + max_retries attempts, backoff 5 then 10 ms, then a retryable API_ERROR.
  const p500 = fail(await call("A500"));
  assert.deepEqual(
    [p500.error_type, p500.status, p500.message_id, p500.retryable],
    ["API_ERROR", 500, "M181090S", true],
  );
  assert.equal(sentTo(fake, "A500"), 3);
  const waits = s.stderr().split("\n").filter((l) => l.includes('"upstream retry"') && l.includes("db=A500"))
    .map((l) => JSON.parse(l).wait_ms);
  assert.deepEqual(waits, [5, 10], "initial_backoff_ms * 2^n without jitter");

  const p503 = fail(await call("A503"));
  assert.deepEqual([p503.status, p503.message_id, p503.retryable], [503, "M181091S", true]);
  assert.equal(sentTo(fake, "A503"), 3, "503 is retried like 500");

  // A BOJ error status inside an HTTP 200 body is an API_ERROR too.
  const p200 = fail(await call("B200"));
  assert.deepEqual([p200.error_type, p200.status, p200.message_id], ["API_ERROR", 400, "M181005E"]);
  assert.equal(sentTo(fake, "B200"), 1);

  // A CSV request gets its error as JSON.
  const pcsv = fail(await call("CSVE", { format: "csv" }));
  assert.deepEqual([pcsv.error_type, pcsv.message_id], ["API_ERROR", "M181004E"]);

  // A non-BOJ 502 page: API_ERROR with the HTTP status, not retryable (seed: 500/503 only).
  const p502 = fail(await call("B502"));
  assert.deepEqual([p502.error_type, p502.status, p502.retryable], ["API_ERROR", 502, false]);
  assert.equal(p502.message_id, undefined);
  assert.equal(sentTo(fake, "B502"), 1);

  // A connection reset mid-body: TRANSPORT_ERROR, retried, retryable.
  const prst = fail(await call("RST"));
  assert.deepEqual([prst.error_type, prst.retryable], ["TRANSPORT_ERROR", true]);
  assert.equal(sentTo(fake, "RST"), 3);

  // Bodies that cannot be decoded: DECODE_ERROR, not retryable, not retried.
  for (const db of ["HTML", "CUT"]) {
    const p = fail(await call(db));
    assert.deepEqual([p.error_type, p.retryable], ["DECODE_ERROR", false], db);
    assert.equal(sentTo(fake, db), 1, db);
  }

  // The layer tool: the API's own English message for a bad frequency.
  const player = fail(
    await s.client.callTool({
      name: "boj_get_data_layer",
      arguments: { db: "MD10", frequency: "W", layers: ["*"] },
    }),
  );
  assert.deepEqual([player.error_type, player.status, player.message_id], ["API_ERROR", 400, "M181018E"]);
  assert.match(String(player.message), /"Invalid frequency"/);

  // No stack trace or file path leaks into any error text.
  assert.equal(seen.length, 10, "ten error results, one text block each");
  for (const text of seen) assert.doesNotMatch(text, /\n\s+at |file:\/\/|\.ts:\d+/);
});

Deno.test("boj tools turn a timeout into a retryable TRANSPORT_ERROR within the configured deadline", async () => {
  await using s = await openProvider(boj({
    routes: [{
      path: CODE,
      reply: { delayMs: 1500, fixture: "boj/json_success_code_api.json" },
    }],
    settings: { timeout: 0.3 },
  }));
  const started = performance.now();
  const p = errorPayload(
    await s.client.callTool({
      name: "boj_get_data_code",
      arguments: { db: "CO", codes: ["TK99F1000601GCQ01000"] },
    }),
  );
  const took = performance.now() - started;
  assert.deepEqual([p.error_type, p.retryable], ["TRANSPORT_ERROR", true]);
  assert.match(String(p.message), /did not answer within the 0\.3 s deadline/);
  assert.ok(took < 1400, `gave up after the deadline (${Math.round(took)} ms)`);
});

Deno.test("boj tools refuse invalid input with a VALIDATION_ERROR naming the field and call no upstream", async () => {
  await using s = await openProvider(boj());
  const { fake } = s;
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      "boj_get_data_code",
      { db: "FM08", codes: ["FM08'FXERD01"] },
      "codes",
      /database prefix.*Pass "FXERD01"/s,
    ],
    ["boj_get_data_code", { db: "FM08", codes: ["FXERD01,FXERD02"] }, "codes", /several codes/],
    ["boj_get_data_code", { db: "FM08", codes: ["ＦＸＥＲＤ０１"] }, "codes", /full-width/],
    ["boj_get_data_code", { db: "FM08", codes: [] }, "codes", /"codes"/],
    ["boj_get_data_code", { db: "FM０8", codes: ["FXERD01"] }, "db", /full-width/],
    ["boj_get_data_code", { db: "FM08", codes: ["FXERD01"], start_date: "2024-01" }, "start_date", /YYYYMM/],
    [
      "boj_get_data_code",
      { db: "FM08", codes: ["FXERD01"], start_date: "202402", end_date: "202401" },
      "end_date",
      /is after/,
    ],
    [
      "boj_get_data_code",
      { db: "FM08", codes: ["FXERD01"], start_position: 0 },
      "start_position",
      /start_position/,
    ],
    [
      "boj_get_data_code",
      { db: "FM08", codes: ["FXERD01"], frequency: "D" },
      "",
      /Unknown argument "frequency"/,
    ],
    ["boj_get_data_code", { db: "FM08", codes: ["FXERD01"], format: "xml" }, "format", /"format"/],
    ["boj_get_data_code", { db: "FM08", codes: ["FXERD01"], lang: "de" }, "lang", /"lang"/],
    [
      "boj_get_data_layer",
      { db: "FM01", layers: ["1"] },
      "frequency",
      /"frequency": required: Invalid option: expected one of "CY"\|"FY"/,
    ],
    ["boj_get_data_layer", { db: "FM01", frequency: "X", layers: ["1"] }, "frequency", /"frequency"/],
    [
      "boj_get_data_layer",
      { db: "FM01", frequency: "D", layers: ["1", "1", "1", "1", "1", "1"] },
      "layers",
      /"layers"/,
    ],
    [
      "boj_get_data_layer",
      { db: "FM01", frequency: "D", layers: ["0"] },
      "layers",
      /positive integer or "\*"/,
    ],
    [
      "boj_get_data_layer",
      { db: "FM01", frequency: "Q", layers: ["1"], start_date: "2024" },
      "start_date",
      /frequency Q.*YYYYQQ/,
    ],
    ["boj_get_metadata", { db: "FM01", limit: 0 }, "limit", /"limit"/],
    ["boj_get_parameter_catalog", { endpoint: "getdata" }, "endpoint", /"endpoint"/],
    ["boj_get_message_catalog", { status: "400" }, "status", /"status"/],
    // Lone surrogates (invalid UTF-16, which encodeURIComponent refuses) never reach a URL.
    ["boj_get_data_code", { db: "FM08", codes: ["a\udfffb"] }, "codes", /non-ASCII/],
    ["boj_get_data_code", { db: "\ud800", codes: ["FXERD01"] }, "db", /non-ASCII/],
    [
      "boj_get_data_code",
      { db: "FM08", codes: ["FXERD01"], start_date: "2024\udfff" },
      "start_date",
      /start_date/,
    ],
    ["boj_get_data_layer", { db: "FM01", frequency: "D", layers: ["\udfff"] }, "layers", /positive integer/],
  ];
  for (const [name, args, field, pattern] of cases) {
    const p = errorPayload(await s.client.callTool({ name, arguments: args }));
    const label = `${name} ${JSON.stringify(args)}`;
    assert.equal(p.error_type, "VALIDATION_ERROR", label);
    assert.equal(p.retryable, false, label);
    if (field) assert.equal(p.field, field, label);
    assert.match(`${p.message} ${p.hint ?? ""}`, pattern, label);
  }
  assert.equal(fake.requests.length, 0, "nothing reached the upstream");
});

Deno.test("boj tools abort the upstream request when the client cancels the call", async () => {
  await using s = await openProvider(boj({
    routes: [{
      path: CODE,
      reply: { delayMs: 1200, fixture: "boj/json_success_code_api.json" },
    }],
  }));
  const { fake } = s;
  const controller = new AbortController();
  const pending = s.client.callTool(
    { name: "boj_get_data_code", arguments: { db: "CO", codes: ["TK99F1000601GCQ01000"] } },
    undefined,
    { signal: controller.signal },
  );
  while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await assert.rejects(pending);
  const deadline = Date.now() + 2000;
  while (!/"upstream".*"error":"CANCELLED"/.test(s.stderr()) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(s.stderr(), /"msg":"upstream".*"error":"CANCELLED"/, "the server aborted its upstream fetch");
  assert.equal(fake.requests.length, 1, "and did not retry it");
});

const IN_BODY_503 = { status: 200, json: M181091S };
const MAINTENANCE = {
  body: "<!DOCTYPE html><html><body>Maintenance</body></html>",
  contentType: "text/html",
};

Deno.test("boj tools never cache an HTTP 200 answer whose body is not STATUS 200", async () => {
  await using s = await openProvider(boj({
    routes: [
      { path: CODE, match: byDb("P503"), reply: IN_BODY_503 },
      {
        path: CODE,
        match: byDb("B200"),
        reply: { status: 200, fixture: "boj/json_error_400_invalid_db.json" },
      },
      { path: CODE, match: byDb("MAINT"), reply: MAINTENANCE },
      { path: CODE, match: byDb("CO"), reply: { fixture: "boj/json_success_code_api.json" } },
    ],
    settings: { cache_ttl: 60, max_retries: 0 },
  }));
  const { fake } = s;
  const call = (db: string) =>
    s.client.callTool({ name: "boj_get_data_code", arguments: { db, codes: ["TK99F1000601GCQ01000"] } });
  for (const db of ["P503", "B200", "MAINT"]) {
    errorPayload(await call(db));
    errorPayload(await call(db));
    assert.equal(sentTo(fake, db), 2, `${db}: the second call reaches the BOJ again`);
  }
  ok(await call("CO"));
  ok(await call("CO"));
  assert.equal(sentTo(fake, "CO"), 1, "a STATUS 200 answer is cached");
});

Deno.test("boj tools retry a 500/503 STATUS inside an HTTP 200 body like an HTTP 500/503", async () => {
  await using s = await openProvider(boj({
    routes: [
      { path: CODE, match: byDb("P503"), reply: IN_BODY_503 },
      {
        path: CODE,
        match: byDb("R503"),
        reply: [IN_BODY_503, { fixture: "boj/json_success_code_api.json" }],
      },
      {
        path: CODE,
        match: byDb("B200"),
        reply: { status: 200, fixture: "boj/json_error_400_invalid_db.json" },
      },
    ],
    settings: { max_retries: 2, retry_backoff_ms: 5 },
    env: { LOG_LEVEL: "debug" },
  }));
  const { fake } = s;
  const call = (db: string) =>
    s.client.callTool({ name: "boj_get_data_code", arguments: { db, codes: ["TK99F1000601GCQ01000"] } });

  // An API error of STATUS 500/503 is retried wherever the STATUS is carried (docs/apis/boj.md "Retries").
  const p = errorPayload(await call("P503"));
  assert.deepEqual([p.error_type, p.status, p.message_id, p.retryable], ["API_ERROR", 503, "M181091S", true]);
  assert.equal(sentTo(fake, "P503"), 3, "1 + max_retries attempts");
  const waits = s.stderr().split("\n").filter((l) => l.includes('"upstream retry"') && l.includes("db=P503"))
    .map((l) => JSON.parse(l).wait_ms);
  assert.deepEqual(waits, [5, 10], "initial_backoff_ms * 2^n without jitter");

  assert.equal(ok(await call("R503")).series[0].series_code, "TK99F1000601GCQ01000");
  assert.equal(sentTo(fake, "R503"), 2, "one retry after the 503 body");

  errorPayload(await call("B200"));
  assert.equal(sentTo(fake, "B200"), 1, "a 400 body is not retried");
});

Deno.test("boj tools: a 429 is retryable with retry_after_s, M181013E names the code, errors in STATUS 200 and garbage bodies are errors", async () => {
  const base = JSON.parse(fixtureText("boj/json_success_code_api.json"));
  let current: unknown = null;
  await using s = await openProvider(boj({
    routes: [
      {
        path: CODE,
        match: byDb("SLOW"),
        reply: {
          status: 429,
          headers: { "retry-after": "30" },
          body: "Too Many Requests",
          contentType: "text/plain",
        },
      },
      {
        path: CODE,
        match: byDb("NOPE"),
        reply: {
          status: 400,
          json: {
            STATUS: 400,
            MESSAGEID: "M181013E",
            MESSAGE: "指定した系列コードは存在しません。:2番目のコード",
            DATE: "2026-02-19T12:38:21.000+09:00",
          },
        },
      },
      {
        path: CODE,
        match: byDb("E200"),
        reply: {
          json: { ...base, MESSAGEID: "M181005E", MESSAGE: "DB名が正しくありません。", RESULTSET: [] },
        },
      },
      {
        path: /^\/api\/v1\/get/,
        match: byDb("JUNK"),
        reply: () =>
          typeof current === "string" ? { body: current, contentType: "text/csv" } : { json: current },
      },
    ],
    settings: { max_retries: 2 },
  }));
  const { fake } = s;
  const call = (db: string, codes = ["TK99F1000601GCQ01000"]) =>
    s.client.callTool({ name: "boj_get_data_code", arguments: { db, codes } });

  // 429: retryable, with the Retry-After BOJ sent, and a hint that agrees; not retried here.
  const slow = errorPayload(await call("SLOW"));
  assert.deepEqual(
    [slow.error_type, slow.status, slow.retryable, slow.retry_after_s],
    ["API_ERROR", 429, true, 30],
  );
  assert.match(String(slow.hint), /Wait 30 seconds/);
  assert.equal(sentTo(fake, "SLOW"), 1);

  // M181013E: the manual's text, and in English which code of the request it means.
  const nope = errorPayload(await call("NOPE", ["TK99F1000601GCQ01000", "NOPE99"]));
  assert.equal(nope.message_id, "M181013E");
  assert.match(String(nope.message), /\(Series code 2 of the request, "NOPE99", does not exist\)/);
  assert.doesNotMatch(String(nope.message), /code number|\*/);
  const catalog = await s.client.callTool({
    name: "boj_get_message_catalog",
    arguments: { message_id: "M181013E" },
  });
  assert.doesNotMatch(texts(catalog)[0]!, /code number \*/);

  // STATUS 200 with an error MESSAGEID is an error, not "no data".
  const e200 = errorPayload(await call("E200"));
  assert.deepEqual([e200.error_type, e200.message_id, e200.retryable], ["API_ERROR", "M181005E", false]);
  assert.match(String(e200.message), /STATUS 200 but with error M181005E/);

  // Bodies that are no BOJ answer: DECODE_ERROR from every data tool, never an empty result.
  const garbage: unknown[] = [
    null,
    [],
    "null",
    { STATUS: 200, MESSAGEID: "M181000I" },
    { STATUS: 200, MESSAGEID: "M181000I", RESULTSET: "none" },
    { STATUS: 200, MESSAGEID: "M181000I", RESULTSET: [1, 2, 3] },
    { STATUS: 200, MESSAGEID: "M181000I", RESULTSET: [{ VALUES: {} }] },
    "STATUS,200\nMESSAGEID,M181000I\nMESSAGE,Successfully completed\n",
  ];
  for (const body of garbage) {
    current = body;
    for (
      const [name, args] of [
        ["boj_get_data_code", { db: "JUNK", codes: ["X1"] }],
        ["boj_get_data_layer", { db: "JUNK", frequency: "D", layers: ["1"] }],
        ["boj_get_metadata", { db: "JUNK" }],
      ] as const
    ) {
      if (name === "boj_get_metadata" && JSON.stringify(body).includes("VALUES")) continue;
      const p = errorPayload(await s.client.callTool({ name, arguments: args }));
      assert.equal(p.error_type, "DECODE_ERROR", `${name} on ${JSON.stringify(body)}: ${p.message}`);
    }
  }
});

Deno.test("boj: a date written YYYY-MM-DD gets the corrected call as its first next call", async () => {
  await using s = await openProvider(boj());
  const code = await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db: "FM08", codes: ["FXERD01"], start_date: "2024-01-15" },
  });
  assert.deepEqual(errorPayload(code)["next_calls"], [{
    tool: "boj_get_data_code",
    arguments: { db: "FM08", codes: ["FXERD01"], start_date: "202401" },
    for: "the corrected call",
  }]);
  assert.match(
    texts(code)[0]!,
    /the corrected call: boj_get_data_code \{"db":"FM08","codes":\["FXERD01"\],"start_date":"202401"\}/,
  );
  // A quarterly layer: the quarter the date falls in.
  const layer = await s.client.callTool({
    name: "boj_get_data_layer",
    arguments: { db: "CO", frequency: "Q", layers: ["1"], start_date: "2024-08-01" },
  });
  const fix = (errorPayload(layer)["next_calls"] as { arguments: Record<string, unknown> }[])[0]!;
  assert.equal(fix.arguments["start_date"], "202403");
});
