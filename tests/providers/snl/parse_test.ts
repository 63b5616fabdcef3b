import assert from "node:assert/strict";
import { snlSpec } from "../../../lib/providers/snl/config.ts";
import { bodyToText, parseArticle, parseSearch, slugOfPath } from "../../../lib/providers/snl/parse.ts";
import { isDefaultBase, originFor, siteOfHost } from "../../../lib/providers/snl/sites.ts";
import { licenseTerms } from "../../../lib/providers/snl/format.ts";
import { fixtureText } from "../../fakes/upstream.ts";

const fixture = (name: string) => JSON.parse(fixtureText(`snl/${name}`));

Deno.test("parseSearch() reads first_sentences and the older first_two_sentences", () => {
  const current = parseSearch(fixture("synthetic_search_programmering_first_sentences.json"))!;
  assert.equal(current.length, 3);
  assert.match(current[0]!.firstSentences!, /^Syntetisk: et programmeringsspråk/);
  assert.equal(current[0]!.slug, "fortolket_programmeringsspråk");
  assert.equal(current[0]!.clarification, null, "an empty clarification is no clarification");
  assert.equal(current[0]!.imageUrl, "https://media.snl.no/media/990001/standard_synthetic.png");
  assert.equal(current[2]!.license, "begrenset");
  const older = parseSearch(fixture("synthetic_search_dansband_first_two_sentences.json"))!;
  assert.match(older[0]!.firstSentences!, /^Syntetisk: et dansebandeksempel/);
});

Deno.test("parseSearch() takes a permalink as a slug or a URL, tolerates a results object, refuses other shapes", () => {
  const [asUrl] = parseSearch([{ title: "Oslo", permalink: "https://snl.no/Oslo" }])!;
  assert.deepEqual([asUrl!.slug, asUrl!.url], ["Oslo", "https://snl.no/Oslo"]);
  const [fromUrl] = parseSearch({ results: [{ headword: "Bergen", article_url: "https://snl.no/Bergen" }] })!;
  assert.deepEqual([fromUrl!.title, fromUrl!.slug], ["Bergen", "Bergen"]);
  assert.deepEqual(parseSearch([]), []);
  assert.equal(parseSearch([null, 3, { rank: 1 }]), null, "a list of things that are no hits is no answer");
  assert.equal(parseSearch([{ title: "Oslo" }, null])?.length, 1, "items without a title are skipped");
  assert.equal(parseSearch({ message: "oops" }), null);
  assert.equal(parseSearch("<html>"), null);
});

Deno.test("parseArticle() reads the recorded article JSON and refuses a body that is not an article", () => {
  const a = parseArticle(fixture("article_fortolket_programmeringsspraak.json"))!;
  assert.equal(a.title, "fortolket programmeringsspråk");
  assert.equal(a.url, "http://snl.no/fortolket_programmeringsspr%C3%A5k");
  assert.deepEqual(a.authors, ["Henrik Dvergsdal"]);
  assert.equal(a.licenseName, "fri");
  assert.equal(a.metadataLicenseName, "fri");
  assert.equal(a.subjectTitle, "Programmering");
  assert.deepEqual(a.images, []);
  assert.equal(parseArticle({ error: "not found" }), null);
  assert.equal(parseArticle([]), null);
  const plain = parseArticle({ headword: "Oslo", plain_text_body: "Oslo er en by." })!;
  assert.deepEqual([plain.title, plain.xhtmlBody, plain.plainBody], ["Oslo", null, "Oslo er en by."]);
});

Deno.test("bodyToText() keeps paragraphs and list items, drops markup and collects the links", () => {
  const { text, links } = bodyToText(fixture("article_fortolket_programmeringsspraak.json").xhtml_body);
  assert.equal(
    text,
    [
      "programmeringsspråk som ikke blir kompilert til objekt- eller maskinkode, men fortolket av et eget program på vertsmaskinen.",
      "",
      "Fordelen med slike språk er at man kan lage programmer som kan gjøre på mange forskjellige datamaskiner og operativsystemer uten å skreddersy dem for hver enkelt plattform.",
      "",
      "Eksempler på fortolkede språk:",
      "- Python",
      "- Javascript",
      "- PHP",
      "- Perl",
    ].join("\n"),
  );
  assert.deepEqual(links, [
    { text: "datamaskiner", url: "https://snl.no/datamaskin" },
    { text: "operativsystemer", url: "https://snl.no/operativsystem" },
    { text: "Python", url: "https://snl.no/Python_-_programmeringsspr%C3%A5k" },
    { text: "PHP", url: "https://snl.no/Perl_-_IT" },
  ]);
  const other = bodyToText(
    '<h2>Del&nbsp;1</h2><p>A &amp; B<br>C</p><script>x()</script><a href="/rel">rel</a>',
  );
  assert.equal(other.text, "## Del 1\n\nA & B\nC\n\nrel");
  assert.deepEqual(other.links, [], "relative links are not listed");
});

Deno.test("slugOfPath() reads one decoded path segment and nothing else", () => {
  assert.equal(slugOfPath("/fortolket_programmeringsspr%C3%A5k"), "fortolket_programmeringsspråk");
  assert.equal(slugOfPath("/Oslo.json"), "Oslo");
  assert.equal(slugOfPath("/Oslo/"), "Oslo");
  assert.equal(slugOfPath("/a/b"), null);
  assert.equal(slugOfPath("/"), null);
});

Deno.test("sites: default base uses each site's host, an override sends all to one origin", () => {
  assert.equal(originFor("https://snl.no", "sml"), "https://sml.snl.no");
  assert.equal(originFor("https://snl.no/", "snl"), "https://snl.no");
  assert.equal(originFor("http://127.0.0.1:9000/", "nbl"), "http://127.0.0.1:9000");
  assert.equal(isDefaultBase("https://snl.no/"), true);
  assert.equal(siteOfHost("www.snl.no"), "snl");
  assert.equal(siteOfHost("LILLE.snl.no"), "lille");
  assert.equal(siteOfHost("snl.no.evil.example"), null);
  assert.equal(siteOfHost("evilsnl.no"), null);
  assert.deepEqual(snlSpec.hosts(snlSpec.schema.parse({})), [
    "snl.no",
    "nbl.snl.no",
    "sml.snl.no",
    "nkl.snl.no",
    "lille.snl.no",
  ]);
  assert.deepEqual(snlSpec.hosts(snlSpec.schema.parse({ base_url: "http://127.0.0.1:9000" })), [
    "127.0.0.1:9000",
  ]);
  assert.deepEqual(snlSpec.allowNet, ["snl.no", "nbl.snl.no", "sml.snl.no", "nkl.snl.no", "lille.snl.no"]);
});

Deno.test("licenseTerms() explains fri, begrenset and an unknown licence", () => {
  assert.equal(licenseTerms("fri").name, "CC BY-SA 3.0");
  assert.match(licenseTerms("fri").reuse, /meta\.snl\.no\/fri_gjenbruk/);
  assert.match(licenseTerms("begrenset").reuse, /permission/);
  assert.equal(licenseTerms(null).name, "not stated");
  assert.equal(licenseTerms("ny").name, "ny");
});

Deno.test("bodyToText() reads hostile markup in linear time and still finds links and drops scripts", () => {
  // Each of these took 35-48 s with patterns that let one attempt scan to the end of the body.
  assert.equal(bodyToText("<".repeat(200_000)).text.length, 200_000);
  assert.equal(bodyToText("<a ".repeat(70_000)).links.length, 0);
  assert.equal(bodyToText(`${"<script>".repeat(25_000)}tekst`).text, "tekst");
  const mixed = bodyToText(
    '<p>Se <a href="https://snl.no/x">x</a>.</p><script>alert(1)</script><a <a href="https://snl.no/y">y</a>',
  );
  assert.deepEqual(mixed.links.map((l) => l.url), ["https://snl.no/x", "https://snl.no/y"]);
  assert.doesNotMatch(mixed.text, /alert/);
});
