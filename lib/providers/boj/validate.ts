// Checks the BOJ API's own input rules before a request is sent, so a model gets an error
// that names the argument and the fix instead of a terse upstream M1810xxE.
import { ToolError } from "../../errors.ts";
import type { Frequency } from "./catalog.ts";

/** Most series codes one getDataCode request takes (M181007E beyond). */
export const MAX_CODES = 1250;
/** Most layer levels. */
export const MAX_LAYERS = 5;

// The manual's forbidden characters (note ※1); full-width ones are caught as non-ASCII.
const FORBIDDEN = /[<>!|\\;'"]/;
const PREFIX_QUOTES = /['\u2018\u2019\u2032]/;

function invalid(field: string, message: string, hint: string, fix?: string): ToolError {
  return new ToolError("VALIDATION_ERROR", message, {
    field,
    hint,
    ...(fix ? { fix: { [field]: fix } } : {}),
  });
}

/**
 * The period the API takes for a calendar date written another way ("2024-01-15", "2024/1"): the
 * year with the month, quarter or half it falls in, as `frequency` wants; undefined when `value`
 * is no such date.
 */
export function periodFor(value: string, frequency?: Frequency): string | undefined {
  const m = /^(\d{4})[-/.](\d{1,2})(?:[-/.]\d{1,2})?$/.exec(value.trim());
  if (!m) return undefined;
  const year = m[1]!;
  const month = Number(m[2]);
  if (month < 1 || month > 12) return undefined;
  const two = (n: number) => String(n).padStart(2, "0");
  if (frequency === "CY" || frequency === "FY") return year;
  if (frequency === "Q") return `${year}${two(Math.ceil(month / 3))}`;
  if (frequency === "CH" || frequency === "FH") return `${year}${two(month <= 6 ? 1 : 2)}`;
  return `${year}${two(month)}`;
}

function checkCharacters(field: string, label: string, value: string): void {
  // deno-lint-ignore no-control-regex
  if (/[^\x00-\x7f]/.test(value)) {
    throw invalid(
      field,
      `${label} "${value}" contains full-width or other non-ASCII characters, which the BOJ API refuses`,
      "Type it with ASCII letters and digits only",
    );
  }
  if (FORBIDDEN.test(value)) {
    throw invalid(
      field,
      `${label} "${value}" contains a character the BOJ API refuses (< > ! | \\ ; ' ")`,
      "Remove the character; codes are letters, digits and a few marks such as @ and _",
    );
  }
  if (/\s/.test(value)) {
    throw invalid(field, `${label} "${value}" contains white space`, "Remove the spaces inside the value");
  }
}

/** Normalises a database code to upper case after checking its characters. */
export function normalizeDb(db: string): string {
  const value = db.trim();
  if (value === "") {
    throw invalid("db", `"db" is empty`, "Give a database code from boj_list_databases, e.g. FM08");
  }
  checkCharacters("db", "Database code", value);
  if (value.includes(",")) {
    throw invalid("db", `"db" takes one database code, got "${value}"`, "Call the tool once per database");
  }
  return value.toUpperCase();
}

/**
 * Checks series codes: one code per item, no database prefix, no forbidden characters, at most
 * 1,250. Returns them trimmed. The frequency rule (one per request) is checked by the API.
 */
export function validateCodes(codes: readonly string[], db: string): string[] {
  if (codes.length === 0) {
    throw invalid("codes", `"codes" is empty`, "Give at least one series code; boj_get_metadata lists them");
  }
  if (codes.length > MAX_CODES) {
    throw invalid(
      "codes",
      `"codes" has ${codes.length} codes; the BOJ API takes at most ${MAX_CODES} per request`,
      `Split the codes into calls of at most ${MAX_CODES} (250 series come back per call; continue with next_position)`,
    );
  }
  return codes.map((raw, i) => {
    const code = raw.trim();
    const label = `Series code ${i + 1}`;
    if (code === "") {
      throw invalid("codes", `${label} is empty`, "Remove the empty item from codes");
    }
    if (code.includes(",")) {
      throw invalid(
        "codes",
        `${label} "${code}" holds several codes separated by commas`,
        `Pass each code as its own item: ${JSON.stringify(code.split(",").map((c) => c.trim()))}`,
      );
    }
    const quote = PREFIX_QUOTES.exec(code);
    if (quote) {
      const prefix = code.slice(0, quote.index);
      const bare = code.slice(quote.index + 1);
      const same = prefix.toUpperCase() === db;
      throw invalid(
        "codes",
        `${label} "${code}" carries a database prefix ("${prefix}"); the BOJ API takes series codes without it`,
        same
          ? `Pass "${bare}" in codes; the database is already given as db "${db}"`
          : `Pass "${bare}" in codes and "${prefix.toUpperCase()}" as db (db is "${db}" now)`,
      );
    }
    checkCharacters("codes", label, code);
    return code;
  });
}

/** Checks layers: 1 to 5 levels, each `*` or a positive integer. */
export function validateLayers(layers: readonly string[]): string[] {
  if (layers.length === 0 || layers.length > MAX_LAYERS) {
    throw invalid(
      "layers",
      `"layers" needs 1 to ${MAX_LAYERS} levels, got ${layers.length}`,
      'Give layer 1 and optionally deeper levels, e.g. ["1"], ["1", "2"] or ["1", "*"]',
    );
  }
  return layers.map((raw, i) => {
    const layer = raw.trim();
    if (layer === "*" || /^[1-9]\d{0,3}$/.test(layer)) return layer;
    throw invalid(
      "layers",
      `Layer ${i + 1} is "${raw}"; each layer is a positive integer or "*"`,
      'Take the numbers from boj_get_metadata (layer1..layer5), or use "*" for every item of a level',
    );
  });
}

const FORMATS: Record<Frequency, { pattern: RegExp; shape: string; max: number }> = {
  CY: { pattern: /^\d{4}$/, shape: "YYYY", max: 0 },
  FY: { pattern: /^\d{4}$/, shape: "YYYY", max: 0 },
  CH: { pattern: /^\d{6}$/, shape: "YYYYHH (HH 01 or 02)", max: 2 },
  FH: { pattern: /^\d{6}$/, shape: "YYYYHH (HH 01 or 02)", max: 2 },
  Q: { pattern: /^\d{6}$/, shape: "YYYYQQ (QQ 01 to 04)", max: 4 },
  M: { pattern: /^\d{6}$/, shape: "YYYYMM", max: 12 },
  W: { pattern: /^\d{6}$/, shape: "YYYYMM", max: 12 },
  D: { pattern: /^\d{6}$/, shape: "YYYYMM", max: 12 },
};

/**
 * Checks a period as the API takes it. With a frequency (layer API) the shape must match it;
 * without one (code API, where the series decide) YYYY or YYYYXX with XX 01 to 12 is accepted.
 */
export function validateDate(value: string, field: string, frequency?: Frequency): string {
  const date = value.trim();
  const spec = frequency ? FORMATS[frequency] : undefined;
  const shapeOk = spec ? spec.pattern.test(date) : /^\d{4}(\d{2})?$/.test(date);
  if (!shapeOk) {
    throw invalid(
      field,
      spec
        ? `"${field}" is "${value}"; for frequency ${frequency} the BOJ API takes ${spec.shape}`
        : `"${field}" is "${value}"; the BOJ API takes YYYY, YYYYHH, YYYYQQ or YYYYMM`,
      "Annual series: YYYY; half-yearly: YYYYHH; quarterly: YYYYQQ; monthly, weekly and daily: YYYYMM (e.g. 202401)",
      periodFor(value, frequency),
    );
  }
  const year = Number(date.slice(0, 4));
  if (year < 1850 || year > 2050) {
    throw invalid(
      field,
      `"${field}" is "${value}"; years run from 1850 to 2050`,
      "Use a year from 1850 to 2050",
    );
  }
  if (date.length === 6) {
    const sub = Number(date.slice(4));
    const max = spec?.max || 12;
    if (sub < 1 || sub > max) {
      throw invalid(
        field,
        `"${field}" is "${value}"; the part after the year must be 01 to ${String(max).padStart(2, "0")}`,
        spec
          ? `For frequency ${frequency} write ${spec.shape}`
          : "Write YYYYMM with MM 01 to 12, or YYYYQQ, YYYYHH",
      );
    }
  }
  return date;
}

/** Checks that both ends have the same shape and come in order. */
export function validateRange(start: string | undefined, end: string | undefined): void {
  if (start === undefined || end === undefined) return;
  if (start.length !== end.length) {
    throw invalid(
      "end_date",
      `"start_date" "${start}" and "end_date" "${end}" are written in different formats`,
      "Write both the same way (both YYYY, or both YYYYMM/YYYYQQ/YYYYHH)",
    );
  }
  if (start > end) {
    throw invalid(
      "end_date",
      `"start_date" "${start}" is after "end_date" "${end}"`,
      "Swap them: start_date must be earlier than or equal to end_date",
    );
  }
}
