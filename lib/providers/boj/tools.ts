// The six tools of seed 001. Data tools call the API once (paging is the caller's, through
// start_position/next_position); discovery tools answer from the bundled catalog.
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import type { ToolDefinition } from "../../mcp/provider.ts";
import { formatText, responseFormatField } from "../../mcp/output.ts";
import { ENDPOINT_SCOPES, FREQUENCY_CODES } from "./catalog.ts";
import type { Frequency } from "./catalog.ts";
import {
  databasesMarkdown,
  databasesPayload,
  messageCatalogMarkdown,
  messageCatalogPayload,
  parameterCatalogMarkdown,
  parameterCatalogPayload,
} from "./catalog_view.ts";
import type { BojClient } from "./client.ts";
import { renderData, renderMetadata } from "./format.ts";
import {
  databasesOutput,
  dataOutput,
  messageCatalogOutput,
  metadataOutput,
  parameterCatalogOutput,
} from "./schemas.ts";
import {
  MAX_CODES,
  MAX_LAYERS,
  normalizeDb,
  validateCodes,
  validateDate,
  validateLayers,
  validateRange,
} from "./validate.ts";

const DATA_ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

const CATALOG_ANNOTATIONS = { ...DATA_ANNOTATIONS, openWorldHint: false } as const;

const EXECUTION = { taskSupport: "forbidden" } as const;

const dbField = z.string().min(1).max(16).describe(
  'Database code, e.g. "FM08" (foreign exchange) or "CO" (TANKAN); boj_list_databases lists all 50. Case-insensitive',
);
const formatField = z.enum(["json", "csv", "JSON", "CSV"]).optional().describe(
  'Format BOJ answers in: "json" (default) or "csv"; upper case accepted. The result is structured either way; ' +
    "Japanese CSV is Shift_JIS and is decoded for you",
);
const langField = z.enum(["jp", "en", "JP", "EN"]).optional().describe(
  'Language of names, units and messages: "en" (English) or "jp" (Japanese, the API default when omitted); ' +
    "upper case accepted",
);
const includeRawField = z.boolean().default(false).describe(
  "Also return the decoded response body as `raw` (default false; for diagnostics)",
);
const startPositionField = z.number().int().min(1).optional().describe(
  "Where to continue: the next_position of the previous result of the same request (BOJ STARTPOSITION, ≥ 1)",
);
const seriesOffsetField = z.number().int().min(0).max(100_000).default(0).describe(
  "Series of BOJ's answer to skip, when a result was cut to fit the size limit: pass next_series_offset " +
    "(or follow continue_with) with the other arguments unchanged. Default 0",
);

/** Normalises the `format` alias to BOJ notation. */
export function normalizeFormat(format: string | undefined): "JSON" | "CSV" {
  return format?.toUpperCase() === "CSV" ? "CSV" : "JSON";
}

/** Normalises the `lang` alias to BOJ notation (undefined leaves the API default, JP). */
export function normalizeLang(lang: string | undefined): "JP" | "EN" | undefined {
  return lang === undefined ? undefined : lang.toUpperCase() === "EN" ? "EN" : "JP";
}

const codeInput = z.strictObject({
  db: dbField,
  codes: z.array(z.string().max(64)).min(1).max(MAX_CODES).describe(
    'Series codes WITHOUT the database prefix (e.g. ["FXERD01"], not "FM08\'FXERD01"), all of one frequency, ' +
      "one code per item, at most 1,250. Find codes with boj_get_metadata",
  ),
  start_date: z.string().optional().describe(
    "First period: YYYY for annual series, YYYYHH (01-02) half-yearly, YYYYQQ (01-04) quarterly, " +
      "YYYYMM monthly, weekly and daily. Omit for the first available",
  ),
  end_date: z.string().optional().describe(
    "Last period, written like start_date. Omit for the latest available",
  ),
  start_position: startPositionField,
  series_offset: seriesOffsetField,
  format: formatField,
  lang: langField,
  include_raw: includeRawField,
  response_format: responseFormatField,
});

const layerInput = z.strictObject({
  db: dbField,
  frequency: z.enum(
    [...FREQUENCY_CODES, ...FREQUENCY_CODES.map((f) => f.toLowerCase())] as [string, ...string[]],
  )
    .describe(
      "Frequency of the series to return (required): CY calendar year, FY fiscal year, CH/FH calendar/fiscal " +
        "half-year, Q quarter, M month, W week, D day. Lower case accepted",
    ),
  layers: z.array(z.string().max(8)).min(1).max(MAX_LAYERS).describe(
    'Position in the database\'s hierarchy, level 1 first: 1 to 5 items, each a positive integer or "*" (every ' +
      'item of that level), e.g. ["1", "2"] or ["*"]. boj_get_metadata gives each row\'s layer. A query matching ' +
      "more than 1,250 series is refused: be specific",
  ),
  start_date: z.string().optional().describe(
    "First period in the frequency's format: CY/FY YYYY, CH/FH YYYYHH (01-02), Q YYYYQQ (01-04), M/W/D YYYYMM",
  ),
  end_date: z.string().optional().describe("Last period, in the same format as start_date"),
  start_position: startPositionField,
  series_offset: seriesOffsetField,
  format: formatField,
  lang: langField,
  include_raw: includeRawField,
  response_format: responseFormatField,
});

const metadataInput = z.strictObject({
  db: dbField,
  query: z.string().max(200).optional().describe(
    "Keep only rows whose code, name, unit, category, frequency or notes contain every word (English or " +
      'Japanese, case-insensitive), e.g. "dollar yen" or "call rate". Omit to browse the whole database',
  ),
  offset: z.number().int().min(0).default(0).describe("Rows to skip (after the query filter); default 0"),
  limit: z.number().int().min(1).max(1000).default(50).describe("Most rows to return; default 50"),
  format: formatField,
  lang: langField,
  include_raw: includeRawField,
  response_format: responseFormatField,
});

const databasesInput = z.strictObject({ response_format: responseFormatField });

const parameterInput = z.strictObject({
  endpoint: z.enum(ENDPOINT_SCOPES).default("all").describe(
    'Which endpoint\'s parameters: "all" (default), "get_data_code", "get_data_layer" or "get_metadata"',
  ),
  response_format: responseFormatField,
});

const messageInput = z.strictObject({
  status: z.number().int().min(100).max(599).optional().describe(
    "Keep only messages of this BOJ STATUS: 200, 400, 500 or 503",
  ),
  message_id: z.string().max(16).optional().describe('Keep only this MESSAGEID, e.g. "M181005E"'),
  response_format: responseFormatField,
});

function dates(
  start: string | undefined,
  end: string | undefined,
  frequency?: Frequency,
): { startDate?: string; endDate?: string } {
  const startDate = start === undefined ? undefined : validateDate(start, "start_date", frequency);
  const endDate = end === undefined ? undefined : validateDate(end, "end_date", frequency);
  validateRange(startDate, endDate);
  return {
    ...(startDate === undefined ? {} : { startDate }),
    ...(endDate === undefined ? {} : { endDate }),
  };
}

/** A series_offset at or past the end of BOJ's answer names nothing: say so, naming the field. */
function checkSeriesOffset(offset: number, total: number): void {
  if (offset > 0 && offset >= total) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `series_offset ${offset} is past the last of the ${total} series in BOJ's answer`,
      {
        field: "series_offset",
        hint:
          "Use next_series_offset (or continue_with) from the previous result with the same other arguments",
      },
    );
  }
}

// deno-lint-ignore no-explicit-any
type AnyTool = ToolDefinition<any, any>;

/** The six tools over one client. */
export function createTools(client: BojClient): AnyTool[] {
  const getDataCode: ToolDefinition<typeof codeInput, typeof dataOutput> = {
    name: "boj_get_data_code",
    title: "BOJ getDataCode",
    description:
      "Fetches observations of Bank of Japan time series by series code (BOJ getDataCode). Give db and the codes " +
      "(from boj_get_metadata; no database prefix; one frequency per call) and optionally a period range. " +
      "Returns one page: each series with name, unit, frequency, its observations (oldest first) and `latest`, " +
      "the most recent value. BOJ sends at most 250 series and 60,000 data points per request, and a result " +
      "fits a size limit: until continue_with is null, call again with the arguments it gives " +
      "(start_position from BOJ's next_position, series_offset for series left out to fit). Results cut to " +
      "fit keep the most recent observations and say so in `notices`.",
    input: codeInput,
    output: dataOutput,
    annotations: DATA_ANNOTATIONS,
    execution: EXECUTION,
    async handler(args, ctx) {
      const db = normalizeDb(args.db);
      const codes = validateCodes(args.codes, db);
      const range = dates(args.start_date, args.end_date);
      const format = normalizeFormat(args.format);
      const lang = normalizeLang(args.lang);
      const fetched = await client.getDataCode({
        db,
        codes,
        format,
        ...(lang ? { lang } : {}),
        ...range,
        ...(args.start_position === undefined ? {} : { startPosition: args.start_position }),
      }, { signal: ctx.signal, logger: ctx.logger });
      checkSeriesOffset(args.series_offset, fetched.data.series.length);
      return renderData({
        tool: "boj_get_data_code",
        response: fetched.data,
        url: fetched.url,
        seriesOffset: args.series_offset,
        ...(args.start_position === undefined ? {} : { startPosition: args.start_position }),
        ...(args.include_raw ? { raw: fetched.raw } : {}),
        responseFormat: args.response_format,
        limit: ctx.limits.characterLimit,
        ...(lang ? { lang } : {}),
      });
    },
  };

  const getDataLayer: ToolDefinition<typeof layerInput, typeof dataOutput> = {
    name: "boj_get_data_layer",
    title: "BOJ getDataLayer",
    description:
      "Fetches observations of every Bank of Japan series below a position of a database's hierarchy (BOJ " +
      'getDataLayer). Give db, frequency (required) and layers (level 1 first, e.g. ["1", "*"]; ' +
      "boj_get_metadata shows each row's layer). Use it to browse a group of related series without knowing " +
      "their codes. Returns one page like boj_get_data_code; until continue_with is null, call again with the " +
      "arguments it gives (start_position, series_offset): every series is reached that way. A layer query " +
      "matching more than 1,250 series is refused: narrow it.",
    input: layerInput,
    output: dataOutput,
    annotations: DATA_ANNOTATIONS,
    execution: EXECUTION,
    async handler(args, ctx) {
      const db = normalizeDb(args.db);
      const frequency = args.frequency.toUpperCase() as Frequency;
      const layers = validateLayers(args.layers);
      const range = dates(args.start_date, args.end_date, frequency);
      const format = normalizeFormat(args.format);
      const lang = normalizeLang(args.lang);
      const fetched = await client.getDataLayer({
        db,
        frequency,
        layers,
        format,
        ...(lang ? { lang } : {}),
        ...range,
        ...(args.start_position === undefined ? {} : { startPosition: args.start_position }),
      }, { signal: ctx.signal, logger: ctx.logger });
      checkSeriesOffset(args.series_offset, fetched.data.series.length);
      return renderData({
        tool: "boj_get_data_layer",
        response: fetched.data,
        url: fetched.url,
        seriesOffset: args.series_offset,
        ...(args.start_position === undefined ? {} : { startPosition: args.start_position }),
        ...(args.include_raw ? { raw: fetched.raw } : {}),
        responseFormat: args.response_format,
        limit: ctx.limits.characterLimit,
        ...(lang ? { lang } : {}),
      });
    },
  };

  const getMetadata: ToolDefinition<typeof metadataInput, typeof metadataOutput> = {
    name: "boj_get_metadata",
    title: "BOJ getMetadata",
    description:
      "Lists the series of a Bank of Japan database with their codes, names, units, frequency, layer, period " +
      "covered and last update (BOJ getMetadata). Use it to find series codes for boj_get_data_code, or layers " +
      'for boj_get_data_layer; filter with query (e.g. "yen") and page with offset/limit. lang "en" gives ' +
      "English names. Rows without a code are headings of the hierarchy.",
    input: metadataInput,
    output: metadataOutput,
    annotations: DATA_ANNOTATIONS,
    execution: EXECUTION,
    async handler(args, ctx) {
      const db = normalizeDb(args.db);
      const format = normalizeFormat(args.format);
      const lang = normalizeLang(args.lang);
      const fetched = await client.getMetadata(
        { db, format, ...(lang ? { lang } : {}) },
        { signal: ctx.signal, logger: ctx.logger },
      );
      const query = args.query?.trim();
      return renderMetadata({
        response: fetched.data,
        url: fetched.url,
        ...(args.include_raw ? { raw: fetched.raw } : {}),
        ...(query ? { query } : {}),
        offset: args.offset,
        limit: args.limit,
        responseFormat: args.response_format,
        characterLimit: ctx.limits.characterLimit,
        ...(lang ? { lang } : {}),
      });
    },
  };

  const listDatabases: ToolDefinition<typeof databasesInput, typeof databasesOutput> = {
    name: "boj_list_databases",
    title: "BOJ DB Catalog",
    description:
      "Lists the 50 Bank of Japan databases (code, English and Japanese name, category) from the API manual. " +
      "Start here: pass a code as db to boj_get_metadata to find its series. No upstream call.",
    input: databasesInput,
    output: databasesOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = databasesPayload();
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => databasesMarkdown(structured)),
        structured,
      });
    },
  };

  const parameterCatalog: ToolDefinition<typeof parameterInput, typeof parameterCatalogOutput> = {
    name: "boj_get_parameter_catalog",
    title: "BOJ Parameter Catalog",
    description:
      "Describes the BOJ API's parameters for one endpoint or all: which are required, allowed values, date " +
      "formats per frequency, the request limits (250 series, 60,000 points, 1,250 codes or layer matches) and " +
      "layer rules, in BOJ notation and as the tools' arguments. No upstream call.",
    input: parameterInput,
    output: parameterCatalogOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = parameterCatalogPayload(args.endpoint);
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => parameterCatalogMarkdown(structured)),
        structured,
      });
    },
  };

  const messageCatalog: ToolDefinition<typeof messageInput, typeof messageCatalogOutput> = {
    name: "boj_get_message_catalog",
    title: "BOJ Message Catalog",
    description:
      "Explains BOJ API STATUS/MESSAGEID codes (e.g. M181005E invalid database) with what to do about each; " +
      "filter by status or message_id. Use it when a result or error carries a message id. No upstream call.",
    input: messageInput,
    output: messageCatalogOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = messageCatalogPayload(args.status, args.message_id);
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => messageCatalogMarkdown(structured)),
        structured,
      });
    },
  };

  return [getDataCode, getDataLayer, getMetadata, listDatabases, parameterCatalog, messageCatalog];
}
