// The six tools' input schemas. Every agent pays for them on every turn, so descriptions are one
// short sentence with the default; the longer guidance lives in the boj://guide resources and the
// parameter catalog. Each property is served with one plain type: format, lang and frequency are
// served in one case and still accept the other (the aliases docs/apis/boj.md lists), and checks
// that only refuse bad values (lengths, the 1,250 codes) run in the handler or as refinements.
import { z } from "zod";
import { ENDPOINT_SCOPES, FREQUENCY_CODES } from "./catalog.ts";

/**
 * A whole number of at least `min`. zod serves integers with ±2^53 bounds, which only cost
 * tokens: the served schema keeps the minimum alone (validation still stops at 2^53).
 */
function whole(min: number) {
  return z.number().int().min(min).meta({ maximum: undefined });
}

function lower(value: unknown): unknown {
  return typeof value === "string" ? value.toLowerCase() : value;
}

function upper(value: unknown): unknown {
  return typeof value === "string" ? value.toUpperCase() : value;
}

function shortText(max: number, what: string) {
  return z.string().refine((v) => v.length <= max, `${what} must be at most ${max} characters`);
}

/** `response_format`, described in a few words. */
export const responseFormatField = z.enum(["markdown", "json"]).default("markdown").describe(
  "Default markdown",
);

const dbField = shortText(16, "a database code").describe("Database code, e.g. FM08");
// format and lang take upper-case aliases too (JSON, CSV, JP, EN), as the BOJ's API writes them.
const formatField = z.preprocess(lower, z.enum(["json", "csv"])).optional().describe("Default json");
const langField = z.preprocess(lower, z.enum(["jp", "en"])).optional().describe("Default jp");
const includeRawField = z.boolean().default(false).describe("Add the raw body");
const startPositionField = whole(1).optional().describe("BOJ next_position");
const seriesOffsetField = whole(0).default(0).describe("next_series_offset (default 0)");
const startDateField = z.string().optional().describe("First period: YYYY, YYYYHH, YYYYQQ or YYYYMM");
const endDateField = z.string().optional().describe("Last period (default latest)");

/** `output`: the answer on screen (cut to the size limit) or the whole result as a file. */
function outputField(what: string) {
  return z.enum(["screen", "file"]).default("screen").describe(`file: ${what} as CSV resource`);
}

/** The input schemas; `pages` is the configured `file_max_requests`. */
export function createInputs(pages: number) {
  // What boj_get_data_code and boj_get_data_layer share after their series selection.
  const dataFields = {
    start_date: startDateField,
    end_date: endDateField,
    start_position: startPositionField,
    series_offset: seriesOffsetField,
    format: formatField,
    lang: langField,
    include_raw: includeRawField,
    response_format: responseFormatField,
    output: outputField(`all pages (≤${pages} requests)`),
  };
  const code = z.strictObject({
    db: dbField,
    codes: z.array(shortText(64, "a series code")).describe("Series codes without db prefix, one frequency"),
    ...dataFields,
  });

  const layer = z.strictObject({
    db: dbField,
    frequency: z.preprocess(upper, z.enum(FREQUENCY_CODES)).describe(
      "CY/FY year, CH/FH half-year",
    ),
    layers: z.array(shortText(8, "a layer")).describe('Layer path, e.g. ["1","*"]'),
    ...dataFields,
  });

  const metadata = z.strictObject({
    db: dbField,
    query: shortText(200, "query").optional().describe("Words every row must contain, e.g. dollar yen"),
    offset: whole(0).default(0).describe("Default 0"),
    limit: z.number().int().min(1).max(1000).default(50).describe("Rows (default 50)"),
    format: formatField,
    lang: langField,
    include_raw: includeRawField,
    response_format: responseFormatField,
    output: outputField("all matching rows"),
  });

  const databases = z.strictObject({ response_format: responseFormatField });

  const parameters = z.strictObject({
    endpoint: z.enum(ENDPOINT_SCOPES).default("all").describe("Default all"),
    response_format: responseFormatField,
  });

  const messages = z.strictObject({
    status: z.number().int().min(100).max(599).optional().describe("BOJ STATUS, e.g. 400"),
    message_id: shortText(16, "message_id").optional().describe("MESSAGEID, e.g. M181005E"),
    response_format: responseFormatField,
  });

  return { code, layer, metadata, databases, parameters, messages };
}
