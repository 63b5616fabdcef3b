// The six FRED data tools (seed 003's `operation` design). Each lists its operations with the
// parameters they need; the handler is shared (deliver.ts).
import { z } from "zod";
import type { ToolDefinition } from "../../mcp/provider.ts";
import type { DataArgs } from "./params.ts";
import { toolInput } from "./params.ts";
import { runDataCall } from "./deliver.ts";
import type { DataResult, FredDeps } from "./deliver.ts";

// Not read-only: output "file" writes a project file (always a new one, never overwriting).
const DATA_ANNOTATIONS = {
  readOnlyHint: false,
  idempotentHint: false,
  destructiveHint: false,
  openWorldHint: true,
} as const;

const item = z.record(z.string(), z.unknown());

/** The structured result of every data tool: inline items, a written file, or an accepted job. */
export const dataOutput = z.object({
  status: z.enum(["success", "accepted"]).describe(
    '"success", or "accepted" when a background job was started',
  ),
  tool: z.string().describe("The tool called"),
  operation: z.string().describe("The operation performed"),
  endpoint: z.string().describe("The FRED endpoint behind it"),
  output_mode: z.enum(["screen", "file"]).describe("Whether the data came inline or went to a file"),
  kind: z.string().describe("What the items are: series, observations, tags, categories, ..."),
  message: z.string().describe("What happened, in words"),
  items: z.array(item).optional().describe(
    "Inline: FRED's items (observation and map values are numbers; FRED's \".\" is null, never zero; other text is kept as text)",
  ),
  meta: item.optional().describe("FRED's other answer fields (real-time period, units, map title, ...)"),
  total: z.number().int().optional().describe("Items matching in all"),
  count: z.number().int().optional().describe("Items in this result"),
  offset: z.number().int().optional().describe("Offset of the first item"),
  has_more: z.boolean().optional().describe("Whether more items follow"),
  next_offset: z.number().int().nullable().optional().describe("Offset to ask for next, or null"),
  truncated: z.boolean().optional().describe("Whether items were cut to fit the response limit"),
  clipped_fields: z.number().int().optional().describe(
    'How many long FRED fields (notes, titles, answer fields) were shortened here; output "file" keeps them whole',
  ),
  incomplete: z.boolean().optional().describe(
    "File: true when it lacks rows that were asked for (see missing)",
  ),
  missing: z.object({
    rows: z.number().int().describe("Rows asked for that are not in the file"),
    reason: z.string().describe("Why"),
    next_offset: z.number().int().describe("The offset to call again with for the rest"),
  }).optional().describe("File: what an incomplete file lacks"),
  decision: z.object({
    mode: z.enum(["screen", "file"]).describe("What auto chose"),
    reason: z.string().describe("Why"),
    estimated_tokens: z.number().int().describe("Estimated tokens of the whole result"),
    token_budget: z.number().int().describe("Tokens an inline result may take"),
  }).optional().describe("How output auto decided"),
  file_path: z.string().optional().describe("File: absolute path on the server"),
  relative_path: z.string().optional().describe("File: path inside the project"),
  resource_uri: z.string().optional().describe("File: resource URI for resources/read"),
  project: z.string().optional().describe("File or job: the project"),
  format: z.enum(["csv", "json"]).optional().describe("File or job: the file format"),
  rows_written: z.number().int().optional().describe("File: rows written"),
  file_size_mb: z.number().optional().describe("File: size in MB"),
  excerpt: z.array(item).optional().describe("File: the first rows"),
  job_id: z.string().optional().describe("Job: its id, for fred_job_status and fred_job_cancel"),
  estimated_rows: z.number().int().nullable().optional().describe("Job: rows expected"),
  estimated_time_seconds: z.number().optional().describe("Job: a rough duration"),
  check_status: z.string().optional().describe("Job: how to follow it"),
  source: z.object({
    provider: z.string().describe("Who publishes the data"),
    url: z.string().describe("The FRED request, without the API key"),
    series_url: z.string().optional().describe("The series page on fred.stlouisfed.org"),
    terms_url: z.string().describe("FRED API terms of use"),
    notice: z.string().describe("The notice FRED's terms ask for"),
  }).describe("Where the data came from and under what terms"),
});

const OUTPUT_NOTE =
  'Output: "auto" (default) answers inline when the result is small and otherwise writes a CSV/JSON file to a project folder, returning an excerpt, the row count, the path and a resource link (read it with resources/read); "screen" always answers inline, cut to the response limit with paging; "file" always writes a file with every page of the result. Pulls over 10,000 rows and shape files run as background jobs: the call returns a job_id at once; follow it with fred_job_status.';

const SOURCE_NOTE =
  "Data: FRED®, Federal Reserve Bank of St. Louis; not endorsed or certified by the Bank. Needs FRED_API_KEY.";

interface ToolText {
  name: string;
  title: string;
  summary: string;
  operations: string[];
}

const TEXTS: ToolText[] = [
  {
    name: "fred_category",
    title: "FRED categories",
    summary: "Browse FRED's category tree and what each category holds.",
    operations: [
      "get: one category (category_id, default 0 = root)",
      "list_children: child categories (category_id, default 0)",
      "get_related: related categories (category_id)",
      "get_series: series in a category (category_id; filters, paging)",
      "get_tags: tags of a category's series (category_id)",
      "get_related_tags: tags related to given tags within a category (category_id, tag_names)",
    ],
  },
  {
    name: "fred_release",
    title: "FRED releases",
    summary:
      "Data releases such as GDP or the Employment Situation: their dates, series, sources, tags and tables.",
    operations: [
      "list: all releases",
      "get: one release (release_id)",
      "get_dates: release dates of one release (release_id), or of all releases without release_id; include_release_dates_with_no_data=true gives the upcoming calendar",
      "get_series: series of a release (release_id)",
      "get_sources: sources of a release (release_id)",
      "get_tags: tags of a release's series (release_id)",
      "get_related_tags: tags related to given tags within a release (release_id, tag_names)",
      "get_tables: the release's table tree (release_id; element_id, include_observation_values)",
    ],
  },
  {
    name: "fred_series",
    title: "FRED series and observations",
    summary: "Find series and fetch their data, with every transformation FRED offers.",
    operations: [
      "get: series metadata (series_id)",
      "search: find series (search_text; search_type, filters, order_by, paging)",
      "get_categories: categories of a series (series_id)",
      "get_observations: the data (series_id; observation_start/end, units transformation, frequency + aggregation_method, output_type, vintage_dates, realtime_start/end)",
      "get_release: the release of a series (series_id)",
      "get_tags: tags of a series (series_id)",
      "search_tags: tags of series matching text (series_search_text)",
      "search_related_tags: tags related to given tags among series matching text (series_search_text, tag_names)",
      "get_updates: recently updated series (filter_value macro|regional|all; start_time/end_time)",
      "get_vintage_dates: dates a series was revised (series_id)",
    ],
  },
  {
    name: "fred_source",
    title: "FRED sources",
    summary: "Data sources (agencies, banks) and their releases.",
    operations: [
      "list: all sources",
      "get: one source (source_id)",
      "get_releases: releases of a source (source_id)",
    ],
  },
  {
    name: "fred_tag",
    title: "FRED tags",
    summary: "Tags that classify series (geography, frequency, source, topic), and series by tag.",
    operations: [
      "list: tags (search_text, tag_group_id, tag_names to filter)",
      "get_related_tags: tags that co-occur with given tags (tag_names)",
      "get_series: series having all given tags (tag_names; exclude_tag_names)",
    ],
  },
  {
    name: "fred_maps",
    title: "FRED Maps (regional data)",
    summary: "FRED Maps (GeoFRED): regional data for states, counties, MSAs and more, and their shape files.",
    operations: [
      "get_shapes: boundary shapes as GeoJSON (shape); always written to a file by a background job unless output is screen (then properties only)",
      "get_series_group: the map group of a regional series (series_id)",
      "get_regional_data: values for all regions of a group (series_group, region_type, date, season, units; start_date, frequency, transformation, aggregation_method)",
      "get_series_data: values for the regions of a series' group (series_id; date, start_date)",
    ],
  },
];

/** The six data tools over shared dependencies. */
export function dataTools(deps: FredDeps): ToolDefinition<z.ZodObject, typeof dataOutput>[] {
  return TEXTS.map((t) => ({
    name: t.name,
    title: t.title,
    description: [
      t.summary,
      `Operations (pass as "operation"; in parentheses, the parameters before a semicolon are required):\n${
        t.operations.map((o) => `- ${o}`).join("\n")
      }`,
      OUTPUT_NOTE,
      SOURCE_NOTE,
    ].join("\n\n"),
    input: toolInput(t.name),
    output: dataOutput,
    annotations: DATA_ANNOTATIONS,
    handler: (args, ctx) =>
      runDataCall(t.name, args as DataArgs, ctx, deps) as Promise<{ text: string; structured: DataResult }>,
  }));
}
