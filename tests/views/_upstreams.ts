// Fake upstreams for the view tests: one loopback server per provider whose tools have a view,
// serving the recorded bodies of tests/fixtures/ (see each folder's README for provenance), and
// the config file that points every provider at its fake.
import { fredConfig, fredRoutes } from "../providers/fred/fake_fred.ts";
import { FakeUpstream, fixtureText } from "../fakes/upstream.ts";
import type { Received } from "../fakes/upstream.ts";

/** The providers whose tools name a view. */
export const VIEW_PROVIDERS = [
  "fred",
  "boj",
  "riksantikvaren_ogc",
  "riksantikvaren_arcgis",
  "wikipedia",
  "worldbank",
  "snl",
];

const DS = "LokaliteterEnkeltminnerOgSikringssoner";
const ARCGIS = "/arcgis/rest/services/Distribusjon";
const SVC = `${ARCGIS}/Kulturminner20180301/MapServer`;
const WDS = "/api/v3/wds";

/** Every fake, and the config file naming them. */
export interface ViewUpstreams extends AsyncDisposable {
  configYaml: string;
  fakes: FakeUpstream[];
}

const param = (r: Received, name: string) => r.url.searchParams.get(name);

/** Starts the fakes. */
export function startViewUpstreams(): ViewUpstreams {
  const fred = FakeUpstream.start(fredRoutes());
  const boj = FakeUpstream.start([
    { path: "/api/v1/getDataCode", reply: { fixture: "boj/observed_getDataCode_FM01_STRDCLUCON_en.json" } },
    { path: "/api/v1/getDataLayer", reply: { fixture: "boj/constructed_getDataLayer_FM01_D_en.json" } },
  ]);
  const ogc = FakeUpstream.start([]);
  const o = ogc.origin;
  const ogcBody = (path: string) => fixtureText(path).replaceAll("https://api.ra.no", o);
  ogc.route({
    path: `/${DS}/collections`,
    reply: { body: ogcBody(`ra_ogc/${DS}__collections.json`), contentType: "application/json" },
  }).route({
    path: `/${DS}/collections/lokaliteter/items`,
    reply: (req) => ({
      body: ogcBody(
        Number(param(req, "offset") ?? 0) > 0
          ? "ra_ogc/items_lokaliteter_p2.json"
          : "ra_ogc/items_lokaliteter_p1.json",
      ),
      contentType: "application/geo+json",
    }),
  }).route({
    path: /^\/LokaliteterEnkeltminnerOgSikringssoner\/collections\/lokaliteter\/items\/[^/]+$/,
    reply: { body: ogcBody("ra_ogc/feature_lokaliteter_90001.json"), contentType: "application/geo+json" },
  });
  const arcgis = FakeUpstream.start([
    { path: SVC, reply: { fixture: "ra_arcgis/service_Kulturminner20180301.json" } },
    { path: `${SVC}/7`, reply: { fixture: "ra_arcgis/layer_7.json" } },
    { path: `${SVC}/7/query`, reply: { fixture: "ra_arcgis/query_layer7_all.json" } },
    { method: "POST", path: `${SVC}/7/query`, reply: { fixture: "ra_arcgis/query_layer7_all.json" } },
    { path: `${SVC}/identify`, reply: { fixture: "ra_arcgis/identify_point.json" } },
  ]);
  const wiki = FakeUpstream.start([
    {
      path: "/w/api.php",
      match: (r) => param(r, "list") === "geosearch",
      reply: { fixture: "wikipedia/geosearch_en_capecod_formatversion1.json" },
    },
    {
      path: "/w/api.php",
      match: (r) => param(r, "list") === "search",
      reply: { fixture: "wikipedia/search_en_meaning_formatversion1.json" },
    },
  ]);
  const wb = FakeUpstream.start([
    { path: WDS, reply: { fixture: "worldbank/synthetic_search_list_shapes.json" } },
  ]);
  const snl = FakeUpstream.start([
    { path: "/api/v1/search", reply: { fixture: "snl/synthetic_search_programmering_first_sentences.json" } },
  ]);
  const fakes = [fred, boj, ogc, arcgis, wiki, wb, snl];
  const block = (id: string, base: string) =>
    `  ${id}:\n    base_url: ${base}\n    cache_ttl: 0\n    max_retries: 0\n    retry_backoff_ms: 1\n`;
  const configYaml = fredConfig(fred.origin) +
    block("boj", boj.origin) +
    block("riksantikvaren_ogc", ogc.origin) +
    block("riksantikvaren_arcgis", `${arcgis.origin}${ARCGIS}`) +
    block("wikipedia", wiki.origin) +
    block("worldbank", `${wb.origin}${WDS}`) +
    block("snl", snl.origin);
  return {
    configYaml,
    fakes,
    async [Symbol.asyncDispose]() {
      for (const f of fakes) await f[Symbol.asyncDispose]();
    },
  };
}
