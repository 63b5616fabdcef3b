// Markdown for FRED results, and the source and terms line every result carries.
import { markdownTable, shorten, truncationNotice } from "../../mcp/shaping.ts";
import type { ItemKind } from "./operations.ts";
import { isObservationValueKey } from "./parse.ts";

/** FRED's API terms of use. */
export const TERMS_URL = "https://fred.stlouisfed.org/docs/api/terms_of_use.html";

/** The notice FRED's terms ask API users to show. */
export const NOTICE =
  "This product uses the FRED® API but is not endorsed or certified by the Federal Reserve Bank of St. Louis.";

/** Where a result came from and under what terms. */
export interface Source {
  provider: string;
  /** The request URL, without the API key. */
  url: string;
  /** The series' page on fred.stlouisfed.org, when the result is about one series. */
  series_url?: string;
  terms_url: string;
  notice: string;
}

/**
 * A request URL fit to cite: parameter values over 120 characters (up to 2,000 vintage dates)
 * are shortened, saying how long they were, so the citation cannot push a result over the
 * response limit. Short URLs are kept exactly.
 */
export function citationUrl(url: string): string {
  if (url.length <= 1000) return url;
  const parsed = URL.parse(url);
  if (!parsed) return `${url.slice(0, 1000)}...`;
  for (const [key, value] of [...parsed.searchParams]) {
    if (value.length > 120) {
      parsed.searchParams.set(key, `${value.slice(0, 120)}...(${value.length} characters)`);
    }
  }
  return parsed.toString();
}

/** The source block of a result. */
export function sourceOf(url: string, seriesId?: unknown): Source {
  const source: Source = {
    provider: "Federal Reserve Bank of St. Louis, FRED® (Federal Reserve Economic Data)",
    url: citationUrl(url),
    terms_url: TERMS_URL,
    notice: NOTICE,
  };
  if (typeof seriesId === "string" && seriesId) {
    source.series_url = `https://fred.stlouisfed.org/series/${encodeURIComponent(seriesId)}`;
  }
  return source;
}

/** The source and terms lines at the end of a markdown result. */
export function sourceLines(source: Source): string {
  return [
    `Source: ${source.provider}: ${source.url}${
      source.series_url ? ` (series page: ${source.series_url})` : ""
    }`,
    `${source.notice} Terms: ${source.terms_url}. Some series carry third-party copyrights; check the series notes before republishing.`,
  ].join("\n");
}

type Column = [header: string, cell: (item: Record<string, unknown>) => unknown];

const col = (key: string, header = key): Column => [header, (i) => i[key]];

const COLUMNS: Partial<Record<ItemKind, Column[]>> = {
  categories: [col("id"), col("name"), col("parent_id")],
  series: [
    col("id"),
    col("title"),
    col("frequency_short", "freq"),
    col("units_short", "units"),
    col("seasonal_adjustment_short", "adj"),
    ["range", (i) => `${i["observation_start"] ?? "?"} to ${i["observation_end"] ?? "?"}`],
    col("last_updated"),
    col("popularity"),
  ],
  tags: [col("name"), col("group_id"), col("series_count"), col("popularity"), [
    "notes",
    (i) => shorten(String(i["notes"] ?? ""), 80),
  ]],
  releases: [col("id"), col("name"), col("press_release"), col("link")],
  release_dates: [col("release_id"), col("release_name"), col("date")],
  sources: [col("id"), col("name"), col("link")],
  observations: [col("date"), ["value", (i) => i["value"] ?? "missing"]],
  vintage_dates: [col("vintage_date")],
  elements: [
    col("element_id"),
    col("parent_id"),
    col("level"),
    col("line"),
    col("type"),
    col("name"),
    col("series_id"),
  ],
  regional_data: [
    col("date"),
    col("region"),
    col("code"),
    ["value", (i) => i["value"] ?? "missing"],
    col("series_id"),
  ],
};

/** The markdown table of `items` (shape features show their properties, not their geometry). */
export function itemsTable(kind: ItemKind, items: readonly Record<string, unknown>[]): string {
  if (items.length === 0) return "_No items._";
  let columns = COLUMNS[kind];
  if (kind === "observations" && !items.some((i) => "value" in i)) {
    // Output types 2 and 3: one value column per vintage (GNPCA_20200704, ...), no "value".
    const vintages = [...new Set(items.flatMap((i) => Object.keys(i)))].filter(isObservationValueKey);
    columns = [col("date"), ...vintages.map((k): Column => [k, (i) => k in i ? i[k] ?? "missing" : ""])];
  } else if (kind === "observations" && items.some((i) => "realtime_start" in i)) {
    columns = [...columns!, col("realtime_start"), col("realtime_end")];
  }
  if (kind === "elements" && items.some((i) => "observation_value" in i)) {
    columns = [...columns!, col("observation_value", "value")];
  }
  if (!columns) {
    const rows = kind === "shapes"
      ? items.map((i) => (i["properties"] ?? {}) as Record<string, unknown>)
      : items;
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))]
      .filter((k) => rows.some((r) => r[k] === null || typeof r[k] !== "object"))
      .slice(0, 8);
    return markdownTable(keys, rows.map((r) => keys.map((k) => r[k])));
  }
  // Columns no item has (release_name on a single release's dates) are left out.
  const cells = items.map((i) => columns!.map((c) => c[1](i)));
  const keep = columns.map((_, k) => cells.some((row) => row[k] !== undefined));
  return markdownTable(
    columns.filter((_, k) => keep[k]).map((c) => c[0]),
    cells.map((row) => row.filter((_, k) => keep[k])),
  );
}

/** One line of the answer's notable fields (real-time period, units, map title, ...). */
export function metaLine(meta: Record<string, unknown>): string {
  const keys = [
    "title",
    "name",
    "region",
    "units",
    "frequency",
    "seasonality",
    "output_type",
    "realtime_start",
    "realtime_end",
    "observation_start",
    "observation_end",
    "order_by",
    "sort_order",
  ];
  const parts = keys
    .filter((k) => meta[k] !== undefined && meta[k] !== null && typeof meta[k] !== "object")
    .map((k) => `${k}: ${meta[k]}`);
  return parts.join(" · ");
}

/** Bounds of {@linkcode clipValue}. */
export interface ClipOptions {
  /** Longest string kept whole. */
  maxString: number;
  /** Most array elements (and object fields) kept. */
  maxItems: number;
  /** Deepest nesting kept; deeper objects and arrays are summarised. */
  maxDepth: number;
}

/** Counts what {@linkcode clipValue} shortened. */
export interface ClipCount {
  clipped: number;
}

/**
 * A copy of a value taken from FRED, bounded for a tool result: strings over `maxString`
 * characters are cut with their full length noted, arrays and objects keep their first
 * `maxItems` entries and say how many more there were, nesting deeper than `maxDepth` is
 * summarised. Nothing is lost for good: files keep every value whole.
 */
export function clipValue(value: unknown, options: ClipOptions, count: ClipCount, depth = 0): unknown {
  if (typeof value === "string") {
    if (value.length <= options.maxString) return value;
    count.clipped++;
    return `${value.slice(0, options.maxString)}… (${value.length.toLocaleString("en-US")} characters)`;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= options.maxDepth) {
    count.clipped++;
    return Array.isArray(value) ? `[${value.length} items]` : `{${Object.keys(value).length} fields}`;
  }
  if (Array.isArray(value)) {
    const kept = value.slice(0, options.maxItems).map((v) => clipValue(v, options, count, depth + 1));
    if (value.length > options.maxItems) {
      count.clipped++;
      kept.push(`… ${value.length - options.maxItems} more`);
    }
    return kept;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, options.maxItems)) {
    out[clipValue(k, options, count) as string] = clipValue(v, options, count, depth + 1);
  }
  if (entries.length > options.maxItems) {
    count.clipped++;
    out["…"] = `${entries.length - options.maxItems} more fields`;
  }
  return out;
}

/** How FRED's answer fields (meta) are bounded in a result. */
const META_CLIP: ClipOptions = { maxString: 300, maxItems: 30, maxDepth: 3 };

/**
 * FRED's answer fields for a result: each bounded by {@linkcode clipValue}, and all of them
 * together within `budget` characters of JSON (fields past it are left out, and counted).
 */
export function boundedMeta(
  meta: Record<string, unknown>,
  budget: number,
  count: ClipCount,
): Record<string, unknown> {
  const clipped = clipValue(meta, META_CLIP, count) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let size = 2;
  const entries = Object.entries(clipped);
  for (let k = 0; k < entries.length; k++) {
    const [key, value] = entries[k]!;
    const cost = JSON.stringify(key).length + JSON.stringify(value ?? null).length + 2;
    if (size + cost > budget) {
      count.clipped++;
      out["…"] = `${entries.length - k} more fields left out to stay within the response limit`;
      break;
    }
    out[key] = value;
    size += cost;
  }
  return out;
}

/** How item fields are bounded inline and in excerpts. */
export const ITEM_CLIP: ClipOptions = { maxString: 1000, maxItems: 50, maxDepth: 4 };

/**
 * The lines that close one page of a listing: why it was cut short when the character limit cut
 * it, else where the next page starts, if there is one.
 */
export function pageEnd(
  shown: number,
  page: number,
  next: number | null,
  cut: boolean,
  limit: number,
): string[] {
  if (cut) return [truncationNotice(shown, page, { nextOffset: next, limit })];
  return next !== null ? [`More: call again with offset=${next}.`] : [];
}
