import assert from "node:assert/strict";
import { boundedUrl, clip, cutField, decodeEntities, holdsWord, inlineText } from "../lib/html.ts";

Deno.test("decodeEntities() decodes named and numeric references and leaves unknown ones", () => {
  assert.equal(
    decodeEntities("a &amp; b &lt;c&gt; &#229; &#xE6; &quot;q&quot; &bogus;"),
    'a & b <c> å æ "q" &bogus;',
  );
});

Deno.test("inlineText() drops tags, decodes entities and collapses white space", () => {
  assert.equal(
    inlineText('<span class="searchmatch">Oslo</span>  &amp;\n <b>Akershus</b>'),
    "Oslo & Akershus",
  );
});

Deno.test("clip() keeps short text, cuts long text with an ellipsis and never splits a surrogate pair", () => {
  assert.equal(clip("Oslo", 10), "Oslo");
  assert.equal(clip("abcdefghij", 5), "abcd…");
  assert.equal(clip("abc😀def", 5), "abc…", "the pair at the cut goes whole");
  assert.ok(clip("x".repeat(1_000_000), 300).length <= 300);
});

Deno.test("boundedUrl() keeps a usable URL and drops one longer than any link", () => {
  assert.equal(boundedUrl("https://snl.no/Oslo"), "https://snl.no/Oslo");
  assert.equal(boundedUrl(`https://snl.no/${"x".repeat(5000)}`), null);
  assert.equal(boundedUrl(null), null);
});

Deno.test("inlineText() strips tags in linear time: '<' without '>' is kept as text", () => {
  // With a tag pattern that could span '<', this input took 54 s (each '<' scanned to the end).
  assert.equal(inlineText("<".repeat(200_000)).length, 200_000);
  assert.equal(inlineText("a <b <i>c</i> d"), "a <b c d");
  assert.equal(inlineText("<p>x &amp; y</p>"), "x & y");
});

Deno.test("holdsWord() finds a word where a word starts, short words only whole, longer ones inside with `inside`", () => {
  assert.equal(holdsWord("consumer prices", "price"), true);
  assert.equal(holdsWord("small business loans", "us"), false, "short words whole only");
  assert.equal(holdsWord("loans used", "used"), true);
  assert.equal(holdsWord("datasettet og kart", "set"), false);
  assert.equal(holdsWord("datasettet og kart", "og"), true);
  assert.equal(holdsWord("automatisk fredete kulturminner", "minner"), false, "not inside without `inside`");
  assert.equal(holdsWord("automatisk fredete kulturminner", "minner", true), true);
  assert.equal(
    holdsWord("automatisk fredete kulturminner", "min", true),
    false,
    "short words whole, even inside",
  );
});

Deno.test("cutField keeps the length the upstream sent when a text was cut before", () => {
  const long = "x".repeat(50_000);
  const once = cutField(long, 40_000);
  assert.match(once, / \[cut: 50,000 characters in all\]$/);
  const twice = cutField(once, 900);
  assert.equal(twice.length < 1000, true);
  assert.match(twice, /^x{899}… \[cut: 50,000 characters in all\]$/);
});
