// A fake FRED API on 127.0.0.1 serving the recorded fixtures (see tests/fixtures/fred/README.md
// for what is recorded and what is built here from recorded items in the documented envelopes).
import { FakeUpstream, fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply, Route } from "../../fakes/upstream.ts";

/** A key in FRED's documented format (32 lower-case letters and digits); tests grep for it. */
export const TEST_KEY = "0123456789abcdef0fedcba987654321";

const F = "fred/";

function json(path: string): Record<string, unknown> {
  return JSON.parse(fixtureText(`${F}${path}`));
}

/** The recorded GNPCA observations (84 rows), for slicing. */
export const GNPCA_OBS = json("official_doc_series_observations_GNPCA.json");

function envelope(key: string, items: unknown[], req: Received, limit = 1000): Record<string, unknown> {
  const offset = Number(req.url.searchParams.get("offset") ?? 0);
  const lim = Number(req.url.searchParams.get("limit") ?? limit);
  return {
    realtime_start: "2013-08-14",
    realtime_end: "2013-08-14",
    order_by: req.url.searchParams.get("order_by") ?? "series_id",
    sort_order: req.url.searchParams.get("sort_order") ?? "asc",
    count: items.length,
    offset,
    limit: lim,
    [key]: items.slice(offset, offset + lim),
  };
}

/** FRED's JSON error body. */
export function fredError(status: number, message: string): Reply {
  return { status, json: { error_code: status, error_message: message } };
}

/** A generated observations answer of `count` rows in FRED's shape; every 97th value is ".". */
export function syntheticObservations(count: number, offset: number, limit: number): Record<string, unknown> {
  const end = Math.min(count, offset + limit);
  const observations = [];
  const day0 = Date.UTC(1900, 0, 1);
  for (let i = offset; i < end; i++) {
    observations.push({
      realtime_start: "2024-01-02",
      realtime_end: "2024-01-02",
      date: new Date(day0 + i * 86_400_000).toISOString().slice(0, 10),
      value: i % 97 === 0 ? "." : (100 + (i % 1000) / 7).toFixed(3),
    });
  }
  return {
    realtime_start: "2024-01-02",
    realtime_end: "2024-01-02",
    observation_start: "1776-07-04",
    observation_end: "9999-12-31",
    units: "lin",
    output_type: 1,
    file_type: "json",
    order_by: "observation_date",
    sort_order: "asc",
    count,
    offset,
    limit,
    observations,
  };
}

/**
 * An answer recast as output types 2 and 3 give it: no value or real-time fields, one column per
 * vintage named series id + "_" + YYYYMMDD (the shape pystlouisfed's docstring shows for
 * GNPCA). Built here, as no recorded body exists: the first vintage lacks every third value
 * ("."); type 3 (new and revised only) leaves out the unchanged second vintage on even rows,
 * and, without vintage_dates, has a third vintage that only added the newest four observations.
 */
export function byVintage(
  answer: Record<string, unknown>,
  id: string,
  req: Received,
): Record<string, unknown> {
  const outputType = Number(req.url.searchParams.get("output_type"));
  const asked = req.url.searchParams.get("vintage_dates");
  const dates = (asked ?? "2020-07-04,2021-03-25").split(",");
  const [a, b] = dates.map((d) => `${id}_${d.replaceAll("-", "")}`);
  const first = Number(answer["offset"] ?? 0);
  const count = Number(answer["count"]);
  const rows = (answer["observations"] as Record<string, unknown>[]).map((o, i) => {
    const n = first + i; // the row's place in the whole series, so pages agree with one answer
    const row: Record<string, unknown> = { date: o["date"], [a!]: n % 3 === 0 ? "." : o["value"] };
    if (b && (outputType === 2 || n % 2 === 1)) row[b] = o["value"];
    if (outputType === 3 && asked === null && n >= count - 4) row[`${id}_20240101`] = o["value"];
    return row;
  });
  return { ...answer, output_type: outputType, observations: rows };
}

function observations(req: Received): Reply {
  const p = req.url.searchParams;
  const id = p.get("series_id") ?? "";
  const offset = Number(p.get("offset") ?? 0);
  const limit = Number(p.get("limit") ?? 100_000);
  if (id === "NOPE") return fredError(400, "Bad Request.  The series does not exist.");
  const asc = GNPCA_OBS["observations"] as unknown[];
  const all = p.get("sort_order") === "desc" ? [...asc].reverse() : asc;
  const answer = id === "BIG"
    ? syntheticObservations(100_000, offset, limit)
    : id === "MID"
    ? syntheticObservations(3_000, offset, limit)
    : { ...GNPCA_OBS, offset, limit, observations: all.slice(offset, offset + limit) };
  const outputType = p.get("output_type");
  return { json: outputType === "2" || outputType === "3" ? byVintage(answer, id, req) : answer };
}

const series = () => (json("recorded_series_GNPCA.json")["seriess"] as unknown[]);
const tags = () => json("official_doc_series_tags_STLFSI.json");
const categories = () => json("recorded_category_125.json");
const releases = () => (json("recorded_release_53.json")["releases"] as unknown[]);
// No recorded body: the documented `sources[] {id, realtime_*, name, link}` shape.
const SOURCES = [{
  id: 1,
  realtime_start: "2013-08-14",
  realtime_end: "2013-08-14",
  name: "Board of Governors of the Federal Reserve System",
  link: "http://www.federalreserve.gov/",
}];

/** Routes answering every FRED v1 and Maps endpoint the tools call. */
export function fredRoutes(): Route[] {
  const seriesList = (req: Received) => ({ json: envelope("seriess", series(), req) });
  const tagList = () => ({ json: tags() });
  return [
    { path: "/fred/category", reply: () => ({ json: categories() }) },
    { path: "/fred/category/children", reply: () => ({ json: categories() }) },
    { path: "/fred/category/related", reply: () => ({ json: categories() }) },
    { path: "/fred/category/series", reply: seriesList },
    { path: "/fred/category/tags", reply: tagList },
    { path: "/fred/category/related_tags", reply: tagList },
    { path: "/fred/releases", reply: (req) => ({ json: envelope("releases", releases(), req) }) },
    {
      path: "/fred/releases/dates",
      reply: (req) => ({
        json: envelope("release_dates", [{
          release_id: 53,
          release_name: "Gross Domestic Product",
          date: "2013-07-31",
        }], req),
      }),
    },
    { path: "/fred/release", reply: { fixture: `${F}recorded_release_53.json` } },
    { path: "/fred/release/dates", reply: { fixture: `${F}official_doc_release_dates_82.json` } },
    { path: "/fred/release/series", reply: seriesList },
    { path: "/fred/release/sources", reply: () => ({ json: { sources: SOURCES } }) },
    { path: "/fred/release/tags", reply: tagList },
    { path: "/fred/release/related_tags", reply: tagList },
    {
      path: "/fred/release/tables",
      reply: () => ({
        body: fixtureText(`${F}official_doc_release_tables_53_element_12886.AS_PUBLISHED_INVALID.txt`)
          .replace(
            /^\{\s*\{/,
            "{",
          ),
        contentType: "application/json",
      }),
    },
    {
      path: "/fred/series",
      reply: (req) =>
        req.url.searchParams.get("series_id") === "NOPE"
          ? fredError(400, "Bad Request.  The series does not exist.")
          : { fixture: `${F}recorded_series_GNPCA.json` },
    },
    { path: "/fred/series/search", reply: seriesList },
    { path: "/fred/series/categories", reply: () => ({ json: categories() }) },
    { path: "/fred/series/observations", reply: observations },
    { path: "/fred/series/release", reply: { fixture: `${F}recorded_release_53.json` } },
    { path: "/fred/series/tags", reply: tagList },
    { path: "/fred/series/search/tags", reply: tagList },
    { path: "/fred/series/search/related_tags", reply: tagList },
    {
      path: "/fred/series/updates",
      reply: (req) => ({
        json: { ...envelope("seriess", series(), req), filter_variable: "geography", filter_value: "all" },
      }),
    },
    {
      path: "/fred/series/vintagedates",
      reply: (req) => ({
        json: envelope(
          "vintage_dates",
          ["1958-12-21", "1959-02-19", "1959-07-19", "2013-07-31"],
          req,
          10_000,
        ),
      }),
    },
    { path: "/fred/sources", reply: (req) => ({ json: envelope("sources", SOURCES, req) }) },
    { path: "/fred/source", reply: () => ({ json: { sources: SOURCES } }) },
    { path: "/fred/source/releases", reply: (req) => ({ json: envelope("releases", releases(), req) }) },
    { path: "/fred/tags", reply: tagList },
    { path: "/fred/related_tags", reply: tagList },
    { path: "/fred/tags/series", reply: seriesList },
    { path: "/geofred/shapes/file", reply: { fixture: `${F}recorded_geofred_shapes_file_state.json` } },
    {
      // The documented example (FRED Maps series/group page), as quoted in the upstream notes §5.
      path: "/geofred/series/group",
      reply: {
        json: {
          series_group: {
            title: "All Employees: Total Private",
            region_type: "state",
            series_group: "1223",
            season: "NSA",
            units: "Thousands of Persons",
            frequency: "Annual",
            min_date: "1990-01-01",
            max_date: "2021-01-01",
          },
        },
      },
    },
    {
      path: "/geofred/regional/data",
      reply: { fixture: `${F}recorded_geofred_regional_data_882_state_2013.json` },
    },
    {
      path: "/geofred/series/data",
      reply: { fixture: `${F}recorded_geofred_regional_data_882_state_2013.json` },
    },
  ];
}

/**
 * Adds a series `STUCK` of `rows` observations whose second page waits until `release()`, so a
 * job that pulls it keeps running for as long as a test needs.
 */
export function routeStuckSeries(fake: FakeUpstream, rows: number): { release: () => void } {
  const gate = Promise.withResolvers<void>();
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === "STUCK",
    reply: async (r: Received) => {
      const offset = Number(r.url.searchParams.get("offset") ?? 0);
      if (offset > 0) await gate.promise;
      return { json: syntheticObservations(rows, offset, Number(r.url.searchParams.get("limit"))) };
    },
  });
  return { release: () => gate.resolve() };
}

/** Adds a series `id` of `rows` synthetic observations, served page by page at once. */
export function routeSyntheticSeries(fake: FakeUpstream, id: string, rows: number): void {
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === id,
    reply: (r: Received) => ({
      json: syntheticObservations(
        rows,
        Number(r.url.searchParams.get("offset") ?? 0),
        Number(r.url.searchParams.get("limit")),
      ),
    }),
  });
}

/** Starts a fake FRED with every route. */
export function startFakeFred(): FakeUpstream {
  return FakeUpstream.start(fredRoutes());
}

/** FRED's settings in tests: no pacing, small backoffs, no cache, the test key. */
export const FRED_SETTINGS: Readonly<Record<string, string | number>> = {
  api_key: TEST_KEY,
  rate_limit_per_minute: 0,
  rate_limit_per_second: 0,
  retry_backoff_ms: 5,
  rate_limit_retry_delay: 0.05,
  timeout: 10,
  cache_ttl: 0,
};

/** The provider block for a config file: FRED_SETTINGS, then `extra`. */
export function fredConfig(origin: string, extra: Record<string, unknown> = {}): string {
  const block: Record<string, unknown> = { base_url: origin, ...FRED_SETTINGS, ...extra };
  const lines = Object.entries(block).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`);
  return `providers:\n  fred:\n${lines.join("\n")}\n`;
}
