import assert from "node:assert/strict";
import {
  articleText,
  cutPoint,
  safeIndex,
  sectionAt,
} from "../../../lib/providers/wikipedia/article_text.ts";
import { baseUrlProblem, wikipediaSpec } from "../../../lib/providers/wikipedia/config.ts";
import { hostFor, languageProblem, originFor } from "../../../lib/providers/wikipedia/language.ts";
import {
  apiErrorOf,
  parseGeosearch,
  parsePages,
  parseSearch,
  resolveTitle,
} from "../../../lib/providers/wikipedia/parse.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const fixture = (name: string) => JSON.parse(fixtureText(`wikipedia/${name}`));

Deno.test("languageProblem() accepts real edition codes and refuses anything that could change the host", () => {
  for (
    const ok of [
      "no",
      "nn",
      "en",
      "se",
      "sma",
      "simple",
      "zh-min-nan",
      "be-tarask",
      "be-x-old",
      "zh-classical",
    ]
  ) {
    assert.equal(languageProblem(ok), null, ok);
  }
  const hostile = [
    "",
    "n",
    "EN",
    "en.evil.example",
    "evil.example#",
    "x@evil.example",
    "en:443",
    "en/",
    "en%2e",
    "-en",
    "en-",
    "en--x",
    "en_gb",
    " en",
    "ен",
    "ｅｎ",
    "xn--bcher-kva",
    "en.xn--80ak6aa92e.com",
    "en\n",
    "en%2eevil.example",
    "a".repeat(33),
    "www",
    "meta",
    "commons",
  ];
  for (const bad of hostile) assert.notEqual(languageProblem(bad), null, JSON.stringify(bad));
});

Deno.test("originFor() fills the {lang} template and sends every language to a plain base URL", () => {
  assert.equal(originFor("https://{lang}.wikipedia.org", "nn"), "https://nn.wikipedia.org");
  assert.equal(originFor("https://{lang}.wikipedia.org/", "se"), "https://se.wikipedia.org");
  assert.equal(originFor("http://127.0.0.1:8123", "en"), "http://127.0.0.1:8123");
  assert.equal(hostFor("https://{lang}.wikipedia.org", "zh-min-nan"), "zh-min-nan.wikipedia.org");
  // Whatever passes the check stays one label below the configured domain.
  assert.equal(hostFor("https://{lang}.wikipedia.org", "en-evil-com"), "en-evil-com.wikipedia.org");
  assert.throws(() => originFor("https://{lang}.wikipedia.org", "evil.example#"), TypeError);
});

Deno.test("baseUrlProblem() accepts the template and plain URLs and refuses other placeholders or schemes", () => {
  assert.equal(baseUrlProblem("https://{lang}.wikipedia.org"), null);
  assert.equal(baseUrlProblem("http://127.0.0.1:9000"), null);
  assert.equal(baseUrlProblem("https://proxy.example/{lang}/"), null);
  assert.match(baseUrlProblem("https://{country}.wikipedia.org")!, /no placeholder other than \{lang\}/);
  assert.match(baseUrlProblem("ftp://{lang}.wikipedia.org")!, /http or https/);
  assert.match(baseUrlProblem("https://{lang}.wikipedia.org/?x=1")!, /query/);
  assert.match(baseUrlProblem("not a url")!, /http\(s\) URL/);
});

Deno.test("wikipediaSpec checks its block and names concrete hosts for the allowlist check", () => {
  const defaults = wikipediaSpec.schema.parse({});
  assert.equal(defaults.base_url, "https://{lang}.wikipedia.org");
  assert.equal(defaults.default_language, "no");
  assert.deepEqual(wikipediaSpec.hosts(defaults), ["no.wikipedia.org"]);
  assert.deepEqual(wikipediaSpec.hosts(wikipediaSpec.schema.parse({ default_language: "se" })), [
    "se.wikipedia.org",
  ]);
  assert.deepEqual(
    wikipediaSpec.hosts(wikipediaSpec.schema.parse({ base_url: "http://127.0.0.1:9000" })),
    ["127.0.0.1:9000"],
  );
  assert.deepEqual(wikipediaSpec.allowNet, ["*.wikipedia.org"]);
  assert.equal(wikipediaSpec.schema.safeParse({ default_language: "evil.example" }).success, false);
  assert.equal(wikipediaSpec.schema.safeParse({ base_url: "https://{x}.wikipedia.org" }).success, false);
});

Deno.test("apiErrorOf() reads legacy, servedby and errorformat bodies and ignores normal answers", () => {
  assert.deepEqual(apiErrorOf(fixture("error_missingtitle_parse_mediawiki_legacy.json")), {
    code: "missingtitle",
    info: "The page you specified doesn't exist",
    lag: null,
  });
  assert.equal(apiErrorOf(fixture("error_missingtitle_wikipedia_old_servedby.json"))?.code, "missingtitle");
  assert.deepEqual(apiErrorOf(fixture("synthetic_maxlag_error.json")), {
    code: "maxlag",
    info: "Waiting for 10.0.0.1: 7 seconds lagged.",
    lag: 7,
  });
  assert.deepEqual(
    apiErrorOf({ errors: [{ code: "badvalue", text: "Unrecognized value", module: "main" }] }),
    { code: "badvalue", info: "Unrecognized value", lag: null },
  );
  assert.equal(apiErrorOf(fixture("search_en_meaning_formatversion1.json")), null);
  assert.equal(apiErrorOf([]), null);
});

Deno.test("parseSearch() strips searchmatch markup and reads continue, totalhits and suggestion", () => {
  const r = parseSearch(fixture("search_en_meaning_formatversion1.json"));
  assert.equal(r.hits.length, 2);
  assert.equal(r.totalhits, 232618);
  assert.equal(r.suggestion, "mening");
  assert.equal(r.nextOffset, 2);
  assert.equal(r.hits[0]!.pageid, 18916);
  assert.equal(r.hits[0]!.wordcount, 215);
  assert.ok(
    r.hits[0]!.snippet.startsWith("Meaning most commonly refers to: Meaning (linguistics), meaning which"),
  );
  const none = parseSearch(fixture("synthetic_search_no_hits_fv2.json"));
  assert.deepEqual(none, { hits: [], totalhits: 0, suggestion: null, nextOffset: null });
});

Deno.test("parseGeosearch() reads formatversion 1 items nearest first", () => {
  const hits = parseGeosearch(fixture("geosearch_en_capecod_formatversion1.json"));
  assert.equal(hits.length, 10);
  assert.deepEqual(hits[0], { title: "Cape Cod", pageid: 38743, lat: 41.68, lon: -70.2, dist: 432.1 });
  for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.dist! <= hits[i]!.dist!);
});

Deno.test("parsePages() reads both formats: keyed pages, '' booleans, missing pages, coordinates", () => {
  const fv1 = parsePages(fixture("coordinates_en_wikimedia_foundation_docexample.json"));
  assert.equal(fv1.length, 1);
  assert.equal(fv1[0]!.title, "Wikimedia Foundation");
  assert.deepEqual(fv1[0]!.coordinates, { lat: 37.7891838, lon: -122.4033522 });
  assert.equal(fv1[0]!.missing, false);
  const missing1 = parsePages(fixture("synthetic_missing_fv1.json"))[0]!;
  assert.deepEqual([missing1.title, missing1.missing, missing1.pageid], ["Gammel mangler", true, null]);
  const missing2 = parsePages(fixture("synthetic_missing_fv2.json"))[0]!;
  assert.deepEqual([missing2.title, missing2.missing], ["Finnes ikke", true]);
  const dis = parsePages(fixture("synthetic_summary_merkur_disambiguation_fv2.json"))[0]!;
  assert.equal("disambiguation" in dis.pageprops, true);
  assert.equal(dis.fullUrl, "https://no.wikipedia.org/wiki/Merkur");
  assert.equal(
    parsePages({ query: { pages: [{ title: "X", pageprops: { disambiguation: true } }] } })[0]!
      .pageprops["disambiguation"],
    "",
  );
});

Deno.test("resolveTitle() follows normalisation and redirects, keeping the redirect's section", () => {
  assert.deepEqual(resolveTitle(fixture("synthetic_summary_christiania_redirect_fv2.json"), "Christiania"), {
    normalizedFrom: null,
    redirectedFrom: "Christiania",
    fragment: null,
  });
  assert.deepEqual(resolveTitle(fixture("synthetic_summary_merkur_disambiguation_fv2.json"), "merkur"), {
    normalizedFrom: "merkur",
    redirectedFrom: null,
    fragment: null,
  });
  const body = {
    query: {
      normalized: [{ from: "kristiania", to: "Kristiania" }],
      redirects: [{ from: "Kristiania", to: "Oslo", tofragment: "Historie" }],
    },
  };
  assert.deepEqual(resolveTitle(body, "kristiania"), {
    normalizedFrom: "kristiania",
    redirectedFrom: "Kristiania",
    fragment: "Historie",
  });
});

Deno.test("articleText() turns wiki headings into markdown and records where each section starts", () => {
  const { text, sections } = articleText(
    "Lead line.\n\n\n== History ==\nOld times.\n\n\n=== Early ===\nEarlier.\n== Empty ==\n",
  );
  assert.equal(text, "Lead line.\n\n## History\nOld times.\n\n### Early\nEarlier.\n\n## Empty");
  assert.deepEqual(sections.map((s) => [s.index, s.title, s.level]), [
    [0, "(lead)", 1],
    [1, "History", 2],
    [2, "Early", 3],
    [3, "Empty", 2],
  ]);
  for (const s of sections.slice(1)) assert.ok(text.startsWith("#", s.offset));
  assert.equal(sections.reduce((sum, s) => sum + s.chars, 0), text.length);
  assert.equal(sectionAt(sections, 0).index, 0);
  assert.equal(sectionAt(sections, sections[2]!.offset + 1).title, "Early");
  assert.deepEqual(articleText(""), {
    text: "",
    sections: [{ index: 0, title: "(lead)", level: 1, offset: 0, chars: 0 }],
  });
});

Deno.test("cutPoint() ends a part at a paragraph, then a line, a sentence, a word, never inside a surrogate pair", () => {
  const text = "aaaa bbbb.\n\ncccc dddd\neeee ffff";
  assert.equal(cutPoint(text, 0, text.length, 100), text.length);
  assert.equal(cutPoint(text, 0, text.length, 20), 12, "after the blank line");
  assert.equal(cutPoint(text, 12, text.length, 14), 22, "after the line break");
  assert.equal(cutPoint("abcdefghij", 0, 10, 4), 4, "no boundary: a hard cut");
  const emoji = "ab🚋cd";
  assert.equal(safeIndex(emoji, 3), 2, "not between the two halves of 🚋");
  assert.equal(cutPoint(emoji, 0, emoji.length, 3), 2);
});

Deno.test("parseSearch() cuts a hostile title, saying so, and a snippet before reading it", () => {
  const r = parseSearch({
    query: {
      searchinfo: { totalhits: 1 },
      search: [{
        title: "T".repeat(1_000_000),
        pageid: 1,
        snippet: `<span>${"&amp;<b>x</b> ".repeat(500_000)}`,
      }],
    },
  });
  const hit = r.hits[0]!;
  assert.match(hit.title, /^T{511}… \[cut: 1,000,000 characters in all\]$/);
  assert.ok(hit.snippet.length <= 1000, `${hit.snippet.length} characters`);
  assert.match(hit.snippet, /^&x &x /);
});
