import assert from "node:assert/strict";
import { decodeEntities, inlineText } from "../lib/html.ts";

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
