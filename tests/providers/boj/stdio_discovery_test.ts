// BOJ's prompts, resources, resource templates and completions (docs/apis/boj.md), over stdio.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import { boj } from "./_helpers.ts";
import type { ProviderSession } from "../../harness/provider.ts";

function promptText(result: { messages: { content: { type: string; text?: string } }[] }): string {
  return result.messages.map((m) => m.content.text ?? "").join("\n");
}

async function read(s: ProviderSession, uri: string): Promise<{ mimeType?: string; text: string }> {
  const { contents } = await s.client.readResource({ uri });
  assert.equal(contents.length, 1);
  const c = contents[0]! as { uri: string; mimeType?: string; text?: string };
  assert.equal(c.uri, uri);
  return { ...(c.mimeType ? { mimeType: c.mimeType } : {}), text: c.text ?? "" };
}

Deno.test("boj prompts list and render the three flows with the arguments filled in", async () => {
  await using s = await openProvider(boj());
  const { prompts } = await s.client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), [
    "boj_discovery_flow",
    "boj_fetch_data_code_flow",
    "boj_latest_value_flow",
  ]);
  const fetchFlow = prompts[1]!;
  assert.deepEqual(
    fetchFlow.arguments?.filter((a) => a.required).map((a) => a.name),
    ["db", "codes"],
  );

  const discovery = promptText(
    await s.client.getPrompt({
      name: "boj_discovery_flow",
      arguments: { topic: "yen exchange rate", frequency: "d" },
    }),
  );
  assert.match(discovery, /about "yen exchange rate"/);
  assert.match(discovery, /boj_list_databases/);
  assert.match(discovery, /boj_get_metadata/);
  assert.match(discovery, /boj_get_parameter_catalog \{"endpoint":"all"\}/);
  assert.match(discovery, /Use frequency D\. For frequency D write periods as YYYYMM/);
  assert.match(discovery, /next_position/);
  assert.match(discovery, /boj_get_message_catalog/);

  const known = promptText(
    await s.client.getPrompt({
      name: "boj_discovery_flow",
      arguments: { db: "fm08", endpoint: "get_data_code" },
    }),
  );
  assert.match(
    known,
    /The database is FM08: start at step 2 with boj_get_metadata \{"db":"FM08","lang":"en"\}/,
  );
  assert.match(known, /boj_get_parameter_catalog \{"endpoint":"get_data_code"\}/);

  const fetch = promptText(
    await s.client.getPrompt({
      name: "boj_fetch_data_code_flow",
      arguments: {
        db: "fm01",
        codes: "STRDCLUCON, FM01'STRDCLUCONH",
        start_date: "202401",
        format: "JSON",
        lang: "EN",
      },
    }),
  );
  assert.match(
    fetch,
    /boj_get_data_code \{"db":"FM01","codes":\["STRDCLUCON","STRDCLUCONH"\],"start_date":"202401","format":"json","lang":"en"\}/,
  );
  assert.match(fetch, /FM01'STRDCLUCONH carried a database prefix/);
  assert.match(fetch, /start_position=next_position/);

  const latest = promptText(
    await s.client.getPrompt({
      name: "boj_latest_value_flow",
      arguments: { db: "FM08", series_code: "FXERD01", frequency: "D" },
    }),
  );
  assert.match(latest, /boj_get_metadata \{"db":"FM08","query":"FXERD01","lang":"en"\}/);
  assert.match(latest, /boj_get_data_code \{"db":"FM08","codes":\["FXERD01"\]/);
  assert.match(latest, /Read `latest`/);
  assert.match(latest, /YYYYMM/);
  assert.match(latest, /credit/);
});

Deno.test("boj resources and templates list and read the guides and catalogs", async () => {
  await using s = await openProvider(boj());
  const { fake } = s;
  const { resources } = await s.client.listResources();
  const uris = resources.map((r) => r.uri);
  for (
    const uri of [
      "boj://guide/call-order",
      "boj://guide/input-normalization",
      "boj://catalog/databases",
      "boj://catalog/parameters/get_data_layer",
      "boj://catalog/messages/503",
    ]
  ) {
    assert.ok(uris.includes(uri), `${uri} is listed`);
  }
  const { resourceTemplates } = await s.client.listResourceTemplates();
  // The core's own template (opendata://files/...) is listed too; the BOJ's are these two.
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).filter((u) => u.startsWith("boj://")), [
    "boj://catalog/parameters/{endpoint}",
    "boj://catalog/messages/{status}",
  ]);

  const order = await read(s, "boj://guide/call-order");
  assert.equal(order.mimeType, "text/markdown");
  assert.ok(order.text.indexOf("boj_list_databases") < order.text.indexOf("boj_get_data_code"));
  const norm = await read(s, "boj://guide/input-normalization");
  assert.match(norm.text, /`JSON`\/`CSV` accepted/);
  assert.match(norm.text, /Q \(Quarter\): YYYYQQ/);
  const dbs = await read(s, "boj://catalog/databases");
  assert.equal(dbs.mimeType, "application/json");
  const dbPayload = JSON.parse(dbs.text);
  assert.equal(dbPayload.count, 50);
  assert.equal(dbPayload.source_date, "2026-02-18");

  const params = JSON.parse((await read(s, "boj://catalog/parameters/get_data_code")).text);
  assert.equal(params.endpoint_scope, "getDataCode");
  assert.deepEqual(params.mcp_language_codes, ["jp", "en"]);
  assert.ok(params.parameters.some((p: { name: string }) => p.name === "CODE"));
  assert.ok(!params.parameters.some((p: { name: string }) => p.name === "LAYER"));
  const messages = JSON.parse((await read(s, "boj://catalog/messages/500")).text);
  assert.equal(messages.status_filter, 500);
  assert.deepEqual(messages.messages.map((m: { message_id: string }) => m.message_id), ["M181090S"]);
  assert.ok(messages.source_document);

  await assert.rejects(
    () => s.client.readResource({ uri: "boj://catalog/parameters/bogus" }),
    /Unknown endpoint "bogus"/,
  );
  await assert.rejects(
    () => s.client.readResource({ uri: "boj://catalog/messages/abc" }),
    /not a 3-digit number/,
  );
  assert.equal(fake.requests.length, 0);
});

Deno.test("boj completion/complete completes db, format, lang, endpoint, status and frequency by prefix", async () => {
  await using s = await openProvider(boj());
  assert.ok(s.client.getServerCapabilities()?.completions, "the completions capability is announced");
  const prompt = async (name: string, arg: string, value: string) =>
    (await s.client.complete({ ref: { type: "ref/prompt", name }, argument: { name: arg, value } }))
      .completion.values;
  const template = async (uri: string, arg: string, value: string) =>
    (await s.client.complete({ ref: { type: "ref/resource", uri }, argument: { name: arg, value } }))
      .completion.values;

  assert.deepEqual(await prompt("boj_fetch_data_code_flow", "db", "fm0"), [
    "FM01",
    "FM02",
    "FM03",
    "FM04",
    "FM05",
    "FM06",
    "FM07",
    "FM08",
    "FM09",
  ]);
  assert.deepEqual(await prompt("boj_latest_value_flow", "db", "b"), ["BS01", "BS02", "BP01", "BIS"]);
  assert.deepEqual(await prompt("boj_fetch_data_code_flow", "format", "J"), ["json"]);
  assert.deepEqual(await prompt("boj_fetch_data_code_flow", "lang", ""), ["jp", "en"]);
  assert.deepEqual(await prompt("boj_latest_value_flow", "frequency", "c"), ["CY", "CH"]);
  assert.deepEqual(await prompt("boj_discovery_flow", "frequency", "w"), ["W"]);
  assert.deepEqual(await prompt("boj_discovery_flow", "endpoint", "get_data_"), [
    "get_data_code",
    "get_data_layer",
  ]);
  assert.deepEqual(await template("boj://catalog/parameters/{endpoint}", "endpoint", "get_m"), [
    "get_metadata",
  ]);
  assert.deepEqual(await template("boj://catalog/messages/{status}", "status", "5"), ["500", "503"]);
  assert.deepEqual(await template("boj://catalog/messages/{status}", "status", ""), [
    "200",
    "400",
    "500",
    "503",
  ]);
  assert.deepEqual(await prompt("boj_fetch_data_code_flow", "db", "xyz"), []);
});

Deno.test("boj flow: a model goes from a topic to a database, a series and its latest value", async () => {
  await using s = await openProvider(boj({
    routes: [
      { path: "/api/v1/getMetadata", reply: { fixture: "boj/constructed_getMetadata_FM01_en.json" } },
      { path: "/api/v1/getDataCode", reply: { fixture: "boj/observed_getDataCode_FM01_STRDCLUCON_en.json" } },
    ],
  }));
  const { fake } = s;
  const guide = promptText(
    await s.client.getPrompt({ name: "boj_discovery_flow", arguments: { topic: "call rate" } }),
  );
  assert.match(guide, /boj_list_databases/);

  const dbs = (await s.client.callTool({ name: "boj_list_databases", arguments: {} })).structuredContent as {
    databases: { code: string; name_en: string }[];
  };
  const db = dbs.databases.find((d) => /call rate/i.test(d.name_en))!.code;
  assert.equal(db, "FM01");

  const meta = (await s.client.callTool({
    name: "boj_get_metadata",
    arguments: { db, lang: "en", query: "call rate average" },
  })).structuredContent as { entries: { series_code: string; frequency?: string }[] };
  const series = meta.entries.find((e) => e.series_code !== "")!;
  assert.deepEqual([series.series_code, series.frequency], ["STRDCLUCON", "DAILY"]);

  const data = (await s.client.callTool({
    name: "boj_get_data_code",
    arguments: { db, codes: [series.series_code], lang: "en", start_date: "199801", end_date: "199801" },
  })).structuredContent as { series: { latest: unknown }[]; source: { credit_en: string } };
  assert.deepEqual(
    data.series[0]!.latest,
    { survey_date: "19980105", period: "1998-01-05", value: 0.49 },
    "the null after it is skipped",
  );
  assert.match(data.source.credit_en, /not guaranteed by the Bank of Japan/);
  assert.deepEqual(fake.requests.map((r) => r.url.pathname), ["/api/v1/getMetadata", "/api/v1/getDataCode"]);
});
