import assert from "node:assert/strict";
import {
  clampText,
  firstSentence,
  fitToLimit,
  formatText,
  largestWhere,
  markdownTable,
  page,
  shorten,
  truncationNotice,
} from "../../lib/mcp/output.ts";

Deno.test("page() builds the pagination envelope", () => {
  assert.deepEqual(page(95, 40, 20), { total: 95, count: 20, offset: 40, has_more: true, next_offset: 60 });
  assert.deepEqual(page(95, 80, 15), {
    total: 95,
    count: 15,
    offset: 80,
    has_more: false,
    next_offset: null,
  });
  assert.deepEqual(page(0, 0, 0), { total: 0, count: 0, offset: 0, has_more: false, next_offset: null });
});

Deno.test("fitToLimit() keeps every item when the rendering fits", () => {
  const r = fitToLimit([1, 2, 3], 1000, ({ items }) => ({ text: items.join(","), structured: { items } }));
  assert.deepEqual(r.items, [1, 2, 3]);
  assert.equal(r.truncated, false);
});

Deno.test("fitToLimit() cuts at an item boundary so text and structured content fit", () => {
  const items = Array.from({ length: 200 }, (_, i) => `item-${i}-${"x".repeat(90)}`);
  const r = fitToLimit(items, 5000, ({ items: kept, truncated }) => ({
    text: kept.join("\n") +
      (truncated ? `\n${truncationNotice(kept.length, items.length, { nextOffset: kept.length })}` : ""),
    structured: { kept },
  }));
  assert.equal(r.truncated, true);
  assert.ok(r.items.length > 10 && r.items.length < 200);
  assert.ok(r.text.length <= 5000);
  assert.ok(JSON.stringify(r.structured).length <= 5000);
  assert.match(r.text, new RegExp(`Showing ${r.items.length} of 200 items.*offset=${r.items.length}`));
  assert.ok(r.text.includes(items[r.items.length - 1]!), "the last kept item is whole");
});

Deno.test("fitToLimit() counts structured content too, not only the text", () => {
  const items = Array.from({ length: 50 }, () => "y".repeat(100));
  const r = fitToLimit(
    items,
    2000,
    ({ items: kept }) => ({ text: `${kept.length} items`, structured: { kept } }),
  );
  assert.ok(JSON.stringify(r.structured).length <= 2000);
  assert.ok(r.items.length < 50);
});

Deno.test("truncationNotice() says how to get the rest", () => {
  assert.equal(
    truncationNotice(10, 50, { nextOffset: 10, hint: 'Or use output: "file".', limit: 10000 }),
    'Showing 10 of 50 items to stay within the 10,000-character response limit. Call again with offset=10 for the next items, or a smaller limit. Or use output: "file".',
  );
});

Deno.test("clampText() never exceeds the limit and says it cut", () => {
  const text = Array.from({ length: 500 }, (_, i) => `line ${i}`).join("\n");
  const out = clampText(text, 1000);
  assert.ok(out.length <= 1000);
  assert.match(out, /\[Truncated: the response was longer than the 1000-character limit/);
  assert.equal(clampText("short", 1000), "short");
});

Deno.test("formatText(), markdownTable() and shorten() shape text", () => {
  assert.equal(formatText("json", { a: 1 }, () => "md"), '{\n  "a": 1\n}');
  assert.equal(formatText("markdown", { a: 1 }, () => "md"), "md");
  assert.equal(
    markdownTable(["a", "b"], [["x|y", "line\nbreak"]]),
    "| a | b |\n| --- | --- |\n| x\\|y | line break |",
  );
  assert.equal(shorten("one two three four", 10), "one two…");
  assert.equal(shorten("  spaced   out  ", 50), "spaced out");
});

Deno.test("firstSentence() stops at the first real sentence end", () => {
  assert.equal(firstSentence("Lists codes (e.g. M181005E). More text."), "Lists codes (e.g. M181005E).");
  assert.equal(
    firstSentence('One id ("P" and six digits, e.g. P123456) per call. Then'),
    'One id ("P" and six digits, e.g. P123456) per call.',
  );
  assert.equal(firstSentence("No full stop"), "No full stop");
  assert.equal(firstSentence("Version 1.5 is here.\nNext"), "Version 1.5 is here.");
});

Deno.test("largestWhere() finds the last x of a range for which the test holds", () => {
  assert.equal(largestWhere(0, 100, (x) => x * x <= 50), 7);
  assert.equal(largestWhere(3, 9, () => true), 9);
  assert.equal(largestWhere(3, 9, () => false), 2, "lo - 1 when none holds");
  const probed: number[] = [];
  largestWhere(0, 1000, (x) => (probed.push(x), x <= 600));
  assert.ok(probed.length <= 11, `bisection, not a scan: ${probed.length} probes`);
});
