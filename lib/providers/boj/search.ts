// The BOJ's part of `opendata_search`, answered from what the server holds (no request to the
// BOJ, which asks users to avoid high-frequency access): series of the local catalogue whose
// code, names, unit or frequency hold every word, each with the boj_get_data_code call that
// fetches it, then databases whose code or names hold every word, each with the
// boj_get_metadata call that lists its series.
import type { SearchHit, SearchSource } from "../../mcp/provider.ts";
import { CREDIT_EN, DATABASES, TERMS_URL } from "./catalog.ts";
import type { DatabaseEntry } from "./catalog.ts";
import { SERIES_CATALOG } from "./series_catalog.ts";
import type { CatalogSeries } from "./series_catalog.ts";

function fold(text: string): string {
  return text.normalize("NFKC").toLowerCase();
}

function matchesAll(terms: readonly string[], fields: readonly string[]): boolean {
  const hay = fold(fields.join("\n"));
  return terms.every((t) => hay.includes(t));
}

function period(value: string): string {
  if (/^\d{8}$/.test(value)) return `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6)}`;
  if (/^\d{6}$/.test(value)) return `${value.slice(0, 4)}-${value.slice(4)}`;
  return value;
}

/**
 * The start_date of a recent window for a series of `frequency`, as of `now` (epoch ms): about a
 * month of daily values, a year of monthly ones, a few years otherwise, never the whole history.
 */
export function recentStart(frequency: string, now: number): string {
  const d = new Date(now);
  const f = frequency.toUpperCase();
  const months = f.startsWith("DAILY") || f.startsWith("WEEKLY") ? 1 : f.startsWith("MONTHLY") ? 12 : 0;
  if (months) {
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() - months);
    return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
  }
  const year = d.getUTCFullYear() - (f.startsWith("ANNUAL") ? 5 : 2);
  if (f.startsWith("QUARTERLY")) return `${year}01`;
  if (f.startsWith("SEMIANNUAL")) return `${year}01`;
  return String(year);
}

function seriesHit(s: CatalogSeries, now: number): SearchHit {
  return {
    title: `${s.db} ${s.code}: ${s.name_en}`,
    snippet: `${s.name_ja} · ${s.unit_en} · ${s.frequency.toLowerCase()}, ${period(s.start)} to ${
      period(s.end)
    }`,
    next: {
      tool: "boj_get_data_code",
      arguments: { db: s.db, codes: [s.code], start_date: recentStart(s.frequency, now), lang: "en" },
      for: "recent values",
    },
    also: [{ tool: "boj_get_metadata", arguments: { db: s.db, lang: "en" }, for: `other ${s.db} series` }],
  };
}

function databaseHit(d: DatabaseEntry): SearchHit {
  return {
    title: `${d.code}: ${d.name_en} (Bank of Japan database)`,
    snippet: `${d.name_ja} · ${d.category_en}; boj_get_metadata lists its series`,
    next: { tool: "boj_get_metadata", arguments: { db: d.code, lang: "en" }, for: "its series" },
  };
}

/** The hits for `query`, best first: exact codes, then series, then databases. */
export function searchCatalog(query: string, limit: number, now = Date.now()): SearchHit[] {
  const terms = fold(query).split(/\s+/).filter(Boolean);
  if (terms.length === 0 || limit <= 0) return [];
  const whole = terms.join(" ");
  const ranked: { score: number; order: number; hit: () => SearchHit }[] = [];
  SERIES_CATALOG.forEach((s, order) => {
    const exact = fold(s.code) === whole || fold(`${s.db}'${s.code}`) === whole;
    if (exact || matchesAll(terms, [s.db, s.code, s.name_en, s.name_ja, s.unit_en, s.frequency])) {
      ranked.push({ score: exact ? 4 : 2, order, hit: () => seriesHit(s, now) });
    }
  });
  DATABASES.forEach((d, order) => {
    const exact = fold(d.code) === whole;
    if (exact || matchesAll(terms, [d.code, d.name_en, d.name_ja, d.category_en, d.category_ja])) {
      ranked.push({ score: exact ? 3 : 1, order: SERIES_CATALOG.length + order, hit: () => databaseHit(d) });
    }
  });
  ranked.sort((a, b) => b.score - a.score || a.order - b.order);
  return ranked.slice(0, limit).map((r) => r.hit());
}

/** The search source over the local catalogue. */
export function createSearchSource(clock: { now(): number } = { now: Date.now }): SearchSource {
  return {
    widen: () => [{ tool: "boj_list_databases", arguments: {}, for: "the 50 databases" }],
    name: "Bank of Japan Time-Series Data Search (local series catalogue)",
    licence: `${CREDIT_EN} Terms: ${TERMS_URL}`,
    search: (query, options) => Promise.resolve(searchCatalog(query, options.limit, clock.now())),
  };
}
