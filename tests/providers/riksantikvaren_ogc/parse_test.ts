import assert from "node:assert/strict";
import {
  decodeCursor,
  decodeNearbyCursor,
  encodeCursor,
  encodeNearbyCursor,
} from "../../../lib/providers/riksantikvaren_ogc/cursor.ts";
import {
  defaultLicence,
  fallbackPoint,
  foldKey,
  heritageFields,
} from "../../../lib/providers/riksantikvaren_ogc/heritage.ts";
import {
  parseCatalog,
  parseCollections,
  parseFeature,
  parseFeaturePage,
} from "../../../lib/providers/riksantikvaren_ogc/parse.ts";
import { KNOWN_DATASETS, likeEscape } from "../../../lib/providers/riksantikvaren_ogc/tools.ts";
import { fixtureText } from "../../fakes/upstream.ts";

Deno.test("parseCatalog() takes ids from id or the landing page URL and skips unusable entries", () => {
  const datasets = parseCatalog(JSON.parse(fixtureText("ra_ogc/catalog.json")), "https://api.ra.no");
  assert.deepEqual(datasets.map((d) => d.id), [
    "LokaliteterEnkeltminnerOgSikringssoner",
    "brukerminner",
    "kulturminner",
  ]);
  assert.equal(datasets[1]!.title, "Brukerminner");
  const versioned = parseCatalog(
    {
      apis: [{ landingPageUri: "https://example.org/ogc/trees/v1/" }, {
        links: [{ rel: "self", href: "/ogc/x" }],
      }],
    },
    "https://example.org/ogc/",
  );
  assert.deepEqual(versioned.map((d) => d.id), ["trees/v1", "x"]);
  assert.deepEqual(parseCatalog({ apis: [null, 3, {}] }, "https://api.ra.no"), []);
});

Deno.test("parseCatalog(), parseCollections() and parseFeaturePage() call a body of the wrong shape a DECODE_ERROR", () => {
  const cases: [() => unknown, RegExp][] = [
    [
      () => parseCatalog({ title: "no apis" }, "https://api.ra.no"),
      /dataset catalog: it sent an object without "apis"/,
    ],
    [() => parseCatalog("<html>", "https://api.ra.no"), /it sent a string/],
    [() => parseCollections(null), /a list of collections: it sent null/],
    [() => parseCollections([]), /it sent an array/],
    [() => parseCollections({ collections: {} }), /whose "collections" is an object/],
    [
      () => parseFeaturePage([{ type: "Feature", id: 7, geometry: null, properties: {} }]),
      /it sent an array/,
    ],
    [() => parseFeaturePage({ numberMatched: -1, features: "x" }), /whose "features" is a string/],
    [() => parseFeaturePage({ type: "FeatureCollection", features: [null] }), /feature 1 is null/],
    [() => parseFeaturePage(42), /feature collection: it sent a number/],
  ];
  for (const [run, message] of cases) {
    assert.throws(run, (e: unknown) => {
      assert.equal((e as { errorType?: string }).errorType, "DECODE_ERROR");
      assert.match((e as Error).message, message);
      return true;
    });
  }
});

Deno.test("parseCollections() reads extents (4 or 6 values) and licence links", () => {
  const { collections, licence } = parseCollections(
    JSON.parse(fixtureText("ra_ogc/collections_LokaliteterEnkeltminnerOgSikringssoner.json")),
  );
  assert.equal(collections.length, 3);
  assert.deepEqual(collections[0]!.bbox, [4.0, 57.9, 31.2, 71.2]);
  assert.deepEqual(collections[2]!.bbox, [4.0, 57.9, 31.2, 71.2], "a 3D bbox is reduced to 2D");
  assert.equal(collections[0]!.licence?.url, "https://data.norge.no/nlod/no/2.0");
  assert.match(licence?.name ?? "", /NLOD/);
  const projected = parseCollections({
    collections: [{ id: "a", extent: { spatial: { bbox: [[-1e5, 6e6, 1e6, 7e6]] } } }],
  });
  assert.equal(projected.collections[0]!.bbox, null, "a projected extent is not passed off as degrees");
  assert.deepEqual(parseCollections({ collections: [{ title: "no id" }, null, 3] }).collections, []);
});

Deno.test("parseCollections() reads the recorded api.ra.no collections with their licence link", () => {
  const { collections, licence } = parseCollections(
    JSON.parse(fixtureText("ra_ogc/LokaliteterEnkeltminnerOgSikringssoner__collections.json")),
  );
  assert.deepEqual(collections.map((c) => c.id), ["enkeltminner", "lokaliteter", "sikringssoner"]);
  assert.deepEqual(collections[1]!.bbox, [-14.48, 55.59, 38.16, 84.84]);
  assert.deepEqual(licence, { name: "NLOD", url: "https://data.norge.no/nlod" });
});

Deno.test("parseFeaturePage() reads numberMatched and the next link", () => {
  const p1 = parseFeaturePage(JSON.parse(fixtureText("ra_ogc/items_lokaliteter_p1.json")));
  assert.equal(p1.features.length, 2);
  assert.equal(p1.numberMatched, 3);
  assert.match(p1.next ?? "", /offset=2/);
  const bm = parseFeaturePage(JSON.parse(fixtureText("ra_ogc/items_brukerminner_p1.json")));
  assert.equal(bm.numberMatched, null);
  const empty = parseFeaturePage({ type: "FeatureCollection", numberMatched: -1, features: [] });
  assert.deepEqual([empty.features, empty.numberMatched, empty.next], [[], null, null]);
});

Deno.test("parseFeaturePage() reads the recorded bbox page: null geometries, string ids, the next link", () => {
  const pg = parseFeaturePage(
    JSON.parse(
      fixtureText(
        "ra_ogc/LokaliteterEnkeltminnerOgSikringssoner__lokaliteter__items_bbox_limit1000_page1__TRIMMED.json",
      ),
    ),
  );
  assert.deepEqual([pg.numberMatched, pg.numberReturned], [8094, 1000]);
  assert.deepEqual(pg.features.map((f) => f.geometry?.type ?? null), [
    null,
    null,
    null,
    "MultiPolygon",
    "MultiPolygon",
    "MultiPolygon",
    "MultiPolygon",
  ]);
  assert.equal(pg.features[0]!.id, "100007-1");
  assert.match(pg.next ?? "", /offset=1000/);
  const freda = parseFeaturePage(
    JSON.parse(fixtureText("ra_ogc/KulturminnerFredaBygninger__fredabygninger__items_bbox.json")),
  );
  assert.deepEqual(freda.features.map((f) => f.id), ["1876987", "1877018", "1877181"], "integer ids as text");
});

Deno.test("parseFeature() reads ids from the feature or its properties and flags unreadable geometry", () => {
  assert.equal(parseFeature({ type: "Feature", properties: { kulturminneId: "42178" } })!.id, "42178");
  const utm = parseFeature({
    id: "x",
    geometry: { type: "Point", coordinates: [262000, 6650000] },
    properties: null,
  })!;
  assert.equal(utm.geometry, null);
  assert.equal(utm.geometryUnreadable, true);
  assert.deepEqual(utm.properties, {});
  assert.equal(parseFeature("nope"), null);
  assert.equal(parseFeature([1, 2]), null);
  assert.equal(parseFeature({ foo: 1 }), null, "an object that is no Feature");
  const real = parseFeature(
    JSON.parse(fixtureText("ra_ogc/LokaliteterEnkeltminnerOgSikringssoner__lokaliteter__item_51949.json")),
  )!;
  assert.equal(real.id, "51949");
  assert.equal(real.geometry?.type, "MultiPolygon");
});

Deno.test("heritageFields() reads the spellings the datasets use", () => {
  const lok = heritageFields({
    navn: "Mariakirken",
    kommune: "0301",
    kulturminneKategori: "Arkeologisk lokalitet",
    vernetype: "Automatisk fredet",
    vernelov: "KML",
    verneparagraf: "§ 4",
    kulturminneDatering: "Middelalder",
    linkKulturminnesøk: "https://kulturminnesok.no/ra/lokalitet/42178",
  });
  assert.equal(lok.name, "Mariakirken");
  assert.equal(lok.protection, "Automatisk fredet, KML (Kulturminnelova av 1978) § 4");
  assert.equal(lok.kulturminnesok_url, "https://kulturminnesok.no/ra/lokalitet/42178");
  const bm = heritageFields({
    tittel: "Minne",
    linkkulturminnesok: "https://www.kulturminnesok.no/kart/?id=x",
    fylke: "Oslo",
  });
  assert.equal(bm.name, "Minne");
  assert.equal(bm.county, "Oslo");
  assert.equal(bm.kulturminnesok_url, "https://www.kulturminnesok.no/kart/?id=x");
  const built = heritageFields({ navn: "X", lokalitetid: "123", link: "javascript:alert(1)" });
  assert.equal(built.kulturminnesok_url, "https://kulturminnesok.no/ra/lokalitet/123");
  assert.equal(heritageFields({ navn: "X", linkKulturminnesøk: "not a url" }).kulturminnesok_url, null);
  assert.equal(heritageFields({ kommunenavn: "Oslo", kommune: "0301" }).municipality, "Oslo (0301)");
  assert.equal(foldKey("linkKulturminnesøk"), "linkkulturminnesok");
});

Deno.test("fallbackPoint() reads senterpunkt, then gpsposisjon latitude first", () => {
  assert.deepEqual(fallbackPoint({ senterpunkt: { type: "Point", coordinates: [10.7, 59.9] } }), {
    lat: 59.9,
    lon: 10.7,
  });
  assert.deepEqual(fallbackPoint({ gpsposisjon: "59.9, 10.7" }), { lat: 59.9, lon: 10.7 });
  assert.equal(fallbackPoint({ gpsposisjon: "nowhere" }), null);
});

Deno.test("defaultLicence() says CC BY for user memories and NLOD for the registry", () => {
  assert.match(defaultLicence("brukerminner", "brukerminner").name, /CC BY 4\.0/);
  assert.match(defaultLicence("LokaliteterEnkeltminnerOgSikringssoner", "lokaliteter").name, /NLOD 2\.0/);
});

Deno.test("encodeCursor() round-trips and decodeCursor() refuses anything else", () => {
  const state = {
    dataset: "brukerminner",
    collection: "brukerminner",
    query: "f=json&limit=2&offset=2",
    offset: 2,
  };
  const c = encodeCursor(state);
  assert.match(c, /^ra1\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodeCursor(c), state);
  assert.equal(
    decodeCursor("ra1." + btoa(JSON.stringify({ d: "x", c: "y", q: "", o: 0, u: "http://10.0.0.1" }))),
    undefined,
  );
  assert.equal(decodeCursor("ra1." + btoa(JSON.stringify({ d: "x", c: "y", q: "", o: -1 }))), undefined);
  assert.equal(decodeCursor(c.slice(0, -3)), undefined);
  assert.equal(decodeCursor("ra2." + c.slice(4)), undefined);
  const skipping = { ...state, skip: 5 };
  assert.deepEqual(decodeCursor(encodeCursor(skipping)), skipping);
});

Deno.test("encodeNearbyCursor() round-trips and decodeNearbyCursor() refuses other cursors", () => {
  const state = {
    dataset: "LokaliteterEnkeltminnerOgSikringssoner",
    collection: "lokaliteter",
    lat: 59.7505,
    lon: 10.7983,
    radiusM: 400,
    position: 1000,
    read: 1000,
    withoutLocation: 996,
    candidates: [["140660-1", 12.5], ["140661-1", 40]] as [string, number][],
  };
  const c = encodeNearbyCursor(state);
  assert.match(c, /^rn1\./);
  assert.deepEqual(decodeNearbyCursor(c), state);
  assert.equal(
    decodeNearbyCursor(encodeCursor({ dataset: "a", collection: "b", query: "", offset: 0 })),
    undefined,
  );
  assert.equal(decodeCursor(c), undefined);
});

Deno.test("likeEscape() escapes quotes and LIKE wildcards for CQL2", () => {
  assert.equal(likeEscape("O'Brien 100%_"), "O''Brien 100\\%\\_");
  assert.equal(KNOWN_DATASETS["lokaliteter"], "LokaliteterEnkeltminnerOgSikringssoner");
  assert.equal(KNOWN_DATASETS["kulturmiljoer"], "KulturminnerKulturmiljoer", "as the recorded bodies show");
});
