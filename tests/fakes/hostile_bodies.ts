// Hostile upstream bodies shared by the tests that check the server's work budgets and by
// `deno task hostile` (tools/bench/hostile_compute.ts): generated, never committed, so a
// 13 MB polygon costs the repository nothing.
import { fixtureText } from "./upstream.ts";
import type { FakeUpstream } from "./upstream.ts";

/** The recorded OGC dataset the hostile features are served from. */
export const OGC_DATASET = "LokaliteterEnkeltminnerOgSikringssoner";

/**
 * A GeoJSON Feature (text) whose Polygon outer ring has `vertices` positions around Oslo: a
 * spiky circle about 2 km across with 8-decimal coordinates, so no vertex lies on a line through
 * its neighbours and Douglas-Peucker keeps many of them at every tolerance.
 */
export function spikyPolygonFeature(id: string, vertices: number): string {
  const parts: string[] = [];
  const n = Math.max(3, vertices - 1);
  for (let i = 0; i < n; i++) {
    const a = (2 * Math.PI * i) / n;
    const r = 0.01 * (1 + 0.3 * (((i * 7919) % 97) / 97));
    parts.push(`[${(10.75 + r * 2 * Math.cos(a)).toFixed(8)},${(59.9 + r * Math.sin(a)).toFixed(8)}]`);
  }
  parts.push(parts[0]!);
  return `{"type":"Feature","id":"${id}","geometry":{"type":"Polygon","coordinates":[[${
    parts.join(",")
  }]]},` +
    `"properties":{"kulturminneId":"${id}","navn":"Hostile polygon","kommune":"0301"}}`;
}

/**
 * A GeoJSON Feature of a point whose body is made big (13.4 MB at 1,700,000 pairs of small
 * integers: many values per byte) by a member no reader looks at: what it costs is decoding the
 * JSON, nothing after.
 */
export function bulkyFeature(id: string, pairs: number): string {
  const samples = Array.from(
    { length: pairs },
    (_, i) => `[${i % 1000},${i % 7}]`,
  );
  return `{"type":"Feature","id":"${id}","geometry":{"type":"Point","coordinates":[10.75,59.9]},` +
    `"properties":{"kulturminneId":"${id}","navn":"Bulky feature","kommune":"0301"},` +
    `"extensions":{"samples":[${samples.join(",")}]}}`;
}

/** The recorded SNL article (text) with its `xhtml_body` replaced by `body`. */
export function snlArticleWith(body: string): string {
  return JSON.stringify({
    ...JSON.parse(fixtureText("snl/article_fortolket_programmeringsspraak.json")),
    xhtml_body: body,
  });
}

/** Hostile SNL article bodies of about 4 MB each, by label. */
export const HOSTILE_MARKUP: Readonly<Record<string, () => string>> = {
  "1.3 million unclosed '<a '": () => "<a ".repeat(1_300_000),
  "500,000 unclosed '<script '": () => "<script ".repeat(500_000),
  "650,000 '&#x41;' entities": () => "&#x41;".repeat(650_000),
};

/** A FRED series answer (text) whose one series has `title` as its title and notes. */
export function fredSeriesWithTitle(id: string, title: string): string {
  return JSON.stringify({
    realtime_start: "2024-01-01",
    realtime_end: "2024-01-01",
    seriess: [{
      id,
      title,
      notes: title,
      observation_start: "2000-01-01",
      observation_end: "2024-01-01",
      frequency: "Monthly",
      frequency_short: "M",
      units: "Percent",
      units_short: "%",
      seasonal_adjustment: "Not Seasonally Adjusted",
      seasonal_adjustment_short: "NSA",
      last_updated: "2024-01-01 07:44:03-06",
      popularity: 1,
      realtime_start: "2024-01-01",
      realtime_end: "2024-01-01",
    }],
  });
}

/** Serves the recorded OGC catalog and collections, pointing at `fake`. */
export function serveOgcCatalog(fake: FakeUpstream): void {
  for (
    const [path, name] of [["/", "catalog.json"], [
      `/${OGC_DATASET}/collections`,
      `collections_${OGC_DATASET}.json`,
    ]]
  ) {
    fake.route({
      path: path!,
      reply: () => ({
        body: fixtureText(`ra_ogc/${name}`).replaceAll("https://api.ra.no", fake.origin),
        contentType: "application/json",
      }),
    });
  }
}
