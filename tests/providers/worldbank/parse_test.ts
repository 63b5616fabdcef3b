import assert from "node:assert/strict";
import { ToolError } from "../../../lib/errors.ts";
import {
  isoDate,
  parseDocument,
  parseFacetValues,
  parseWdsResponse,
  secureUrl,
  strings,
} from "../../../lib/providers/worldbank/parse.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const REAL_SEARCH = "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json";
const REAL_FACETS = "worldbank/wds_v3_qterm-financial-inclusion_rows0_fct-lang_exact_observed_trimmed.json";

Deno.test("parseWdsResponse() reads the recorded search reply and skips the facets key in documents", () => {
  const page = parseWdsResponse(JSON.parse(fixtureText(REAL_SEARCH)));
  assert.equal(page.total, 44);
  assert.equal(page.documents.length, 1, "the facets sibling is not a document");
  assert.deepEqual(page.facets, {});
  const doc = page.documents[0]!;
  assert.equal(doc.id, "18419181");
  assert.equal(doc.guid, "680321468163464611");
  assert.equal(doc.title, "Financial inclusion and the role of the post office");
  assert.equal(doc.document_date, "2013-10-01");
  assert.equal(doc.document_type, "Policy Research Working Paper");
  assert.equal(doc.major_document_type, "Publications & Research");
  assert.deepEqual(doc.countries, ["World"]);
  assert.deepEqual(doc.languages, ["English"]);
  assert.equal(doc.report_number, "WPS6630");
  assert.equal(doc.project_id, "P123365");
  assert.match(doc.abstract!, /^Given their widespread presence/);
  assert.deepEqual(doc.authors, ["Anson, Jose", "Berthaud, Alexandre", "Klapper, Leora", "Singer, Dorothe"]);
  assert.deepEqual(doc.keywords, [
    "Finance & Private Sector Development",
    "summary statistic",
    "account ownership",
  ]);
  assert.equal(doc.url, "https://documents.worldbank.org/curated/en/680321468163464611");
  assert.equal(
    doc.text_url,
    "https://documents.worldbank.org/curated/en/680321468163464611/text/WPS6630.txt",
  );
  assert.equal(doc.volume_number, "1");
});

Deno.test("parseWdsResponse() reads facets inside documents, as the recorded reply has them", () => {
  const page = parseWdsResponse(JSON.parse(fixtureText(REAL_FACETS)));
  assert.equal(page.total, 58352);
  assert.deepEqual(page.documents, []);
  assert.deepEqual(page.facets["lang_exact"], [
    { value: "English", count: 54512 },
    { value: "French", count: 1239 },
    { value: "Spanish", count: 889 },
  ]);
});

Deno.test("parseWdsResponse() accepts top-level facets, a documents list and a string total", () => {
  const page = parseWdsResponse({
    total: "12",
    documents: [{ id: "1", display_title: "A" }, "junk", { id: "2", display_title: "B" }],
    facets: { count_exact: { "0": { name: "Chad", count: 3 } } },
  });
  assert.equal(page.total, 12);
  assert.deepEqual(page.documents.map((d) => d.title), ["A", "B"]);
  assert.deepEqual(page.facets, { count_exact: [{ value: "Chad", count: 3 }] });
});

Deno.test("parseWdsResponse() treats total 0 without documents as empty", () => {
  assert.deepEqual(parseWdsResponse({ total: 0, documents: null }), { total: 0, documents: [], facets: {} });
  assert.deepEqual(parseWdsResponse({ total: 0, documents: { facets: {} } }), {
    total: 0,
    documents: [],
    facets: {},
  });
});

Deno.test("parseWdsResponse() reads an error object in an HTTP 200 reply as an API_ERROR with its message", () => {
  for (
    const [body, message] of [
      [{ error: "Invalid query" }, /"Invalid query"/],
      [{ errors: [{ message: "rows must be a number" }] }, /"rows must be a number"/],
      [
        { fault: { faultstring: "Rate limit quota violation", detail: { errorcode: "x" } } },
        /Rate limit quota/,
      ],
      [{ Message: "An error has occurred." }, /An error has occurred/],
    ] as const
  ) {
    assert.throws(
      () => parseWdsResponse(body),
      (e: unknown) => e instanceof ToolError && e.errorType === "API_ERROR" && message.test(e.message),
      JSON.stringify(body),
    );
  }
});

Deno.test("parseWdsResponse() rejects replies of the wrong shape with a DECODE_ERROR", () => {
  for (
    const bad of [
      null,
      [],
      "text",
      3,
      { documents: "x" },
      {},
      { rows: 1 },
      { total: "many", documents: {} },
      {
        total: 3,
        documents: { D1: "x", D2: 5 },
      },
      { total: 2, documents: [1, 2] },
    ]
  ) {
    assert.throws(
      () => parseWdsResponse(bad),
      (e: unknown) => e instanceof ToolError && e.errorType === "DECODE_ERROR" && !e.retryable,
      JSON.stringify(bad),
    );
  }
});

Deno.test("parseDocument() falls back from display_title to docna, repnme, then a placeholder", () => {
  assert.equal(
    parseDocument({ docna: { "0": { docna: "Volume" } }, repnme: { repnme: "Report" } }).title,
    "Volume",
  );
  assert.equal(parseDocument({ repnme: { repnme: "Report" } }).title, "Report");
  assert.equal(parseDocument({ display_title: "  ", repnme: "Plain" }).title, "Plain");
  assert.equal(parseDocument({}).title, "Untitled document");
});

Deno.test("parseDocument() takes the id from the reply key when the record has none", () => {
  assert.equal(parseDocument({ display_title: "x" }, "D123").id, "123");
  assert.equal(parseDocument({ id: 456 }, "D123").id, "456");
});

Deno.test("parseDocument() reads abstracts as cdata!, plain string or other objects", () => {
  assert.equal(parseDocument({ abstracts: { "cdata!": " text " } }).abstract, "text");
  assert.equal(parseDocument({ abstracts: "plain" }).abstract, "plain");
  assert.equal(parseDocument({ abstracts: { abstract: "nested" } }).abstract, "nested");
  assert.equal(parseDocument({ abstracts: {} }).abstract, null);
  assert.equal(parseDocument({}).abstract, null);
});

Deno.test("parseDocument() keeps a country name with a comma whole and drops duplicates", () => {
  const doc = parseDocument({ count: ["Korea, Republic of", "Korea, Republic of", "Chad"], lang: "French" });
  assert.deepEqual(doc.countries, ["Korea, Republic of", "Chad"]);
  assert.deepEqual(doc.languages, ["French"]);
});

Deno.test("strings() flattens strings, numbers, lists and objects keyed 0, 1, ... in order", () => {
  assert.deepEqual(strings({ "0": { author: "A" }, "1": { author: " B " }, "2": { author: "" } }), [
    "A",
    "B",
  ]);
  assert.deepEqual(strings(["x", ["y", 3]]), ["x", "y", "3"]);
  assert.deepEqual(strings(null), []);
  assert.deepEqual(strings(true), []);
});

Deno.test("isoDate() cuts ISO timestamps to the day and normalizes other dates", () => {
  assert.equal(isoDate("2013-10-01T04:00:00Z"), "2013-10-01");
  assert.equal(isoDate("0001-01-01T00:00:00Z"), "0001-01-01");
  assert.equal(isoDate("October 1, 2013 UTC"), "2013-10-01");
  assert.equal(isoDate("sometime"), "sometime", "an unreadable date is kept as given");
  assert.equal(isoDate(undefined), null);
});

Deno.test("secureUrl() upgrades World Bank http links and leaves others alone", () => {
  assert.equal(
    secureUrl("http://documents.worldbank.org/curated/en/1"),
    "https://documents.worldbank.org/curated/en/1",
  );
  assert.equal(secureUrl("http://example.org/a"), "http://example.org/a");
  assert.equal(secureUrl("not a url"), "not a url");
  assert.equal(secureUrl(""), null);
});

Deno.test("parseFacetValues() reads objects keyed 0, 1, ... and lists, with string counts", () => {
  assert.deepEqual(
    parseFacetValues({ "0": { name: "A", label: "A", count: 2 }, "1": { label: "B", count: "5" } }),
    [
      { value: "A", count: 2 },
      { value: "B", count: 5 },
    ],
  );
  assert.deepEqual(parseFacetValues([{ name: "C", count: -1 }, { count: 3 }, "junk"]), [{
    value: "C",
    count: 0,
  }]);
  assert.deepEqual(parseFacetValues(undefined), []);
});
