// Output schemas of the six tools (sent as outputSchema; structuredContent matches them).
import { z } from "zod";
import { pageSchema } from "../../mcp/output.ts";

/** The common header of a BOJ answer. */
export const metaSchema = z.object({
  status: z.number().int().describe("BOJ STATUS (200 on success)"),
  message_id: z.string().describe("BOJ MESSAGEID, e.g. M181000I; look it up with boj_get_message_catalog"),
  message: z.string().describe("BOJ MESSAGE as sent (Japanese unless lang is en)"),
  date: z.string().nullable().describe("BOJ DATE: when the answer's data file was made (JST)"),
});

/** Where a result came from and under what terms. */
export const sourceSchema = z.object({
  name: z.string().describe("The data source"),
  url: z.string().describe("The request URL the data came from"),
  terms_url: z.string().describe("The BOJ's API usage notice"),
  credit_ja: z.string().describe("The credit the BOJ asks services to show (official Japanese wording)"),
  credit_en: z.string().describe("The same credit in English (unofficial rendering)"),
});

const pointSchema = z.object({
  survey_date: z.string().describe("Period: YYYY, YYYYHH, YYYYQQ, YYYYMM or YYYYMMDD (weekly and daily)"),
  value: z.union([z.number(), z.string(), z.null()]).describe("The value; null when missing"),
});

const seriesFields = {
  name_of_time_series: z.string().optional().describe("Series name (English)"),
  name_of_time_series_j: z.string().optional().describe("Series name (Japanese)"),
  unit: z.string().optional().describe("Unit (English)"),
  unit_j: z.string().optional().describe("Unit (Japanese)"),
  frequency: z.string().optional().describe("Frequency label, e.g. DAILY, MONTHLY, QUARTERLY"),
  category: z.string().optional().describe("Category (English)"),
  category_j: z.string().optional().describe("Category (Japanese)"),
  last_update: z.string().optional().describe("Last update of the series, YYYYMMDD"),
};

const seriesSchema = z.object({
  series_code: z.string().describe("Series code (no database prefix)"),
  ...seriesFields,
  points_total: z.number().int().describe("Observations BOJ returned for this series"),
  points_truncated: z.boolean().describe(
    "Whether older observations were left out here to stay within the size limit",
  ),
  latest: pointSchema.nullable().describe("The most recent observation with a value (exact even when cut)"),
  points: z.array(pointSchema).describe("Observations, oldest first (the most recent ones when cut)"),
});

const rawFields = {
  raw: z.string().optional().describe("The decoded response body, only with include_raw"),
  raw_truncated: z.boolean().optional().describe("Whether raw was cut to stay within the size limit"),
};

/** Output of boj_get_data_code and boj_get_data_layer. */
export const dataOutput = z.object({
  meta: metaSchema,
  parameter: z.record(z.string(), z.string()).describe("BOJ's echo of the request parameters"),
  next_position: z.number().int().nullable().describe(
    "BOJ NEXTPOSITION as given: null when complete, else call again with start_position set to it",
  ),
  series_total: z.number().int().describe("Series in BOJ's answer"),
  series_offset: z.number().int().describe(
    "Index in BOJ's answer of the first series shown (series_offset asked)",
  ),
  series_count: z.number().int().describe("Series in this result"),
  next_series_offset: z.number().int().nullable().describe(
    "When series of BOJ's answer were left out to fit the size limit: call again with the same arguments and " +
      "series_offset set to it; null when every series of BOJ's answer has been shown",
  ),
  continue_with: z.object({
    start_position: z.number().int().nullable().describe("start_position to send (null: leave it out)"),
    series_offset: z.number().int().describe("series_offset to send (0: leave it out)"),
  }).nullable().describe(
    "The arguments that fetch the next part, with all others unchanged; null when everything was delivered",
  ),
  series: z.array(seriesSchema),
  truncated: z.boolean().describe("Whether this result shows less than BOJ returned (see notices)"),
  notices: z.array(z.string()).describe("What was cut or paged, and how to get the rest"),
  ...rawFields,
  source: sourceSchema,
});

const entrySchema = z.object({
  series_code: z.string().describe('Series code; "" for a heading row that groups the series below it'),
  ...seriesFields,
  layer1: z.number().int(),
  layer2: z.number().int(),
  layer3: z.number().int(),
  layer4: z.number().int(),
  layer5: z.number().int(),
  layer: z.string().describe('Layers as boj_get_data_layer takes them, e.g. "1,2" (trailing zeros dropped)'),
  start_of_the_time_series: z.string().optional().describe("First period available"),
  end_of_the_time_series: z.string().optional().describe("Last period available"),
  notes: z.string().optional().describe("Notes (English)"),
  notes_j: z.string().optional().describe("Notes (Japanese)"),
});

/** Output of boj_get_metadata. */
export const metadataOutput = z.object({
  meta: metaSchema,
  db: z.string().describe("Database code"),
  entries_in_db: z.number().int().describe("Rows BOJ returned for the database (series and headings)"),
  query: z.string().nullable().describe("The filter applied, if any"),
  ...pageSchema.shape,
  entries_count: z.number().int().describe("Rows in this result (same as count)"),
  entries: z.array(entrySchema),
  truncated: z.boolean().describe("Whether fewer rows than asked were shown to stay within the size limit"),
  notices: z.array(z.string()).describe("What was cut and how to get the rest"),
  ...rawFields,
  source: sourceSchema,
});

const catalogSource = {
  source_document: z.string().describe("The BOJ document the catalog follows"),
  source_date: z.string().describe("Its publication date"),
  source_url: z.string().describe("Its address"),
};

/** Output of boj_list_databases. */
export const databasesOutput = z.object({
  ...catalogSource,
  count: z.number().int(),
  databases: z.array(z.object({
    code: z.string().describe("Database code for the db argument"),
    name_en: z.string().describe("English name (this server's translation)"),
    name_ja: z.string().describe("Official Japanese name"),
    category_en: z.string(),
    category_ja: z.string(),
  })),
});

const requirement = z.enum(["required", "optional", "unsupported"]);

/** Output of boj_get_parameter_catalog. */
export const parameterCatalogOutput = z.object({
  ...catalogSource,
  endpoint_scope: z.string().describe("all, getDataCode, getDataLayer or getMetadata"),
  general_notes: z.array(z.string()),
  format_codes: z.array(z.string()).describe("Formats in BOJ notation"),
  language_codes: z.array(z.string()).describe("Languages in BOJ notation"),
  mcp_format_codes: z.array(z.string()).describe("Formats as the tools take them"),
  mcp_language_codes: z.array(z.string()).describe("Languages as the tools take them"),
  frequency_codes: z.array(z.string()),
  frequencies: z.array(z.object({ code: z.string(), meaning: z.string(), date_format: z.string() })),
  parameters: z.array(z.object({
    name: z.string().describe("BOJ notation"),
    mcp_argument: z.string().describe("The tool argument that sets it"),
    description: z.string(),
    allowed_values: z.string(),
    requirements: z.object({ code_api: requirement, layer_api: requirement, metadata_api: requirement }),
    notes: z.array(z.string()),
  })),
  limits: z.array(z.object({
    api_scope: z.string(),
    target: z.string(),
    max_value: z.number().int(),
    overflow_behavior: z.string(),
  })),
  layer_rules: z.array(z.string()),
});

/** Output of boj_get_message_catalog. */
export const messageCatalogOutput = z.object({
  ...catalogSource,
  status_filter: z.number().int().nullable(),
  message_id_filter: z.string().nullable(),
  count: z.number().int(),
  messages: z.array(z.object({
    status: z.number().int(),
    message_id: z.string(),
    message: z.string().describe("The manual's text"),
    message_en: z.string().describe("English rendering (unofficial except where the API's own)"),
    note: z.string(),
    hint: z.string().describe("What to do about it"),
    retryable: z.boolean().describe("Whether this server retries it and a later call may succeed"),
  })),
});

/** structuredContent of the data tools. */
export type DataOutput = z.output<typeof dataOutput>;
/** structuredContent of boj_get_metadata. */
export type MetadataOutput = z.output<typeof metadataOutput>;
/** structuredContent of boj_list_databases. */
export type DatabasesOutput = z.output<typeof databasesOutput>;
/** structuredContent of boj_get_parameter_catalog. */
export type ParameterCatalogOutput = z.output<typeof parameterCatalogOutput>;
/** structuredContent of boj_get_message_catalog. */
export type MessageCatalogOutput = z.output<typeof messageCatalogOutput>;
