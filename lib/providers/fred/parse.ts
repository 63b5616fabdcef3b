// FRED answers turned into one shape: a list of items plus the answer's other fields. Items are
// FRED's own objects with few changes: release table elements list their children by id, vintage
// dates become objects, map rows are flattened. Values keep FRED's own text ("1065.0", "."):
// each output turns them into its own form (valueFor): structured results get numbers, with
// FRED's "." (no value) as null and any other text kept as text, never nulled; CSV files keep
// FRED's text exactly, "." as an empty cell; JSON files write FRED's digits as JSON numbers
// unchanged (1065.0 stays 1065.0), "." as null. Shapes the notes mark uncertain (maps values as
// numbers or strings, the old title-keyed maps layout) are read either way.
import { ToolError } from "../../errors.ts";
import { shorten } from "../../mcp/shaping.ts";
import { cutField } from "../../html.ts";
import type { ItemKind } from "./operations.ts";

/** A parsed answer. */
export interface Parsed {
  items: Record<string, unknown>[];
  /** The answer's other top-level fields (real-time period, order, units, map title, ...). */
  meta: Record<string, unknown>;
  /** FRED's `count` (all matching items) when it sends one. */
  total?: number;
}

/** The key of each list kind's items in FRED's answer. */
export const LIST_KEYS: Partial<Record<ItemKind, string>> = {
  categories: "categories",
  series: "seriess",
  tags: "tags",
  releases: "releases",
  release_dates: "release_dates",
  sources: "sources",
  observations: "observations",
  vintage_dates: "vintage_dates",
};

/** Where a value goes, which decides how FRED's text is written. */
export type ValueTarget = "structured" | "csv" | "json_file" | "markdown";

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** Whether a FRED value means "no value": FRED writes `"."`; an empty string or null counts too. */
export function isMissing(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === "string" && /^\s*\.?\s*$/.test(value));
}

/**
 * A FRED value (text such as `"1065.0"`, `"."`, or a number in maps answers) as `target` needs
 * it. Missing is null in structured results and JSON files, an empty CSV cell, "missing" in
 * markdown. Numbers: structured results get JavaScript numbers; JSON files get FRED's digits as a
 * JSON number literal, unchanged; CSV and markdown get FRED's text. Text that is not a number
 * (none is documented, but FRED's answers are not promised) is kept as text everywhere.
 */
export function valueFor(value: unknown, target: ValueTarget): unknown {
  if (isMissing(value)) return target === "markdown" ? "missing" : null;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value !== "string") return value;
  const text = value.trim();
  const n = Number(text);
  const numeric = text !== "" && Number.isFinite(n);
  switch (target) {
    case "structured":
      return numeric ? n : value;
    case "json_file":
      return JSON_NUMBER.test(text) ? rawJSON(text) : numeric ? n : value;
    default:
      return value;
  }
}

/** The fields of an item of `kind` that hold FRED values (observations, map values, table values). */
export function isValueField(kind: ItemKind, key: string): boolean {
  if (kind === "observations") return isObservationValueKey(key);
  if (kind === "regional_data") return key === "value";
  if (kind === "elements") return key === "observation_value";
  return false;
}

/** An item with its value fields written for `target`; other fields unchanged. */
export function itemFor(
  kind: ItemKind,
  item: Record<string, unknown>,
  target: ValueTarget,
): Record<string, unknown> {
  if (kind !== "observations" && kind !== "regional_data" && kind !== "elements") return item;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    out[key] = isValueField(kind, key) ? valueFor(value, target) : value;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function decodeError(what: string): ToolError {
  return new ToolError("DECODE_ERROR", `FRED's answer did not have the expected shape: ${what}`, {
    hint: "Try again; if it persists, FRED may have changed this endpoint",
  });
}

/** Whether an answer of `kind` can be read (parseResponse would not throw): only those are cached. */
export function isReadable(kind: ItemKind, data: unknown): boolean {
  try {
    parseResponse(kind, data);
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses one answer of an operation of `kind`. An answer without the list (or object) the
 * operation returns is a DECODE_ERROR, never an empty result: FRED always sends the list, empty
 * when nothing matches, so its absence means the answer is not what the operation asked for.
 */
export function parseResponse(kind: ItemKind, data: unknown): Parsed {
  if (!isRecord(data)) throw decodeError("not a JSON object");
  const body = data;
  if (typeof body["error_message"] === "string") {
    throw new ToolError(
      "DECODE_ERROR",
      `FRED answered with an error: ${shorten(body["error_message"], 300)}`,
      {
        hint: "Check the request; if it persists, FRED may have changed this endpoint",
      },
    );
  }
  switch (kind) {
    case "elements":
      return parseTables(body);
    case "regional_data":
      return parseMapsData(body);
    case "series_group": {
      const group = body["series_group"];
      if (!isRecord(group)) throw decodeError('no "series_group" object');
      return { items: [group], meta: {} };
    }
    case "shapes": {
      const features = body["features"];
      if (!Array.isArray(features)) throw decodeError('no "features" list in the shape file');
      const meta: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(body)) if (k !== "features") meta[k] = v;
      return { items: features.map(record), meta };
    }
    default:
      return parseList(kind, body);
  }
}

function parseList(kind: ItemKind, body: Record<string, unknown>): Parsed {
  const key = LIST_KEYS[kind]!;
  const raw = body[key];
  if (!Array.isArray(raw)) {
    throw decodeError(raw === undefined ? `no "${key}" list` : `"${key}" is not a list`);
  }
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (k !== key) meta[k] = typeof v === "string" ? cutField(v, NOTES_MAX) : v;
  }
  const items = raw.map((r) => listItem(kind, r));
  const count = body["count"];
  return typeof count === "number" ? { items, meta, total: count } : { items, meta };
}

/**
 * Whether an observation field holds a value: `value` (output types 1 and 4), or a vintage column
 * such as `GNPCA_20200704` (output types 2 and 3, one per vintage date, no `value` field).
 */
export function isObservationValueKey(key: string): boolean {
  return key === "value" || VINTAGE_COLUMN.test(key);
}

const VINTAGE_COLUMN = /_\d{8}$/;

/** One element of a list answer as an item (vintage dates are plain strings in FRED's answer). */
export function listItem(kind: ItemKind, raw: unknown): Record<string, unknown> {
  // An entry of the wrong type (null, a number) is an answer this call cannot read, not an empty row.
  if (kind === "vintage_dates") {
    if (typeof raw !== "string") {
      throw decodeError(`an entry of "vintage_dates" is ${typeName(raw)}, not a date`);
    }
    return { vintage_date: raw };
  }
  if (!isRecord(raw)) {
    throw decodeError(`an entry of "${LIST_KEYS[kind] ?? kind}" is ${typeName(raw)}, not an object`);
  }
  return capped(raw);
}

/** Most characters kept of an item's `notes`: FRED's longest notes run to a few thousand. */
export const NOTES_MAX = 20_000;
/**
 * Most characters kept of any other text field (titles, names and units run to a few hundred):
 * short enough that the cut note still shows inline, where longer strings are clipped at 1,000.
 */
export const FIELD_MAX = 900;

/**
 * `raw` with each text field longer than its cap cut, saying so: one hostile title of megabytes
 * would otherwise be counted, shaped and written to files whole.
 */
function capped(raw: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in raw) {
    const value = raw[key];
    const max = key === "notes" ? NOTES_MAX : FIELD_MAX;
    if (typeof value === "string" && value.length > max) {
      out ??= { ...raw };
      out[key] = cutField(value, max);
    }
  }
  return out ?? raw;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}

function parseTables(body: Record<string, unknown>): Parsed {
  const elements = body["elements"];
  if (!isRecord(elements)) throw decodeError('no "elements" object');
  const items = Object.values(elements).map((e) => {
    const el = record(e);
    const children = Array.isArray(el["children"]) ? el["children"].map((c) => record(c)["element_id"]) : [];
    return { ...el, children };
  });
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (k !== "elements") meta[k] = v;
  return { items, meta };
}

function parseMapsData(body: Record<string, unknown>): Parsed {
  let meta: Record<string, unknown>;
  let byDate: Record<string, unknown>;
  if ("meta" in body) {
    const m = body["meta"];
    if (!isRecord(m) || !isRecord(m["data"])) throw decodeError('no "data" object in "meta"');
    byDate = m["data"];
    meta = {};
    for (const [k, v] of Object.entries(m)) if (k !== "data") meta[k] = v;
  } else {
    // The older layout: {"<title>": {"2013": [rows]}}.
    const [title, value] = Object.entries(body)[0] ?? [];
    if (title === undefined || !isRecord(value)) throw decodeError('no "meta" object with map data');
    byDate = value;
    meta = { title };
  }
  const items: Record<string, unknown>[] = [];
  for (const [date, rows] of Object.entries(byDate)) {
    if (!Array.isArray(rows)) throw decodeError(`the rows of "${date}" are not a list`);
    for (const row of rows) {
      const r = record(row);
      items.push({
        date,
        region: r["region"],
        code: r["code"],
        value: r["value"],
        series_id: r["series_id"],
      });
    }
  }
  return { items, meta };
}

/**
 * An item as shown inline: long notes shortened, shape geometry left out (it belongs in a file),
 * observation real-time fields dropped when they repeat the answer's own period, values as
 * numbers ({@linkcode valueFor} "structured").
 */
export function screenItem(
  kind: ItemKind,
  item: Record<string, unknown>,
  meta: Record<string, unknown>,
): Record<
  string,
  unknown
> {
  switch (kind) {
    case "series":
    case "tags":
    case "releases":
    case "categories":
    case "sources": {
      const notes = item["notes"];
      return typeof notes === "string" && notes.length > 200 ? { ...item, notes: shorten(notes, 200) } : item;
    }
    case "observations": {
      const same = item["realtime_start"] === meta["realtime_start"] &&
        item["realtime_end"] === meta["realtime_end"];
      const shown = itemFor(kind, item, "structured");
      return same && "value" in item ? { date: shown["date"], value: shown["value"] } : shown;
    }
    case "regional_data":
    case "elements":
      return itemFor(kind, item, "structured");
    case "shapes":
      return { type: item["type"], properties: item["properties"] ?? {} };
    default:
      return item;
  }
}

/** CSV column order per kind; other keys of the first page follow in the order they appear. */
export const CSV_COLUMNS: Partial<Record<ItemKind, readonly string[]>> = {
  observations: ["date", "value", "realtime_start", "realtime_end"],
  regional_data: ["date", "region", "code", "value", "series_id"],
  vintage_dates: ["vintage_date"],
  series: [
    "id",
    "title",
    "observation_start",
    "observation_end",
    "frequency",
    "frequency_short",
    "units",
    "units_short",
    "seasonal_adjustment",
    "seasonal_adjustment_short",
    "last_updated",
    "popularity",
    "group_popularity",
    "realtime_start",
    "realtime_end",
    "notes",
  ],
  tags: ["name", "group_id", "notes", "created", "popularity", "series_count"],
  releases: ["id", "name", "press_release", "link", "realtime_start", "realtime_end", "notes"],
  sources: ["id", "name", "link", "realtime_start", "realtime_end", "notes"],
  categories: ["id", "name", "parent_id", "notes"],
};
