// Tool arguments: the zod field of every FRED parameter, each tool's input schema (the union of
// its operations' parameters plus the output ones), and the per-operation checks that give
// seed 003's INVALID_OPERATION and MISSING_PARAMETER errors.
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { responseFormatField } from "../../mcp/output.ts";
import { OUTPUT_MODES } from "../../output/tokens.ts";
import { FILE_FORMATS } from "../../output/writers.ts";
import { ALL_RELEASE_DATES, operationNames, OPERATIONS } from "./operations.ts";
import type { OperationSpec } from "./operations.ts";

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Whether `text` is a real calendar date written YYYY-MM-DD (no 2020-13-45, no 2021-02-29). */
export function isCalendarDate(text: string): boolean {
  if (!DATE.test(text)) return false;
  const [y, m, d] = text.split("-").map(Number) as [number, number, number];
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** Whether `text` is a real moment written YYYYMMDDHhmm (FRED's start_time/end_time). */
export function isCalendarTime(text: string): boolean {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!m) return false;
  return isCalendarDate(`${m[1]}-${m[2]}-${m[3]}`) && Number(m[4]) < 24 && Number(m[5]) < 60;
}

const calendarDate = () =>
  z.string().regex(DATE, "expected a date as YYYY-MM-DD").refine(
    isCalendarDate,
    "expected a real calendar date as YYYY-MM-DD (month 01-12, a day that month has)",
  );
const date = (what: string) => calendarDate().describe(what);
const tagList = (what: string) =>
  z.union([z.array(z.string().min(1).max(100)).min(1).max(50), z.string().min(1).max(2000)]).describe(
    `${what}: a list such as ["usa", "gdp"] or one semicolon-separated string "usa;gdp"`,
  );
const REGION_TYPES = [
  "bea",
  "msa",
  "frb",
  "necta",
  "state",
  "country",
  "county",
  "censusregion",
  "censusdivision",
] as const;
const UNIT_CODES = ["lin", "chg", "ch1", "pch", "pc1", "pca", "cch", "cca", "log"] as const;
const FREQUENCIES = [
  "d",
  "w",
  "bw",
  "m",
  "q",
  "sa",
  "a",
  "wef",
  "weth",
  "wew",
  "wetu",
  "wem",
  "wesu",
  "wesa",
  "bwew",
  "bwem",
] as const;

/** Every FRED parameter's field, shared by the tools that take it. */
const PARAMS = {
  category_id: z.number().int().min(0).describe(
    "Category id; 0 is the root (default 0 for get and list_children)",
  ),
  release_id: z.number().int().min(1).describe("Release id, e.g. 53 (Gross Domestic Product)"),
  source_id: z.number().int().min(1).describe("Source id, e.g. 1 (Board of Governors)"),
  element_id: z.number().int().min(0).describe(
    "get_tables: the table element to start from (default: the root)",
  ),
  series_id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "expected a FRED series id such as GNPCA").describe(
    "FRED series id, e.g. GNPCA, UNRATE, DGS10",
  ),
  search_text: z.string().min(1).max(500).describe(
    "Words to search for (series search: in titles, notes and ids; tag operations: in tag names)",
  ),
  series_search_text: z.string().min(1).max(500).describe(
    "search_tags/search_related_tags: words matching series",
  ),
  tag_search_text: z.string().min(1).max(500).describe(
    "search_tags/search_related_tags: words matching tag names",
  ),
  search_type: z.enum(["full_text", "series_id"]).describe(
    'search: "full_text" (default) or "series_id" (id pattern)',
  ),
  realtime_start: date("Start of the real-time (ALFRED vintage) period, YYYY-MM-DD (default: today)"),
  realtime_end: date("End of the real-time period, YYYY-MM-DD (default: today)"),
  limit: z.number().int().min(1).max(1_000_000).describe(
    'Most items to return: lists up to 1,000, dates up to 10,000, observations up to 100,000 per call; with output "file" any number (fetched page by page). Default: 25 series, 100 other items, 500 dates, all observations; with output "file" all items',
  ),
  offset: z.number().int().min(0).describe("Items to skip, for paging (default 0)"),
  order_by: z.string().max(40).describe(
    "Sort key; allowed values depend on the operation (an invalid one is answered with the list)",
  ),
  sort_order: z.enum(["asc", "desc"]).describe('"asc" or "desc"'),
  filter_variable: z.enum(["frequency", "units", "seasonal_adjustment"]).describe(
    "Series lists: attribute to filter on, with filter_value",
  ),
  filter_value: z.string().min(1).max(200).describe(
    'Value of filter_variable (e.g. "Monthly"); get_updates: "macro", "regional" or "all"',
  ),
  tag_names: tagList("Tags that must all match"),
  exclude_tag_names: tagList("Tags that must not match (needs tag_names)"),
  tag_group_id: z.enum(["freq", "gen", "geo", "geot", "rls", "seas", "src", "cc"]).describe(
    "Tag group: freq, gen (general), geo, geot (geography type), rls (release), seas, src (source), cc (citation)",
  ),
  include_release_dates_with_no_data: z.boolean().describe(
    "get_dates: include dates without data yet, i.e. the upcoming release calendar (default false)",
  ),
  include_observation_values: z.boolean().describe("get_tables: include observation values (default false)"),
  observation_date: date("get_tables: date of the observation values (default 9999-12-31, the latest)"),
  observation_start: date("First observation date, YYYY-MM-DD"),
  observation_end: date("Last observation date, YYYY-MM-DD"),
  units: z.enum(UNIT_CODES).describe(
    "Transformation: lin (levels, default), chg (change), ch1 (change from a year ago), pch (% change), pc1 (% change from a year ago), pca (compounded annual rate), cch (continuously compounded rate), cca (continuously compounded annual rate), log (natural log)",
  ),
  frequency: z.enum(FREQUENCIES).describe(
    "Aggregate to a lower frequency: d, w, bw, m, q, sa, a, or wef/weth/wew/wetu/wem/wesu/wesa (weekly ending Fri..Sat), bwew/bwem (biweekly ending Wed/Mon)",
  ),
  aggregation_method: z.enum(["avg", "sum", "eop"]).describe(
    "How frequency aggregation combines values: avg (default), sum, eop (end of period)",
  ),
  output_type: z.number().int().min(1).max(4).describe(
    "1 by real-time period (default), 2 by vintage date, all observations, 3 by vintage date, new and revised only, 4 initial release only",
  ),
  vintage_dates: z.union([z.array(calendarDate()).min(1).max(2000), z.string().min(10).max(30_000)])
    .describe(
      "Vintage dates (YYYY-MM-DD): a list, or one comma-separated string; at most 2,000",
    ),
  start_time: z.string().regex(/^\d{12}$/, "expected YYYYMMDDHhmm").refine(
    isCalendarTime,
    "expected a real date and time as YYYYMMDDHhmm",
  ).describe(
    "get_updates: start of the update window, YYYYMMDDHhmm (US Central time; needs end_time)",
  ),
  end_time: z.string().regex(/^\d{12}$/, "expected YYYYMMDDHhmm").refine(
    isCalendarTime,
    "expected a real date and time as YYYYMMDDHhmm",
  ).describe(
    "get_updates: end of the update window, YYYYMMDDHhmm (needs start_time)",
  ),
  shape: z.enum(REGION_TYPES).describe(
    "get_shapes: the shape set, e.g. state, county, msa, frb, bea, country",
  ),
  region_type: z.enum(REGION_TYPES).describe("get_regional_data: the region type, e.g. state, county, msa"),
  series_group: z.string().regex(/^[A-Za-z0-9]{1,20}$/, "expected a series group id such as 882").describe(
    'get_regional_data: series group id (e.g. "882"; get_series_group tells it for a series)',
  ),
  date: date("Maps: the observation date, YYYY-MM-DD (get_series_data default: the latest)"),
  start_date: date("Maps: first date of a range ending at date, YYYY-MM-DD"),
  season: z.enum(["SA", "NSA", "SSA", "SAAR", "NSAAR"]).describe("get_regional_data: seasonal adjustment"),
  transformation: z.enum(UNIT_CODES).describe("get_regional_data: transformation code (same codes as units)"),
} as const;

/** Maps' `units` is free text (it only labels the result), unlike the observation codes. */
const MAPS_UNITS = z.string().min(1).max(100).describe(
  'get_regional_data: units label, e.g. "Dollars" (required)',
);

/** Arguments every data tool takes besides the FRED parameters. */
const OUTPUT_FIELDS = {
  output: z.enum(OUTPUT_MODES).optional().describe(
    '"auto" (default; FRED_OUTPUT_MODE): inline when small, else a file with an excerpt; "screen": inline, cut to the response limit; "file": write a project file and return its path and resource link',
  ),
  format: z.enum(FILE_FORMATS).optional().describe(
    'File format when writing: "csv" (default; FRED_OUTPUT_FORMAT) or "json"',
  ),
  project: z.string().max(200).optional().describe(
    'Project folder for files (default "default"; FRED_PROJECT_NAME): letters, digits, "-" and "_"',
  ),
  filename: z.string().max(200).optional().describe(
    "File name without folder (extension added); default from FRED_FILENAME_PATTERN. Existing files are never overwritten",
  ),
  response_format: responseFormatField,
};

/** Names of arguments that are not FRED parameters. */
export const NON_FRED_ARGS: ReadonlySet<string> = new Set(["operation", ...Object.keys(OUTPUT_FIELDS)]);

/** The input schema of a data tool: `operation`, its operations' parameters, output arguments. */
export function toolInput(tool: string): z.ZodObject {
  const ops = OPERATIONS[tool] ?? [];
  const names = new Set<string>();
  for (const o of [...ops, ...(tool === "fred_release" ? [ALL_RELEASE_DATES] : [])]) {
    for (const p of [...o.required, ...o.optional]) names.add(p);
  }
  const shape: Record<string, z.ZodType> = {
    operation: z.string().meta({ enum: operationNames(tool) }).describe(
      `What to do: ${operationNames(tool).join(", ")} (see the tool description)`,
    ),
  };
  for (const name of names) {
    const field = tool === "fred_maps" && name === "units" ? MAPS_UNITS : PARAMS[name as keyof typeof PARAMS];
    if (!field) throw new Error(`No field for parameter "${name}"`);
    shape[name] = field.optional();
  }
  return z.strictObject({ ...shape, ...OUTPUT_FIELDS });
}

/** The arguments a data tool's handler receives. */
export type DataArgs = Record<string, unknown> & {
  operation: string;
  output?: "auto" | "screen" | "file";
  format?: "csv" | "json";
  project?: string;
  filename?: string;
  response_format: "markdown" | "json";
};

/**
 * Finds the operation and checks its parameters: unknown operation, a parameter the operation
 * does not take, a missing one, a limit above FRED's, an order_by it does not know.
 */
export function resolveOperation(
  tool: string,
  args: DataArgs,
  options: { multiPage?: boolean } = {},
): OperationSpec {
  const ops = OPERATIONS[tool] ?? [];
  let spec = ops.find((o) => o.operation === args.operation);
  if (!spec) {
    throw new ToolError(
      "INVALID_OPERATION",
      `Invalid operation: "${args.operation}"; valid operations of ${tool}: ${
        operationNames(tool).join(", ")
      }`,
      { field: "operation", hint: "Call again with one of the valid operations" },
    );
  }
  if (spec.operation === "get_dates" && tool === "fred_release" && args["release_id"] === undefined) {
    spec = ALL_RELEASE_DATES;
  }
  const accepted = new Set([...spec.required, ...spec.optional]);
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || NON_FRED_ARGS.has(key) || accepted.has(key)) continue;
    throw new ToolError(
      "VALIDATION_ERROR",
      `Parameter "${key}" does not apply to operation "${spec.operation}"; it accepts: ${
        [...accepted].join(", ") || "no parameters"
      }`,
      { field: key, hint: `Remove "${key}" or choose another operation` },
    );
  }
  const missing = (name: string, why = ""): never => {
    throw new ToolError(
      "MISSING_PARAMETER",
      `Operation "${spec.operation}" requires "${name}"${why}`,
      { field: name, hint: `Call ${tool} again with "${name}" set` },
    );
  };
  for (const name of spec.required) if (args[name] === undefined) missing(name);
  if (
    args["exclude_tag_names"] !== undefined && accepted.has("tag_names") && args["tag_names"] === undefined
  ) {
    missing("tag_names", ' when "exclude_tag_names" is given');
  }
  if (
    accepted.has("filter_variable") && args["filter_value"] !== undefined &&
    args["filter_variable"] === undefined
  ) {
    missing("filter_variable", ' when "filter_value" is given');
  }
  if (
    accepted.has("filter_variable") && args["filter_variable"] !== undefined &&
    args["filter_value"] === undefined
  ) {
    missing("filter_value", ' when "filter_variable" is given');
  }
  if ((args["start_time"] === undefined) !== (args["end_time"] === undefined)) {
    missing(
      args["start_time"] === undefined ? "start_time" : "end_time",
      " together with the other end of the window",
    );
  }
  const limit = args["limit"];
  if (typeof limit === "number" && spec.paged && limit > spec.paged.max && !options.multiPage) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `"limit" is ${limit}, above FRED's maximum of ${
        spec.paged.max.toLocaleString("en-US")
      } for operation "${spec.operation}"`,
      {
        field: "limit",
        hint:
          `Use a limit up to ${spec.paged.max} and page with offset, or output "file" to fetch every page`,
      },
    );
  }
  const orderBy = args["order_by"];
  if (typeof orderBy === "string" && spec.orderBy && !spec.orderBy.includes(orderBy)) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `"order_by" is "${orderBy}", which operation "${spec.operation}" does not accept; use one of: ${
        spec.orderBy.join(", ")
      }`,
      { field: "order_by", hint: "Pick an order_by from the list" },
    );
  }
  const filterValue = args["filter_value"];
  if (typeof filterValue === "string" && spec.filterValues && !spec.filterValues.includes(filterValue)) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `"filter_value" is "${filterValue}"; operation "${spec.operation}" accepts: ${
        spec.filterValues.join(", ")
      }`,
      { field: "filter_value", hint: "Pick a filter_value from the list" },
    );
  }
  if (typeof args["vintage_dates"] === "string") {
    const bad = (args["vintage_dates"] as string).split(",").map((s) => s.trim()).find((d) =>
      !isCalendarDate(d)
    );
    if (bad !== undefined) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"vintage_dates" holds "${bad}", which is not a real calendar date as YYYY-MM-DD`,
        {
          field: "vintage_dates",
          hint: 'Give dates as ["2020-01-01", "2021-01-01"] or "2020-01-01,2021-01-01"',
        },
      );
    }
  }
  return spec;
}

/** The FRED query of a call: the operation's parameters in FRED's encoding, defaults applied. */
export function fredQuery(spec: OperationSpec, args: DataArgs): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = { ...(spec.defaults ?? {}) };
  for (const name of [...spec.required, ...spec.optional]) {
    const value = args[name];
    if (value === undefined || name === "limit" || name === "offset") continue;
    if (name === "tag_names" || name === "exclude_tag_names") {
      query[name] = Array.isArray(value) ? value.join(";") : String(value);
    } else if (name === "vintage_dates") {
      query[name] = Array.isArray(value) ? value.join(",") : String(value).replace(/\s+/g, "");
    } else if (typeof value === "boolean") {
      query[name] = value ? "true" : "false";
    } else {
      query[name] = value as string | number;
    }
  }
  return query;
}
