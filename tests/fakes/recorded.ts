// All eight real providers served from recorded bodies (tests/fixtures/<provider>/, with their
// provenance notes) on loopback fakes, for the task suite (tools/bench/tasks.ts) and
// tests that search across sources. One fake serves seven providers (their paths differ); FRED
// keeps its own fake (tests/providers/fred/fake_fred.ts). Requests no recording answers get the
// provider's own "nothing found" shape or its error body, as the upstream would send.
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";
import { FakeUpstream } from "./upstream.ts";
import type { Received, Reply } from "./upstream.ts";

const WDS = "/api/v3/wds";
const ARCGIS = "/arcgis/rest/services/Distribusjon";
const OGC = "/LokaliteterEnkeltminnerOgSikringssoner/collections";

/** The BOJ's getDataCode for any series: the observed STRDCLUCON body, renamed (values illustrative). */
function bojData(r: Received): Reply {
  const code = (r.url.searchParams.get("code") ?? "").split(",")[0] ?? "";
  if (code === "STRDCLUCON") return { fixture: "boj/observed_getDataCode_FM01_STRDCLUCON_en.json" };
  const db = r.url.searchParams.get("db") ?? "";
  return {
    json: {
      STATUS: 200,
      MESSAGEID: "M181000I",
      MESSAGE: "Successfully completed",
      DATE: "2026-02-21T23:41:54.410+09:00",
      PARAMETER: { FORMAT: "JSON", LANG: "EN", DB: db, STARTDATE: "", ENDDATE: "", STARTPOSITION: "" },
      NEXTPOSITION: null,
      RESULTSET: [{
        SERIES_CODE: code,
        VALUES: { SURVEY_DATES: [20260216, 20260217, 20260218], VALUES: [152.91, 153.22, 153.64] },
      }],
    },
  };
}

function bojMetadata(r: Received): Reply {
  const db = r.url.searchParams.get("db") ?? "";
  const lang = (r.url.searchParams.get("lang") ?? "jp").toLowerCase();
  const recorded: Record<string, string> = {
    "FM01:en": "boj/constructed_getMetadata_FM01_en.json",
    "FM08:en": "boj/constructed_getMetadata_FM08_en.json",
    "FM08:jp": "boj/constructed_getMetadata_FM08_jp.json",
    "IR01:en": "boj/constructed_getMetadata_IR01_en.json",
  };
  const fixture = recorded[`${db}:${lang}`];
  return fixture ? { fixture } : { status: 400, fixture: "boj/json_error_400_invalid_db.json" };
}

function wds(r: Received): Reply {
  const p = r.url.searchParams;
  if (p.get("id") === "18419181") {
    return { fixture: "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json" };
  }
  if (p.get("projectid") === "P123365") return { fixture: "worldbank/synthetic_project_P123365.json" };
  if (p.get("fct")) return { fixture: "worldbank/synthetic_facets_docty_count.json" };
  const q = (p.get("qterm") ?? "").toLowerCase();
  if (q.includes("zzyzx")) return { fixture: "worldbank/synthetic_empty.json" };
  if (/post office|financial inclusion|postal/.test(q)) {
    return { fixture: "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json" };
  }
  return { fixture: "worldbank/synthetic_empty.json" };
}

function wikipedia(r: Received): Reply {
  const p = r.url.searchParams;
  if (p.get("list") === "search") {
    const q = (p.get("srsearch") ?? "").toLowerCase();
    return q.includes("meaning")
      ? { fixture: "wikipedia/search_en_meaning_formatversion1.json" }
      : { fixture: "wikipedia/synthetic_search_no_hits_fv2.json" };
  }
  if (p.get("list") === "geosearch") return { fixture: "wikipedia/geosearch_en_capecod_formatversion1.json" };
  if (p.get("titles") === "Oslo" || p.get("page") === "Oslo") {
    return { fixture: "wikipedia/synthetic_content_oslo_fv2.json" };
  }
  return { fixture: "wikipedia/synthetic_summary_christiania_redirect_fv2.json" };
}

function snl(r: Received): Reply {
  const q = (r.url.searchParams.get("query") ?? "").toLowerCase();
  if (q.includes("dansband")) return { fixture: "snl/synthetic_search_dansband_first_two_sentences.json" };
  if (q.includes("programmering")) {
    return { fixture: "snl/synthetic_search_programmering_first_sentences.json" };
  }
  return { json: [] };
}

function ogcItems(r: Received): Reply {
  const p = r.url.searchParams;
  const geo = "application/geo+json";
  if (p.get("filter")?.toLowerCase().includes("mariakirken")) {
    return {
      fixture: "ra_ogc/LokaliteterEnkeltminnerOgSikringssoner__lokaliteter__items_cql2_LIKE_Mariakirken.json",
      contentType: geo,
    };
  }
  if (p.get("bbox")) return { fixture: "ra_ogc/items_lokaliteter_nearby.json", contentType: geo };
  return {
    json: { type: "FeatureCollection", features: [], numberMatched: 0, numberReturned: 0 },
    contentType: geo,
  };
}

function geonorge(r: Received): Reply {
  const text = (r.url.searchParams.get("text") ?? "").toLowerCase();
  return /kultur|fredete|sefrak|riksantikvaren|bygning/.test(text) || text === ""
    ? { fixture: "geonorge/search_riksantikvaren.json" }
    : { json: { NumFound: 0, Limit: 10, Offset: 1, Results: [] } };
}

/** The running fakes and the config that points every provider at them. */
export interface RecordedUpstreams extends AsyncDisposable {
  main: FakeUpstream;
  fred: FakeUpstream;
  /** config YAML for all eight providers. */
  configYaml: string;
}

/** Starts the fakes of all eight providers. */
export function startRecordedUpstreams(): RecordedUpstreams {
  const main = FakeUpstream.start([
    { path: WDS, reply: wds },
    { path: "/api/v1/getDataCode", reply: bojData },
    { path: "/api/v1/getMetadata", reply: bojMetadata },
    { path: "/w/api.php", reply: wikipedia },
    { path: "/api/v1/search", reply: snl },
    {
      path: /^\/.*\.json$/,
      match: (r) => !r.url.pathname.startsWith(OGC),
      reply: { fixture: "snl/article_fortolket_programmeringsspraak.json" },
    },
    { path: `${OGC}/lokaliteter/items`, reply: ogcItems },
    {
      path: /\/lokaliteter\/items\/[^/]+$/,
      reply: {
        fixture: "ra_ogc/LokaliteterEnkeltminnerOgSikringssoner__lokaliteter__item_51949.json",
        contentType: "application/geo+json",
      },
    },
    {
      path: "/LokaliteterEnkeltminnerOgSikringssoner/collections",
      reply: { fixture: "ra_ogc/collections_LokaliteterEnkeltminnerOgSikringssoner.json" },
    },
    { path: "/api/search", reply: geonorge },
    { path: ARCGIS, reply: { fixture: "ra_arcgis/folder_distribusjon.json" } },
    {
      path: `${ARCGIS}/Kulturminner20180301/MapServer`,
      reply: { fixture: "ra_arcgis/service_Kulturminner20180301.json" },
    },
    {
      path: `${ARCGIS}/Kulturminner20180301/MapServer/identify`,
      reply: { fixture: "ra_arcgis/identify_point.json" },
    },
    // Every layer answers with the recorded layer 7 (Lokaliteter) and its recorded query.
    { path: /\/Kulturminner20180301\/MapServer\/\d+$/, reply: { fixture: "ra_arcgis/layer_7.json" } },
    {
      path: /\/Kulturminner20180301\/MapServer\/\d+\/query$/,
      reply: { fixture: "ra_arcgis/query_layer7_all.json" },
    },
  ]);
  const fred = startFakeFred();
  // The FRED fake answers every series search with GNPCA; FRED finds it only for words of its title.
  fred.route({
    path: "/fred/series/search",
    match: (r) => !/gnp|gross national|real gnp/i.test(r.url.searchParams.get("search_text") ?? ""),
    reply: {
      json: {
        realtime_start: "2026-02-21",
        realtime_end: "2026-02-21",
        order_by: "search_rank",
        sort_order: "desc",
        count: 0,
        offset: 0,
        limit: 3,
        seriess: [],
      },
    },
  });
  const o = main.origin;
  const common = ["    max_retries: 0", "    cache_ttl: 0"];
  const block = (
    id: string,
    base: string,
    extra: string[] = [],
  ) => [`  ${id}:`, `    base_url: ${base}`, ...common, ...extra];
  const configYaml = [
    "providers:",
    ...block("worldbank", `${o}${WDS}`, ["    rate_limit_per_second: 0"]),
    ...block("boj", o),
    ...block("wikipedia", o),
    ...block("snl", o),
    ...block("riksantikvaren_ogc", o),
    ...block("riksantikvaren_arcgis", `${o}${ARCGIS}`),
    ...block("geonorge", o),
    ...fredConfig(fred.origin).split("\n").slice(1).filter((l) => l.trim()),
  ].join("\n") + "\n";
  return {
    main,
    fred,
    configYaml,
    async [Symbol.asyncDispose]() {
      await main[Symbol.asyncDispose]();
      await fred[Symbol.asyncDispose]();
    },
  };
}
