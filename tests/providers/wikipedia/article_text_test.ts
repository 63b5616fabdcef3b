import assert from "node:assert/strict";
import { articleText, headingOf } from "../../../lib/providers/wikipedia/article_text.ts";

Deno.test("headingOf() reads the same run of '=' at both ends, as the wiki does", () => {
  assert.deepEqual(headingOf("== Historie =="), { level: 2, title: "Historie" });
  assert.deepEqual(headingOf("=== Tidlig tid ===  "), { level: 3, title: "Tidlig tid" });
  assert.deepEqual(headingOf("== a == b =="), { level: 2, title: "a == b" });
  assert.deepEqual(headingOf("=== x =="), { level: 2, title: "= x" });
  for (const line of ["=", "===", "== ==", "== x", "x == y ==", " == x =="]) {
    assert.equal(headingOf(line), null, line);
  }
});

Deno.test("articleText() reads lines of '==' and 100,000 spaces in linear time", () => {
  // The pattern this replaced backtracked without end on such a line (5,000 spaces took 92 s).
  const hostile = [
    `==${" ".repeat(100_000)}x`,
    `== ${"a ".repeat(100_000)}`,
    `tekst${" ".repeat(100_000)}slutt`,
  ];
  const { text, sections } = articleText([...hostile, "== Del ==", "Avsnitt."].join("\n"));
  assert.deepEqual(sections.map((s) => s.title), ["(lead)", "Del"]);
  assert.ok(text.endsWith("## Del\nAvsnitt."), text.slice(-40));
  assert.ok(text.includes(`tekst${" ".repeat(100_000)}slutt`), "text inside a line is kept as it came");
});
