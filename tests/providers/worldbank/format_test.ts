import assert from "node:assert/strict";
import {
  documentMarkdown,
  facetsMarkdown,
  pageNotice,
  sourceOf,
  summarize,
} from "../../../lib/providers/worldbank/format.ts";
import { parseDocument } from "../../../lib/providers/worldbank/parse.ts";

Deno.test("pageNotice() gives three ways to see more", () => {
  const notice = pageNotice({ received: 20, shown: 7, nextOffset: 47, limit: 25_000, filters: "countries" });
  assert.equal(
    notice,
    "Response truncated: showing 7 of the 20 documents on this page to stay within the 25,000-character limit. " +
      'To see more results: use offset=47 to continue; add more specific filters (countries); or reduce "limit".',
  );
  const bare = pageNotice({ received: 2, shown: 1, nextOffset: null, limit: 1000, filters: null });
  assert.doesNotMatch(bare, /offset=|filters/);
  assert.match(bare, /reduce "limit"/);
});

Deno.test("summarize() shortens the abstract to the configured length at a word boundary", () => {
  const doc = parseDocument({ id: "1", abstracts: { "cdata!": "word ".repeat(200) } });
  const short = summarize(doc, 100);
  assert.ok(short.abstract!.length <= 100, `${short.abstract!.length}`);
  assert.ok(short.abstract!.endsWith("…"));
  assert.equal(summarize(parseDocument({ id: "2" }), 100).abstract, null);
});

Deno.test("documentMarkdown() shows present fields only, with the document page and PDF links", () => {
  const doc = summarize(
    parseDocument({
      id: "9",
      display_title: "Title",
      docdt: "2020-02-02T00:00:00Z",
      count: ["Chad", "Niger"],
      pdfurl: "http://documents.worldbank.org/x.pdf",
    }),
    500,
  );
  const md = documentMarkdown(doc, 3);
  assert.match(md, /^### 3\. Title/);
  assert.match(md, /\*\*Date:\*\* 2020-02-02/);
  assert.match(md, /\*\*Countries:\*\* Chad; Niger/);
  assert.match(md, /\[PDF\]\(https:\/\/documents\.worldbank\.org\/x\.pdf\)/);
  assert.doesNotMatch(md, /Type|Report|Project|Document page/);
});

Deno.test("facetsMarkdown() renders a count table and escapes pipes in values", () => {
  const md = facetsMarkdown({
    total: 10,
    query: null,
    facets: [{
      field: "colti",
      name: "Collection or series",
      filter_argument: null,
      values: [{ value: "A | B", count: 1234 }],
      available: 3,
      remaining: 2,
    }],
    offset: 0,
    has_more: true,
    next_offset: 1,
    truncated: false,
    notice: null,
    source: sourceOf("https://search.worldbank.org/api/v3/wds?format=json", "https://terms.example"),
  });
  assert.match(md, /## Collection or series \(`colti`\)/);
  assert.match(md, /Values 1–1 of 3 \(2 more: call again with offset=1\)\./);
  assert.match(md, /\| A \\\| B \| 1,234 \|/);
  assert.match(md, /Terms: https:\/\/terms\.example/);
});
