// The BOJ's part of `opendata_search`. Series are found in the API's own metadata (getMetadata of
// a database, read once and cached: the BOJ asks users to avoid high-frequency access): questions
// of the alias list ("USD/JPY", "policy rate", "CPI", "Tankan", in English or Japanese, ask.ts) in
// the databases that answer them; other words in the databases whose names hold them (their
// series' names holding the rest), so the same query finds the same series whatever was asked
// before. Then series of the local catalogue whose code, names, unit or frequency hold every word,
// and databases whose code or names hold every word. A series hit's next call fetches its recent values, a database hit's
// lists its series.
import type { Clock } from "../../clock.ts";
import { holdsWord } from "../../html.ts";
import type { SearchHit, SearchSource, ToolCallContext } from "../../mcp/provider.ts";
import { asksOf, isJapanese } from "./ask.ts";
import type { BojClient } from "./client.ts";
import type { MetadataEntry } from "./decode.ts";
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
 * The start_date of a recent window for a series of `frequency` that ends at `end` (its last
 * period, YYYYMMDD, YYYYMM or YYYY), else as of `now` (epoch ms): about a month of daily values, a
 * year of monthly ones, a few years otherwise, never the whole history. The window is counted back
 * from the series' own last value, so a series that stopped months ago still gets values.
 */
export function recentStart(frequency: string, end: string | undefined, now: number): string {
  const last = end === undefined ? undefined : periodTime(end);
  const d = new Date(last === undefined ? now : Math.min(last, now));
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

/** The first moment of a BOJ period written YYYYMMDD, YYYYMM or YYYY (epoch ms), or undefined. */
function periodTime(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})?(\d{2})?$/.exec(value.trim());
  if (!m) return undefined;
  const month = m[2] ? Number(m[2]) : 1;
  const t = Date.UTC(Number(m[1]), Math.min(Math.max(month, 1), 12) - 1, m[3] ? Number(m[3]) : 1);
  return Number.isFinite(t) ? t : undefined;
}

function seriesHit(s: CatalogSeries, now: number): SearchHit {
  return {
    title: `${s.db} ${s.code}: ${s.name_en}`,
    snippet: `${s.name_ja} · ${s.unit_en} · ${s.frequency.toLowerCase()}, ${period(s.start)} to ${
      period(s.end)
    }`,
    next: {
      tool: "boj_get_data_code",
      arguments: { db: s.db, codes: [s.code], start_date: recentStart(s.frequency, s.end, now), lang: "en" },
      for: "recent values",
    },
    also: [{ tool: "boj_get_metadata", arguments: { db: s.db, lang: "en" }, for: `other ${s.db} series` }],
  };
}

function databaseHit(d: DatabaseEntry, note?: string): SearchHit {
  return {
    title: `${d.code}: ${d.name_en} (Bank of Japan database)`,
    snippet: `${d.name_ja} · ${d.category_en}; boj_get_metadata lists its series${note ? `. ${note}` : ""}`,
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

/** Words that say nothing of which series is meant. */
const STOP = new Set([
  "a",
  "an",
  "and",
  "at",
  "for",
  "in",
  "is",
  "of",
  "on",
  "the",
  "to",
  "what",
  "whats",
  "latest",
  "last",
  "recent",
  "current",
  "value",
  "values",
  "data",
  "series",
  "show",
  "me",
  "how",
  "much",
]);
/** Words too common in the databases' names to pick one by themselves. */
const WEAK = new Set([
  "rate",
  "rates",
  "index",
  "indexes",
  "japan",
  "bank",
  "boj",
  "statistics",
  "amounts",
  "average",
]);

/**
 * Whether folded `hay` holds `term` at the start of one of its words ("price" in "prices", not
 * "us" in "business"), a term of three characters or fewer as a whole word ("us" not in "used");
 * a term in Japanese script anywhere, as Japanese has no spaces.
 */
export function holdsTerm(hay: string, term: string): boolean {
  return isJapanese(term) ? hay.includes(term) : holdsWord(hay, term);
}

/** The words of a folded query that can name a series or a database. */
export function queryTerms(folded: string): string[] {
  return [...new Set(folded.split(/[\s,;:()"'?!]+/).filter((t) => t.length >= 2 && !STOP.has(t)))];
}

/**
 * The databases whose names or category hold the most of `terms` (at least one that is not a
 * common word), best first, at most `max`, each with the terms its names hold: those terms are
 * said by the database, so its series' names need hold only the others.
 */
export function databasesFor(terms: readonly string[], max: number): { code: string; said: string[] }[] {
  const scored = DATABASES.map((d, order) => {
    const hay = fold([d.code, d.name_en, d.name_ja, d.category_en, d.category_ja].join("\n"));
    const said = terms.filter((t) => holdsTerm(hay, t));
    return { code: d.code, said, strong: said.some((t) => !WEAK.has(t)), order };
  }).filter((x) => x.strong);
  scored.sort((a, b) => b.said.length - a.said.length || a.order - b.order);
  return scored.slice(0, max).map(({ code, said }) => ({ code, said }));
}

/** How long a database's series list is kept for the search (the BOJ updates it once a day). */
const METADATA_TTL_MS = 6 * 3_600_000;
/** Most databases one search reads the metadata of. */
const MAX_DBS = 2;

/** A series hit from a getMetadata row. */
function metadataHit(db: string, e: MetadataEntry, now: number, ja: boolean): SearchHit {
  const nameJa = e.name_of_time_series_j ?? "";
  const name = e.name_of_time_series ?? nameJa;
  const freq = (e.frequency ?? "").toLowerCase();
  const range = e.start_of_the_time_series && e.end_of_the_time_series
    ? `, ${period(e.start_of_the_time_series)} to ${period(e.end_of_the_time_series)}`
    : "";
  return {
    title: `${db} ${e.series_code}: ${ja && nameJa ? nameJa : name}`,
    snippet: [ja ? name : nameJa, e.unit, `${freq}${range}`].filter(Boolean).join(" · "),
    next: {
      tool: "boj_get_data_code",
      arguments: {
        db,
        codes: [e.series_code],
        start_date: recentStart(e.frequency ?? "", e.end_of_the_time_series, now),
        lang: "en",
      },
      for: "recent values",
    },
  };
}

/**
 * The search source: questions people ask ("USD/JPY", "policy rate", "Tankan") answered from the
 * getMetadata of the databases that hold them (cached per database and language), then the local
 * catalogue of series and the 50 databases. A metadata read that fails leaves the local answer.
 */
export function createSearchSource(
  clock: Pick<Clock, "now"> = { now: Date.now },
  client?: BojClient,
): SearchSource {
  const cache = new Map<string, { at: number; entries: Promise<MetadataEntry[]> }>();
  const metadata = (db: string, lang: "EN" | "JP", ctx: ToolCallContext): Promise<MetadataEntry[]> => {
    const key = `${db}:${lang}`;
    const hit = cache.get(key);
    if (hit && clock.now() - hit.at < METADATA_TTL_MS) return hit.entries;
    const entries = client!.getMetadata({ db, format: "JSON", lang }, {
      signal: ctx.signal,
      logger: ctx.logger,
    })
      .then((f) => f.data.entries);
    cache.set(key, { at: clock.now(), entries });
    entries.catch(() => cache.delete(key));
    return entries;
  };
  return {
    name: "Bank of Japan Time-Series Data Search",
    languages: ["en", "ja"],
    licence: `${CREDIT_EN} Terms: ${TERMS_URL}`,
    widen: () => [{ tool: "boj_list_databases", arguments: {}, for: "the 50 databases" }],
    async search(query, options, ctx) {
      const now = clock.now();
      const folded = fold(query);
      const asks = client ? asksOf(folded) : [];
      const hits: SearchHit[] = [];
      const seen = new Set<string>();
      const ja = isJapanese(query);
      const lang = ja ? "JP" : "EN";
      // Where the series are looked for in the metadata, and what their names must hold: for a
      // question of the alias list, the databases that answer it and its words (any of them); else
      // the databases whose names hold the query's words, and the words they do not say (all of
      // them). The same query finds the same series whatever other callers asked before.
      const terms = queryTerms(folded);
      const plan = new Map<string, { any: string[] } | { all: string[] }>();
      for (const db of [...new Set(asks.flatMap((a) => a.dbs))].slice(0, MAX_DBS)) {
        plan.set(db, { any: asks.filter((a) => a.dbs.includes(db)).flatMap((a) => a.words).map(fold) });
      }
      if (client && asks.length === 0 && terms.length) {
        // A database whose names say every word is a hit of the catalogue (below): its series list,
        // which no series name could narrow, is not read.
        for (const { code, said } of databasesFor(terms, MAX_DBS)) {
          const rest = terms.filter((t) => !said.includes(t));
          if (rest.length) plan.set(code, { all: rest });
        }
      }
      for (const [db, want] of plan) {
        if (hits.length >= options.limit) break;
        let entries: MetadataEntry[];
        try {
          entries = await metadata(db, lang, ctx);
        } catch (e) {
          ctx.logger.info("boj search: metadata not read", { db, error: String(e) });
          continue;
        }
        for (const e of entries) {
          if (!e.series_code || hits.length >= options.limit) continue;
          const names = fold(`${e.name_of_time_series ?? ""}\n${e.name_of_time_series_j ?? ""}`);
          const fits = "any" in want
            ? want.any.length === 0 || want.any.some((w) => names.includes(w))
            : want.all.length > 0 && want.all.every((w) => holdsTerm(names, w));
          if (!fits) continue;
          seen.add(`${db}'${e.series_code}`);
          hits.push(metadataHit(db, e, now, ja));
        }
      }
      // Then the local catalogue (series, then databases), then the databases the question points at.
      for (const h of searchCatalog(query, options.limit, now)) {
        const key = h.title.split(":")[0]!.replace(" ", "'");
        if (!seen.has(key) && !hits.some((x) => x.title === h.title)) hits.push(h);
      }
      const note = asks.find((a) => a.note)?.note;
      for (const code of new Set(asks.flatMap((a) => a.dbs))) {
        const d = DATABASES.find((x) => x.code === code);
        if (d && !hits.some((h) => h.title.startsWith(`${d.code} `) || h.title.startsWith(`${d.code}:`))) {
          hits.push(databaseHit(d, note));
        }
      }
      return hits.slice(0, options.limit);
    },
  };
}
