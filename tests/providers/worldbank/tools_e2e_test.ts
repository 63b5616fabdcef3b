// The four World Bank tools end to end: the real server in process (one search test spawns the
// real process with its scoped permissions, the provider's smoke test), the SDK Client (which
// checks structuredContent against each outputSchema), and a fake WDS upstream serving the
// recorded fixtures, synthetic replies and faults.
import assert from "node:assert/strict";
import { FakeUpstream } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";
import { openProvider, preset } from "../../harness/provider.ts";
import { errorOf as errorPayload, ok, providerTools } from "../../harness/results.ts";
import type { ToolResult } from "../../harness/results.ts";

const PATH = "/api/v3/wds";
const REAL_SEARCH = "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json";
const REAL_FACETS = "worldbank/wds_v3_qterm-financial-inclusion_rows0_fct-lang_exact_observed_trimmed.json";

type Result = ToolResult;
type Structured = Record<string, unknown>;
interface Doc {
  id: string;
  title: string;
  document_date: string | null;
  countries: string[];
  languages: string[];
  abstract: string | null;
  url: string | null;
  pdf_url: string | null;
  [key: string]: unknown;
}

function text(result: Result, index = 0): string {
  const block = (result.content as { type: string; text: string }[])[index];
  assert.ok(block, `content[${index}] exists`);
  return block.text;
}

function longPage(rows: number, offset: number): unknown {
  const documents: Record<string, unknown> = { facets: {} };
  for (let i = 0; i < rows; i++) {
    const id = String(99_980_000 + offset + i);
    documents[`D${id}`] = {
      id,
      display_title: `Synthetic long document ${offset + i + 1}`,
      docdt: "2022-01-01T00:00:00Z",
      docty: "Report",
      count: "World",
      lang: "English",
      abstracts: { "cdata!": `Synthetic abstract ${i} `.repeat(120) },
      url: `http://documents.worldbank.org/curated/en/${id}`,
      pdfurl: `http://documents.worldbank.org/curated/en/${id}/pdf/x.pdf`,
    };
  }
  return { rows, os: offset, page: 1, total: 500, documents };
}

const HTML_PAGE = "<!DOCTYPE html><html><head><title>Service Unavailable</title></head>" +
  "<body><h1>The service is temporarily unavailable</h1></body></html>";

function route(req: Received): Reply {
  const p = req.url.searchParams;
  const id = p.get("id");
  if (id !== null) {
    if (id === "18419181") return { fixture: REAL_SEARCH };
    if (id === "99990021") return { fixture: "worldbank/synthetic_details_id_99990021.json" };
    if (id === "99990099") {
      const record = { id, display_title: "Synthetic record with a very long abstract" };
      const abstracts = { "cdata!": "Synthetic sentence of a long abstract. ".repeat(400) };
      return { json: { total: 1, documents: { D99990099: { ...record, abstracts }, facets: {} } } };
    }
    return { fixture: "worldbank/synthetic_empty.json" };
  }
  const guid = p.get("guid");
  if (guid !== null) {
    return guid === "999900210000000021"
      ? { fixture: "worldbank/synthetic_details_id_99990021.json" }
      : { fixture: "worldbank/synthetic_empty.json" };
  }
  const project = p.get("projectid");
  if (project !== null) {
    return project === "P123365"
      ? { fixture: "worldbank/synthetic_project_P123365.json" }
      : { fixture: "worldbank/synthetic_empty.json" };
  }
  const fct = p.get("fct");
  if (fct === "lang_exact") return { fixture: REAL_FACETS };
  if (fct === "docty_exact,count_exact") return { fixture: "worldbank/synthetic_facets_docty_count.json" };
  if (fct === "sectr_exact") {
    const values = Array.from({ length: 100 }, (_, i) => ({
      name: `Synthetic sector with a long descriptive name number ${i}`,
      count: 1000 - i,
    }));
    return { json: { total: 5000, documents: { facets: { sectr_exact: values } } } };
  }
  if (fct === "count_exact,lang_exact,docty_exact") {
    const facet = (name: string) =>
      Object.fromEntries(
        Array.from(
          { length: 100 },
          (_, i) => [String(i), { name: `${name} value ${i} ${"x".repeat(40)}`, count: 500 - i }],
        ),
      );
    return {
      json: {
        total: 9000,
        documents: {
          facets: {
            count_exact: facet("Country"),
            lang_exact: facet("Language"),
            docty_exact: facet("Type"),
          },
        },
      },
    };
  }
  if (fct === "topic_exact") {
    // Facets as a list rather than an object keyed "0", "1", ...: parsed the same way.
    return {
      json: {
        total: 7,
        documents: { facets: { topic_exact: [{ name: "Energy", label: "Energy", count: "7" }] } },
      },
    };
  }
  switch (p.get("qterm")) {
    case "post office":
      // Past the 44 matches the upstream answers the total and no documents.
      if (Number(p.get("os")) >= 44) {
        return { json: { rows: 20, os: 100, page: 6, total: 44, documents: { facets: {} } } };
      }
      return { fixture: REAL_SEARCH };
    case "shapes":
      return { fixture: "worldbank/synthetic_search_list_shapes.json" };
    case "long":
      return { json: longPage(Number(p.get("rows")), Number(p.get("os"))) };
    case "html":
      return { body: HTML_PAGE, contentType: "text/html; charset=utf-8" };
    case "cut":
      return { fixture: REAL_SEARCH, truncateAt: 300 };
    case "refused":
      return { status: 400, body: "Bad Request", contentType: "text/plain" };
    case "gone":
      return { status: 404, body: "Not Found", contentType: "text/plain" };
    case "errobj":
      return { json: { error: "Invalid query syntax near 'AND'" } };
    case "down":
      return { status: 503, body: HTML_PAGE, contentType: "text/html" };
    case "slow":
      return { fixture: REAL_SEARCH, delayMs: 800 };
    default:
      return { fixture: "worldbank/synthetic_empty.json" };
  }
}

function startFake(): FakeUpstream {
  const fake = FakeUpstream.start([{ path: PATH, reply: (req) => route(req) }]);
  // 500 once, then the recorded reply: the retry is what is tested.
  fake.route({
    path: PATH,
    match: (r) => r.url.searchParams.get("qterm") === "flaky",
    reply: [{ status: 500, body: "Internal Server Error" }, { fixture: REAL_SEARCH }],
  });
  return fake;
}

/** The worldbank provider against a fake WDS: two retries, no pacing. */
const worldbank = preset({
  provider: "worldbank",
  basePath: PATH,
  settings: { max_retries: 2, rate_limit_per_second: 0 },
});

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

Deno.test("worldbank tools/list serves four read-only tools with output schemas and described inputs", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const tools = providerTools((await s.client.listTools()).tools);
  assert.deepEqual(tools.map((t) => t.name), [
    "worldbank_search_documents",
    "worldbank_get_document_details",
    "worldbank_explore_facets",
    "worldbank_search_by_project",
  ]);
  for (const tool of tools) {
    assert.deepEqual(
      {
        readOnly: tool.annotations?.readOnlyHint,
        destructive: tool.annotations?.destructiveHint,
        idempotent: tool.annotations?.idempotentHint,
        openWorld: tool.annotations?.openWorldHint,
      },
      { readOnly: true, destructive: false, idempotent: true, openWorld: true },
      tool.name,
    );
    assert.ok(tool.annotations?.title, `${tool.name} has a title`);
    assert.equal(tool.outputSchema?.type, "object", `${tool.name} declares an outputSchema`);
    const props = tool.inputSchema.properties as Record<string, { description?: string }>;
    for (const [name, schema] of Object.entries(props)) {
      assert.ok(schema.description, `${tool.name}.${name} has a description`);
    }
    assert.equal(tool.inputSchema.additionalProperties, false, `${tool.name} rejects unknown arguments`);
  }
  const search = tools[0]!.inputSchema.properties as Record<string, Record<string, unknown>>;
  assert.equal(search["limit"]!["default"], 20);
  assert.equal(search["limit"]!["maximum"], 100);
  assert.equal(search["sort_order"]!["default"], "desc");
  assert.equal(search["response_format"]!["default"], "markdown");
  assert.equal(fake.requests.length, 0, "listing tools calls no upstream");
});

Deno.test("worldbank_search_documents maps arguments to WDS parameters and pages the recorded reply", async () => {
  await using fake = startFake();
  // The provider's smoke test through the real process (the others run the server in process).
  await using s = await openProvider(worldbank({ fake, spawn: true }));

  const md = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { query: "post office", document_types: ["Policy Research Working Paper"], limit: 1 },
  });
  const out = ok(md);
  const sent = fake.requests[0]!.url;
  assert.equal(sent.pathname, PATH);
  assert.equal(sent.searchParams.get("format"), "json");
  assert.equal(sent.searchParams.get("qterm"), "post office");
  assert.equal(sent.searchParams.get("docty_exact"), "Policy Research Working Paper");
  assert.equal(sent.searchParams.get("rows"), "1");
  assert.equal(sent.searchParams.get("os"), "0");
  assert.ok(sent.searchParams.get("fl")!.split(",").includes("abstracts"), "fl asks for the abstract");
  assert.equal(sent.searchParams.get("srt"), null, "relevance sends no sort");

  assert.equal(out["total"], 44);
  assert.equal(out["count"], 1);
  assert.equal(out["offset"], 0);
  assert.equal(out["has_more"], true);
  assert.equal(out["next_offset"], 1);
  const doc = (out["documents"] as Doc[])[0]!;
  assert.equal(doc.id, "18419181");
  assert.equal(doc.title, "Financial inclusion and the role of the post office");
  assert.equal(doc.document_date, "2013-10-01");
  assert.deepEqual(doc.countries, ["World"]);
  assert.equal(doc.url, "https://documents.worldbank.org/curated/en/680321468163464611");
  assert.equal(doc.pdf_url, "https://documents.worldbank.org/curated/en/680321468163464611/pdf/WPS6630.pdf");
  const source = out["source"] as Record<string, string>;
  assert.match(source["terms_url"]!, /worldbank\.org\/en\/about\/legal/);
  assert.match(source["url"]!, /qterm=post\+office/);

  const m = text(md);
  assert.match(m, /^# World Bank documents: "post office"/);
  assert.match(m, /### 1\. Financial inclusion and the role of the post office/);
  assert.match(m, /\*\*Date:\*\* 2013-10-01/);
  assert.match(m, /\*\*Countries:\*\* World/);
  assert.match(m, /\*\*Type:\*\* Policy Research Working Paper/);
  assert.match(
    m,
    /\[PDF\]\(https:\/\/documents\.worldbank\.org\/curated\/en\/680321468163464611\/pdf\/WPS6630\.pdf\)/,
  );
  assert.match(m, /Given their widespread presence in rural and poor areas/);
  assert.match(m, /Next page: offset=1/);
  assert.match(m, /World Bank's terms and conditions/);

  // JSON: the text is the structured content, verbatim.
  const json = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: {
      query: "post office",
      countries: ["Kenya", "Korea, Republic of"],
      languages: ["English", "French"],
      date_from: "2010-01-01",
      date_to: "2015-12-31",
      sort_by: "docdt",
      sort_order: "asc",
      limit: 5,
      offset: 10,
      response_format: "json",
    },
  });
  assert.deepEqual(JSON.parse(text(json)), ok(json));
  const q = fake.requests.at(-1)!.url.searchParams;
  assert.equal(q.get("count_exact"), "Kenya^Korea, Republic of");
  assert.equal(q.get("lang_exact"), "English^French");
  assert.match(fake.requests.at(-1)!.url.search, /count_exact=Kenya%5EKorea/, "^ is sent URL-encoded");
  assert.equal(q.get("strdate"), "2010-01-01");
  assert.equal(q.get("enddate"), "2015-12-31");
  assert.equal(q.get("srt"), "docdt");
  assert.equal(q.get("order"), "asc");
  assert.equal(q.get("rows"), "5");
  assert.equal(q.get("os"), "10");

  // A start date alone gets an end date (today): WDS would otherwise search one calendar year.
  const before = today();
  const fromOnly = ok(
    await s.client.callTool({
      name: "worldbank_search_documents",
      arguments: { query: "post office", date_from: "2020-01-01", response_format: "json" },
    }),
  );
  const after = today();
  const end = fake.requests.at(-1)!.url.searchParams.get("enddate");
  assert.ok(end === before || end === after, `enddate ${end} is today`);
  assert.equal((fromOnly["filters"] as Record<string, unknown>)["date_to"], end);
});

Deno.test("worldbank_search_documents reads list, string and fallback field shapes", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const result = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { query: "shapes", response_format: "json" },
  });
  const docs = ok(result)["documents"] as Doc[];
  assert.deepEqual(docs.map((d) => d.id), ["99990001", "99990002", "99990003"]);
  assert.deepEqual(docs[0]!.countries, ["Kenya", "Tanzania"]);
  assert.deepEqual(docs[0]!.languages, ["English", "French"]);
  assert.deepEqual(docs[1]!.countries, ["Korea, Republic of"], "a name with a comma is one country");
  assert.equal(docs[1]!.title, "Synthetic volume name used as title");
  assert.match(docs[1]!.abstract!, /plain string/);
  assert.equal(docs[2]!.title, "Synthetic report name used as title");
  assert.equal(docs[2]!.abstract, null);
  assert.equal(docs[2]!.url, null);
  assert.equal(docs[2]!.document_date, "0001-01-01");
  const md = text(
    await s.client.callTool({ name: "worldbank_search_documents", arguments: { query: "shapes" } }),
  );
  assert.match(md, /\*\*Countries:\*\* Kenya; Tanzania/);
  assert.match(md, /### 3\. Synthetic report name used as title/);
});

Deno.test("worldbank_search_documents answers an empty result and an offset past the end without error", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const empty = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { query: "nothing matches this" },
  });
  const out = ok(empty);
  assert.deepEqual(
    [out["total"], out["count"], out["has_more"], out["next_offset"], out["documents"]],
    [0, 0, false, null, []],
  );
  assert.match(text(empty), /No documents matched/);
  assert.match(text(empty), /worldbank_explore_facets/);

  const past = await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { query: "post office", offset: 100 },
  });
  const pastOut = ok(past);
  assert.deepEqual(
    [pastOut["total"], pastOut["count"], pastOut["offset"], pastOut["has_more"], pastOut["next_offset"]],
    [44, 0, 100, false, null],
  );
  assert.match(text(past), /No documents at offset 100: only 44 match\. Use an offset below 44/);

  const project = await s.client.callTool({
    name: "worldbank_search_by_project",
    arguments: { project_id: "P000001" },
  });
  assert.equal(ok(project)["total"], 0);
  assert.match(text(project), /No documents matched.*projects\.worldbank\.org/);
});

Deno.test("worldbank tools reject every constraint violation with a VALIDATION_ERROR naming the field", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const many = (n: number) => Array.from({ length: n }, (_, i) => `Value ${i}`);
  const cases: [string, Record<string, unknown>, string | null, RegExp?][] = [
    ["worldbank_search_documents", {}, "query", /required/],
    ["worldbank_search_documents", { query: "" }, "query", /must not be empty/],
    ["worldbank_search_documents", { query: "   " }, "query", /must not be empty/],
    ["worldbank_search_documents", { query: "x".repeat(501) }, "query", /at most 500/],
    ["worldbank_search_documents", { query: "a", limit: 0 }, "limit"],
    ["worldbank_search_documents", { query: "a", limit: 101 }, "limit"],
    ["worldbank_search_documents", { query: "a", limit: 2.5 }, "limit"],
    ["worldbank_search_documents", { query: "a", offset: -1 }, "offset"],
    ["worldbank_search_documents", { query: "a", countries: many(21) }, "countries", /at most 20 countries/],
    ["worldbank_search_documents", { query: "a", countries: [""] }, "countries", /must not be empty/],
    ["worldbank_search_documents", { query: "a", countries: ["Kenya^Chad"] }, "countries", /"\^"/],
    ["worldbank_search_documents", { query: "a", countries: "Kenya" }, "countries"],
    [
      "worldbank_search_documents",
      { query: "a", document_types: many(11) },
      "document_types",
      /at most 10 document types/,
    ],
    ["worldbank_search_documents", { query: "a", languages: many(6) }, "languages", /at most 5 languages/],
    ["worldbank_search_documents", { query: "a", date_from: "01/02/2020" }, "date_from", /YYYY-MM-DD/],
    ["worldbank_search_documents", { query: "a", date_to: "2021-02-30" }, "date_to", /real calendar date/],
    [
      "worldbank_search_documents",
      { query: "a", date_from: "2021-01-01", date_to: "2020-01-01" },
      "date_to",
      /must not be before "date_from"/,
    ],
    ["worldbank_search_documents", { query: "a", sort_by: "title" }, "sort_by", /relevance/],
    ["worldbank_search_documents", { query: "a", sort_order: "up" }, "sort_order", /asc/],
    ["worldbank_search_documents", { query: "a", response_format: "xml" }, "response_format", /markdown/],
    ["worldbank_search_documents", { query: "a", page: 2 }, "page", /Unknown argument "page"/],
    ["worldbank_get_document_details", {}, "document_id", /required/],
    ["worldbank_get_document_details", { document_id: "abc" }, "document_id", /numeric WDS document id/],
    ["worldbank_get_document_details", { document_id: "1", response_format: "csv" }, "response_format"],
    ["worldbank_explore_facets", { facets: [] }, "facets", /at least one facet/],
    ["worldbank_explore_facets", { facets: Array(11).fill("lang_exact") }, "facets", /at most 10 facets/],
    ["worldbank_explore_facets", { facets: ["colour"] }, "facets", /expected one of count, lang, docty/],
    ["worldbank_explore_facets", { facets: ["lang"], query: "" }, "query", /must not be empty/],
    ["worldbank_explore_facets", { facets: ["lang"], limit: 0 }, "limit"],
    ["worldbank_explore_facets", { facets: ["lang"], limit: 101 }, "limit"],
    ["worldbank_explore_facets", { facets: ["lang"], output: "disk" }, "output", /screen/],
    ["worldbank_search_documents", { query: "a", output: "csv" }, "output", /file/],
    ["worldbank_search_by_project", { project_id: "123365" }, "project_id", /"P" followed by six digits/],
    ["worldbank_search_by_project", { project_id: "P12345" }, "project_id", /e\.g\. "P123365"/],
    ["worldbank_search_by_project", { project_id: "P123365", limit: 101 }, "limit"],
    ["worldbank_search_by_project", { project_id: "P123365", offset: -5 }, "offset"],
  ];
  for (const [name, args, field, message] of cases) {
    const label = `${name} ${JSON.stringify(args).slice(0, 80)}`;
    const result = await s.client.callTool({ name, arguments: args });
    const payload = errorPayload(result);
    assert.equal(payload["error_type"], "VALIDATION_ERROR", label);
    assert.equal(payload["field"], field ?? undefined, label);
    assert.equal(payload["retryable"], false, label);
    if (field) assert.match(text(result), new RegExp(`"${field}`), `${label}: the text names the field`);
    if (message) assert.match(payload["message"] as string, message, label);
  }
  assert.equal(fake.requests.length, 0, "invalid arguments never reach the upstream");
});

Deno.test("worldbank_get_document_details returns a full record, by id or guid, and NOT_FOUND otherwise", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));

  const md = await s.client.callTool({
    name: "worldbank_get_document_details",
    arguments: { document_id: "99990021" },
  });
  const out = ok(md);
  const sent = fake.requests.at(-1)!.url.searchParams;
  assert.equal(sent.get("id"), "99990021");
  assert.ok(sent.get("fl")!.split(",").includes("authr"), "fl asks for authors as authr");
  const doc = out["document"] as Doc;
  assert.deepEqual(doc["authors"], ["Doe, Jane", "Roe, Richard"]);
  assert.deepEqual(doc["keywords"], ["synthetic keyword one", "synthetic keyword two"]);
  assert.equal(
    doc["text_url"],
    "https://documents.worldbank.org/curated/en/999900210000000021/text/SYN-0021.txt",
  );
  assert.equal(doc["project_name"], "KE-Synthetic Project -- P999921");
  assert.equal(doc["disclosure_date"], "2020-12-02");
  assert.match(doc.abstract!, /no real reply with all of these fields was recorded\.$/, "abstract is whole");
  assert.equal(out["truncated"], false);
  const provenance = out["provenance"] as Record<string, unknown>;
  assert.equal(provenance["permalink"], doc["url"], "the document's own page");
  assert.match(String(provenance["licence"]), /World Bank terms/);
  const m = text(md);
  assert.match(m, /^# Synthetic country economic memorandum/);
  // The document's page is linked above, so the provenance line does not repeat it.
  assert.match(m, /\nProvenance: World Bank Documents API · licence World Bank terms/);
  assert.ok(m.includes(`(${doc["url"]})`), "the permalink is in the text once");
  assert.match(m, /\*\*Authors:\*\* Doe, Jane; Roe, Richard/);
  assert.match(m, /## Abstract/);
  assert.match(m, /\[Text\]\(https:/);

  // The real recorded record, asked for with the "D" prefix of the reply's keys, in JSON.
  const real = await s.client.callTool({
    name: "worldbank_get_document_details",
    arguments: { document_id: "D18419181", response_format: "json" },
  });
  const realOut = ok(real);
  assert.deepEqual(JSON.parse(text(real)), realOut);
  assert.equal(fake.requests.at(-1)!.url.searchParams.get("id"), "18419181");
  const realDoc = realOut["document"] as Doc;
  assert.deepEqual(realDoc["authors"], [
    "Anson, Jose",
    "Berthaud, Alexandre",
    "Klapper, Leora",
    "Singer, Dorothe",
  ]);
  assert.equal(realDoc["collection"], "Policy Research working paper ; no. WPS 6630");

  // The long number of a documents.worldbank.org address is tried as a guid.
  const byGuid = ok(
    await s.client.callTool({
      name: "worldbank_get_document_details",
      arguments: { document_id: "999900210000000021", response_format: "json" },
    }),
  );
  assert.equal((byGuid["document"] as Doc).id, "99990021");
  assert.equal(fake.requests.at(-1)!.url.searchParams.get("guid"), "999900210000000021");

  const missing = await s.client.callTool({
    name: "worldbank_get_document_details",
    arguments: { document_id: "12345678" },
  });
  const payload = errorPayload(missing);
  assert.equal(payload["error_type"], "NOT_FOUND");
  assert.equal(payload["retryable"], false);
  assert.match(payload["message"] as string, /Document with ID "12345678" not found/);
  assert.match(payload["message"] as string, /incorrect.*removed/);
  assert.match(text(missing), /Next step: Use worldbank_search_documents to find the correct ID/);
});

Deno.test("worldbank_explore_facets counts values as tables and caps values per facet", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));

  const real = await s.client.callTool({
    name: "worldbank_explore_facets",
    arguments: { facets: ["lang_exact"], query: "financial inclusion" },
  });
  const out = ok(real);
  const sent = fake.requests.at(-1)!.url.searchParams;
  assert.equal(sent.get("fct"), "lang_exact");
  assert.equal(sent.get("rows"), "0");
  assert.equal(sent.get("qterm"), "financial inclusion");
  assert.equal(out["total"], 58352);
  const facets = out["facets"] as { field: string; values: { value: string; count: number }[] }[];
  assert.deepEqual(facets[0]!.values, [
    { value: "English", count: 54512 },
    { value: "French", count: 1239 },
    { value: "Spanish", count: 889 },
  ]);
  const m = text(real);
  assert.match(m, /## Language \(`lang`\)/);
  assert.match(m, /\| Value \| Documents \|/);
  assert.match(m, /\| English \| 54,512 \|/);
  assert.match(m, /"languages" argument/);

  const two = await s.client.callTool({
    name: "worldbank_explore_facets",
    // The upstream's field names (count_exact) are accepted as well as the tool's own (count).
    arguments: { facets: ["docty", "count_exact"], limit: 2, response_format: "json" },
  });
  const twoOut = ok(two);
  assert.deepEqual(JSON.parse(text(two)), twoOut);
  assert.equal(fake.requests.at(-1)!.url.searchParams.get("qterm"), null, "no query: all documents");
  const [docty, count] = twoOut["facets"] as {
    field: string;
    filter_argument: string | null;
    values: { value: string }[];
    available: number;
  }[];
  assert.deepEqual(docty!.values.map((v) => v.value), [
    "Procurement Plan",
    "Implementation Status and Results Report",
  ]);
  assert.equal(docty!.available, 5);
  assert.equal(docty!.filter_argument, "document_types");
  assert.equal(docty!.field, "docty");
  assert.equal(count!.field, "count");
  assert.equal(count!.filter_argument, "countries");

  const listShaped = ok(
    await s.client.callTool({
      name: "worldbank_explore_facets",
      arguments: { facets: ["topic"], response_format: "json" },
    }),
  );
  const topic = (listShaped["facets"] as { values: unknown[]; filter_argument: unknown }[])[0]!;
  assert.deepEqual(topic.values, [{ value: "Energy", count: 7 }]);
  assert.equal(topic.filter_argument, null);
});

Deno.test("worldbank_search_by_project validates the id, upper-cases it and lists documents newest first", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const md = await s.client.callTool({
    name: "worldbank_search_by_project",
    arguments: { project_id: "p123365", limit: 10 },
  });
  const out = ok(md);
  const sent = fake.requests.at(-1)!.url.searchParams;
  assert.equal(sent.get("projectid"), "P123365");
  assert.equal(sent.get("srt"), "docdt");
  assert.equal(sent.get("order"), "desc");
  assert.equal(sent.get("rows"), "10");
  assert.equal(out["project_id"], "P123365");
  assert.deepEqual(
    [out["total"], out["count"], out["has_more"], out["next_offset"]],
    [2, 2, false, null],
  );
  assert.match(text(md), /^# World Bank documents of project P123365/);
  assert.match(text(md), /### 2\. Synthetic project information document/);

  const json = await s.client.callTool({
    name: "worldbank_search_by_project",
    arguments: { project_id: "P123365", offset: 1, limit: 1, response_format: "json" },
  });
  assert.deepEqual(JSON.parse(text(json)), ok(json));
  assert.equal(fake.requests.at(-1)!.url.searchParams.get("os"), "1");
});

Deno.test("worldbank upstream failures: 500 retried, HTML page, cut-off JSON, 400 and 503 explained", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const search = (query: string) =>
    s.client.callTool({ name: "worldbank_search_documents", arguments: { query } });

  const flaky = await search("flaky");
  assert.equal(ok(flaky)["total"], 44, "succeeds after one retry");
  const flakyCalls = fake.requests.filter((r) => r.url.searchParams.get("qterm") === "flaky");
  assert.equal(flakyCalls.length, 2, "one 500, then the retry");

  const html = errorPayload(await search("html"));
  assert.equal(html["error_type"], "DECODE_ERROR");
  assert.match(html["message"] as string, /HTML page instead of JSON/);

  const cut = errorPayload(await search("cut"));
  assert.equal(cut["error_type"], "DECODE_ERROR");
  assert.match(cut["message"] as string, /not valid JSON/);

  const refused = await search("refused");
  const refusedPayload = errorPayload(refused);
  assert.equal(refusedPayload["error_type"], "API_ERROR");
  assert.equal(refusedPayload["status"], 400);
  assert.equal(refusedPayload["retryable"], false);
  assert.match(refusedPayload["message"] as string, /World Bank API rejected the request \(HTTP 400\)/);
  assert.match(text(refused), /worldbank_explore_facets/);

  const down = errorPayload(await search("down"));
  assert.equal(down["error_type"], "API_ERROR");
  assert.equal(down["status"], 503);
  assert.equal(down["retryable"], true);
  assert.equal(
    fake.requests.filter((r) => r.url.searchParams.get("qterm") === "down").length,
    3,
    "max_retries 2: three attempts",
  );
  for (const payload of [html, cut, refusedPayload, down]) {
    assert.doesNotMatch(JSON.stringify(payload), /at \w+ \(|\.ts:\d+/, "no stack trace");
  }
});

Deno.test("worldbank results stay within the character limit with the guidance notice; cache and timeout apply", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({
    fake,
    settings: { timeout: 0.3, cache_ttl: 60 },
    server: { character_limit: 4000 },
  }));
  for (const format of ["markdown", "json"]) {
    const result = await s.client.callTool({
      name: "worldbank_search_documents",
      arguments: { query: "long", limit: 20, offset: 40, response_format: format },
    });
    const out = ok(result);
    const t = text(result);
    assert.ok(t.length <= 4000, `${format}: ${t.length} characters`);
    assert.ok(JSON.stringify(out).length <= 4000, `${format}: structured content fits too`);
    const count = out["count"] as number;
    assert.ok(count >= 1 && count < 20, `${format}: cut at a document boundary (${count} shown)`);
    assert.equal(out["truncated"], true);
    assert.equal(out["has_more"], true);
    assert.equal(out["next_offset"], 40 + count);
    assert.equal((out["documents"] as Doc[]).length, count);
    assert.match(out["notice"] as string, /Response truncated: showing \d+ of the 20 documents/);
    assert.match(out["notice"] as string, new RegExp(`offset=${40 + count}`));
    assert.match(out["notice"] as string, /more specific filters/);
    assert.match(out["notice"] as string, /reduce "limit"/);
    if (format === "markdown") assert.match(t, /\*\*Response truncated/);
  }
  // One document whose abstract alone is past the limit: it comes in parts, the record with each.
  const whole = "Synthetic sentence of a long abstract. ".repeat(400).trim();
  for (const format of ["markdown", "json"]) {
    const parts: string[] = [];
    let offset = 0;
    for (let i = 0; i < 20; i++) {
      const result = await s.client.callTool({
        name: "worldbank_get_document_details",
        arguments: { document_id: "99990099", offset, response_format: format },
      });
      const out = ok(result);
      assert.ok(text(result).length <= 4000, `details ${format}: ${text(result).length} characters`);
      assert.ok(JSON.stringify(out).length <= 4000, `details ${format}: structured content fits`);
      assert.equal(out["truncated"], true);
      assert.equal(out["abstract_total"], whole.length);
      assert.match(
        out["notice"] as string,
        /Abstract characters \d+–\d+ of 15599 shown to stay within the 3,200-character limit/,
      );
      parts.push((out["document"] as Doc).abstract!);
      if (!out["has_more"]) break;
      assert.match(text(result), new RegExp(`offset=${out["next_offset"]}`));
      offset = out["next_offset"] as number;
    }
    assert.ok(parts.length >= 4, `${parts.length} parts`);
    assert.equal(parts.join(""), whole, `${format}: the parts join up to the whole abstract`);
  }
  const past = errorPayload(
    await s.client.callTool({
      name: "worldbank_get_document_details",
      arguments: { document_id: "99990099", offset: 20_000 },
    }),
  );
  assert.equal(past["field"], "offset");

  // 100 values of one facet do not fit: cut at a value, with advice and the offset to go on.
  const facets = await s.client.callTool({
    name: "worldbank_explore_facets",
    arguments: { facets: ["sectr"], limit: 100 },
  });
  const facetsOut = ok(facets);
  assert.ok(text(facets).length <= 4000, `facets: ${text(facets).length} characters`);
  const shown = (facetsOut["facets"] as { values: unknown[]; available: number }[])[0]!;
  assert.ok(shown.values.length > 10 && shown.values.length < 100, `${shown.values.length} values shown`);
  assert.equal(shown.available, 100);
  assert.equal(facetsOut["truncated"], true);
  assert.equal(facetsOut["next_offset"], shown.values.length);
  assert.match(facetsOut["notice"] as string, new RegExp(`showing ${shown.values.length} values per facet`));
  assert.match(facetsOut["notice"] as string, new RegExp(`offset=${shown.values.length}`));

  const longCalls = fake.requests.filter((r) => r.url.searchParams.get("qterm") === "long").length;

  // The same call again is answered from the cache (cache_ttl 60).
  await s.client.callTool({
    name: "worldbank_search_documents",
    arguments: { query: "long", limit: 20, offset: 40 },
  });
  assert.equal(fake.requests.filter((r) => r.url.searchParams.get("qterm") === "long").length, longCalls);

  const slow = errorPayload(
    await s.client.callTool({ name: "worldbank_search_documents", arguments: { query: "slow" } }),
  );
  assert.equal(slow["error_type"], "TIMEOUT");
  assert.equal(slow["retryable"], true);
});

Deno.test("worldbank_explore_facets shares the limit among facets and continues each with next_offset", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake, server: { character_limit: 4000 } }));
  for (const format of ["markdown", "json"]) {
    const seen: Record<string, string[]> = { count: [], lang: [], docty: [] };
    let offset = 0;
    let calls = 0;
    for (; calls < 60; calls++) {
      const r = await s.client.callTool({
        name: "worldbank_explore_facets",
        arguments: {
          facets: ["count", "lang", "docty"],
          limit: 100,
          offset,
          response_format: format,
        },
      });
      const out = ok(r);
      assert.ok(text(r).length <= 4000, `${format}: ${text(r).length} characters`);
      assert.ok(JSON.stringify(out).length <= 4000, `${format}: structured fits`);
      assert.equal(out["offset"], offset);
      const facets = out["facets"] as {
        field: string;
        values: { value: string }[];
        available: number;
        remaining: number;
      }[];
      for (const f of facets) {
        assert.ok(f.values.length > 0, `${f.field} shows values at offset ${offset}`);
        assert.equal(f.available, 100);
        assert.equal(f.remaining, 100 - offset - f.values.length);
        seen[f.field]!.push(...f.values.map((v) => v.value));
      }
      if (format === "markdown") {
        assert.doesNotMatch(text(r), /No values returned/);
        if (out["next_offset"] !== null) {
          assert.match(text(r), new RegExp(`call again with offset=${out["next_offset"]}`));
        }
      }
      if (out["next_offset"] === null) break;
      assert.equal(out["truncated"], true);
      assert.match(String(out["notice"]), /values per facet .* call again with offset=\d+/);
      offset = out["next_offset"] as number;
    }
    assert.ok(calls >= 2, `${format}: the list came in ${calls + 1} parts`);
    for (const [field, values] of Object.entries(seen)) {
      const name = { count: "Country", lang: "Language", docty: "Type" }[field];
      assert.deepEqual(
        values,
        Array.from({ length: 100 }, (_, i) => `${name} value ${i} ${"x".repeat(40)}`),
        `${format}: every value of ${field} exactly once, in order`,
      );
    }
  }
});

Deno.test("worldbank tools: a 404 is explained, error objects in HTTP 200 are errors, garbage is DECODE_ERROR", async () => {
  await using fake = startFake();
  await using s = await openProvider(worldbank({ fake }));
  const search = (query: string) =>
    s.client.callTool({ name: "worldbank_search_documents", arguments: { query } });

  const gone = errorPayload(await search("gone"));
  assert.deepEqual([gone["error_type"], gone["status"], gone["retryable"]], ["API_ERROR", 404, false]);
  assert.match(String(gone["message"]), /HTTP 404\): the search endpoint was not found/);
  assert.doesNotMatch(String(gone["message"]), /filter value/);
  assert.match(String(gone["hint"]), /providers\.worldbank\.base_url/);

  const refusal = errorPayload(await search("errobj"));
  assert.deepEqual([refusal["error_type"], refusal["retryable"]], ["API_ERROR", false]);
  assert.match(String(refusal["message"]), /answered with an error: "Invalid query syntax near 'AND'"/);
  await search("errobj");
  assert.equal(
    fake.requests.filter((r) => r.url.searchParams.get("qterm") === "errobj").length,
    2,
    "an error body is not cached",
  );

  let current: unknown = null;
  fake.route({
    path: PATH,
    match: (r) =>
      /^garbage/.test(r.url.searchParams.get("qterm") ?? "") ||
      /^7777/.test(r.url.searchParams.get("id") ?? "") ||
      /^P7777/.test(r.url.searchParams.get("projectid") ?? ""),
    reply: () => ({ json: current }),
  });
  const bodies: unknown[] = [null, [], "text", {}, { rows: 20 }, { total: "many", documents: {} }, {
    total: 3,
    documents: { D1: "x", D2: 5 },
  }];
  let round = 0;
  for (const body of bodies) {
    current = body;
    round++;
    const calls = [
      ["worldbank_search_documents", { query: `garbage ${round}` }],
      ["worldbank_get_document_details", { document_id: `7777${round}` }],
      ["worldbank_explore_facets", { facets: ["lang"], query: `garbage ${round}` }],
      ["worldbank_search_by_project", { project_id: `P77770${round}` }],
    ] as const;
    for (const [name, args] of calls) {
      const p = errorPayload(await s.client.callTool({ name, arguments: args }));
      assert.equal(p["error_type"], "DECODE_ERROR", `${name} on ${JSON.stringify(body)}: ${p["message"]}`);
    }
  }

  for (
    const [args, field] of [
      [{ query: "a\udfffb" }, "query"],
      [{ query: "x", countries: ["Kenya", "\ud800"] }, "countries"],
    ] as const
  ) {
    const p = errorPayload(await s.client.callTool({ name: "worldbank_search_documents", arguments: args }));
    assert.equal(p["error_type"], "VALIDATION_ERROR");
    assert.equal(p["field"], field);
    assert.match(String(p["message"]), /lone surrogate/);
  }
});
