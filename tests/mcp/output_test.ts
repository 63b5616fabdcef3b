import assert from "node:assert/strict";
import {
  boundStructured,
  clampText,
  firstSentence,
  fitToLimit,
  formatText,
  largestWhere,
  markdownTable,
  page,
  requiredNames,
  shorten,
  truncationNotice,
} from "../../lib/mcp/shaping.ts";

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

Deno.test("boundStructured() fits strings, lists and maps of many small entries within the limit", () => {
  const limit = 2_000;
  const cases: Record<string, Record<string, unknown>> = {
    "a long string": { text: "x".repeat(50_000) },
    "a long list": { items: Array.from({ length: 5_000 }, (_, i) => i) },
    "a map of many small entries": {
      echo: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])),
    },
    "a map of short lists": {
      data: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`d${i}`, [1, 2]])),
    },
  };
  for (const [label, value] of Object.entries(cases)) {
    const bounded = boundStructured(value, limit);
    assert.equal(bounded.cut, true, label);
    const size = JSON.stringify(bounded.value).length;
    assert.ok(size <= limit, `${label}: ${size} characters`);
    assert.ok(size > limit / 4, `${label}: kept a useful share, ${size} characters`);
    assert.deepEqual(Object.keys(bounded.value), Object.keys(value), `${label}: the root keeps its entries`);
  }
  const small = { a: 1 };
  assert.deepEqual(boundStructured(small, limit), { value: small, cut: false });
});

Deno.test("boundStructured() empties a list rather than its container, and keeps required entries", () => {
  const value = {
    page: { total: 9_000, next_offset: 10, items: Array.from({ length: 9_000 }, (_, i) => ({ id: i })) },
  };
  const bounded = boundStructured(value, 1_000);
  assert.equal(bounded.value.page.total, 9_000);
  assert.equal(bounded.value.page.next_offset, 10);
  assert.ok(bounded.value.page.items.length > 0 && bounded.value.page.items.length < 9_000);
  const map = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`k${i}`, i]));
  const kept = boundStructured({ meta: { ...map, k2999: 5, title: "t" } }, 500, new Set(["k2999", "title"]));
  assert.equal(kept.value.meta.k2999, 5);
  assert.equal(kept.value.meta.title, "t");
  assert.ok(JSON.stringify(kept.value).length <= 500);
});

Deno.test("requiredNames() collects the names an output schema requires at any depth", () => {
  const schema = {
    type: "object",
    required: ["items"],
    properties: {
      items: { type: "array", items: { type: "object", required: ["id", "name"] } },
      meta: { anyOf: [{ type: "object", required: ["title"] }, { type: "null" }] },
    },
  };
  assert.deepEqual([...requiredNames(schema)].sort(), ["id", "items", "name", "title"]);
  assert.deepEqual([...requiredNames(undefined)], []);
});
