// Output schemas of the six tools and the TypeScript types of what they return. The schemas
// are served with every tools/list, so they are compact: each result's top level is typed and
// required (clients validate structuredContent against it), records inside it are typed as
// objects or lists only, and nothing carries a description or an integer bound.
import type { PartialFileOut } from "../../output/result_files.ts";
import type { SeriesFields } from "./decode.ts";
import { z } from "zod";
import { openList, openObject, resultObject } from "../../output/schema.ts";

const str = z.string();
const num = z.number();
const bool = z.boolean();
const obj = openObject();
const list = openList();

/** The common header of a BOJ answer. */
export interface MetaOut {
  status: number;
  message_id: string;
  message: string;
  date: string | null;
}

/** Where a result came from, with the credit the BOJ asks for. */
export interface SourceOut {
  name: string;
  url: string;
  terms_url: string;
  credit_ja: string;
  credit_en: string;
}

/** One observation: YYYY, YYYYHH, YYYYQQ, YYYYMM or YYYYMMDD, and the value (null when missing). */
export interface PointOut {
  survey_date: string;
  /** The period labelled by frequency (2025Q4, FY2025, 2025-04, …); `survey_date` keeps BOJ's raw value. */
  period: string;
  value: number | string | null;
}

/** Names and labels of a series, as BOJ sends them (English, and `_j` Japanese). */
export type SeriesFieldsOut = SeriesFields;

/** One series of a data result. */
export interface SeriesOut extends SeriesFieldsOut {
  series_code: string;
  /** Observations BOJ returned. */
  points_total: number;
  /** Whether older observations were left out to fit the size limit. */
  points_truncated: boolean;
  /** The most recent observation with a value (exact even when cut). */
  latest: PointOut | null;
  /** Oldest first; the most recent ones when cut. */
  points: PointOut[];
}

/** A file written by `output: "file"`; `partial`: it ends before the answer does (see `continue_with` and `notices`). */
export type FileOut = PartialFileOut;

/** The arguments that fetch the next part of a data answer. */
export interface ContinueWith {
  start_position: number | null;
  series_offset: number;
}

/** structuredContent of boj_get_data_code and boj_get_data_layer. */
export interface DataOutput {
  meta: MetaOut;
  /** BOJ's echo of the request parameters. */
  parameter: Record<string, string>;
  /** BOJ NEXTPOSITION: null when the answer is complete. */
  next_position: number | null;
  series_total: number;
  series_offset: number;
  series_count: number;
  next_series_offset: number | null;
  /** The arguments for the next part, others unchanged; null when everything was delivered. */
  continue_with: ContinueWith | null;
  /** Absent when the series went to a file. */
  series?: SeriesOut[];
  file?: FileOut;
  truncated: boolean;
  notices: string[];
  raw?: string;
  raw_truncated?: boolean;
  source: SourceOut;
}

/** One row of a metadata result (a series, or a heading when `series_code` is ""). */
export interface EntryOut extends SeriesFieldsOut {
  series_code: string;
  layer1: number;
  layer2: number;
  layer3: number;
  layer4: number;
  layer5: number;
  /** The layers as boj_get_data_layer takes them, e.g. "1,2". */
  layer: string;
  start_of_the_time_series?: string;
  end_of_the_time_series?: string;
  notes?: string;
  notes_j?: string;
}

/** structuredContent of boj_get_metadata. */
export interface MetadataOutput {
  meta: MetaOut;
  db: string;
  /** Rows BOJ returned for the database (series and headings). */
  entries_in_db: number;
  query: string | null;
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  entries_count: number;
  /** Absent when the rows went to a file. */
  entries?: EntryOut[];
  file?: FileOut;
  truncated: boolean;
  notices: string[];
  raw?: string;
  raw_truncated?: boolean;
  source: SourceOut;
}

interface CatalogSource {
  source_document: string;
  source_date: string;
  source_url: string;
}

/** structuredContent of boj_list_databases. */
export interface DatabasesOutput extends CatalogSource {
  count: number;
  databases: { code: string; name_en: string; name_ja: string; category_en: string; category_ja: string }[];
}

/** Whether an endpoint requires, accepts or ignores a parameter. */
export type RequirementOut = "required" | "optional" | "unsupported";

/** structuredContent of boj_get_parameter_catalog. */
export interface ParameterCatalogOutput extends CatalogSource {
  endpoint_scope: string;
  general_notes: string[];
  format_codes: string[];
  language_codes: string[];
  mcp_format_codes: string[];
  mcp_language_codes: string[];
  frequency_codes: string[];
  frequencies: { code: string; meaning: string; date_format: string }[];
  parameters: {
    name: string;
    mcp_argument: string;
    description: string;
    allowed_values: string;
    requirements: { code_api: RequirementOut; layer_api: RequirementOut; metadata_api: RequirementOut };
    notes: string[];
  }[];
  limits: { api_scope: string; target: string; max_value: number; overflow_behavior: string }[];
  layer_rules: string[];
}

/** structuredContent of boj_get_message_catalog. */
export interface MessageCatalogOutput extends CatalogSource {
  status_filter: number | null;
  message_id_filter: string | null;
  count: number;
  messages: {
    status: number;
    message_id: string;
    message: string;
    message_en: string;
    note: string;
    hint: string;
    retryable: boolean;
  }[];
}

const nnum = num.nullable();

/** Output of boj_get_data_code and boj_get_data_layer. */
export const dataOutput = resultObject({
  meta: obj,
  parameter: obj,
  next_position: nnum,
  series_total: num,
  series_offset: num,
  series_count: num,
  next_series_offset: nnum,
  continue_with: obj.nullable(),
  series: list.optional(),
  file: obj.optional(),
  truncated: bool,
  notices: list,
  source: obj,
});

/** Output of boj_get_metadata. */
export const metadataOutput = resultObject({
  meta: obj,
  db: str,
  query: str.nullable(),
  total: num,
  count: num,
  offset: num,
  has_more: bool,
  next_offset: nnum,
  entries: list.optional(),
  file: obj.optional(),
  truncated: bool,
  notices: list,
  source: obj,
});

const catalogSource = { source_document: str, source_date: str, source_url: str };

/** Output of boj_list_databases. */
export const databasesOutput = resultObject({ ...catalogSource, count: num, databases: list });

/** Output of boj_get_parameter_catalog. */
export const parameterCatalogOutput = resultObject({
  ...catalogSource,
  endpoint_scope: str,
  parameters: list,
  limits: list,
  frequencies: list,
});

/** Output of boj_get_message_catalog. */
export const messageCatalogOutput = resultObject({ ...catalogSource, count: num, messages: list });
