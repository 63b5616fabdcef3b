// Tool arguments: the zod field of every FRED parameter, each tool's input schema (the union of
// its operations' parameters plus the output ones), and the per-operation checks that give
// INVALID_OPERATION and MISSING_PARAMETER errors (docs/apis/fred.md, "Errors").
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { FILE_FORMATS, OUTPUT_MODES } from "../../output/modes.ts";
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

// Formats are checked with refinements rather than regex or length keywords: the model reads
// the format in the description, and the served schema, which every agent pays for on every
// turn, stays short.
const calendarDate = () =>
  z.string().refine(
    isCalendarDate,
    "expected a real calendar date as YYYY-MM-DD (month 01-12, a day that month has)",
  );
const date = (what: string) => calendarDate().describe(what);
/** A non-blank string of at most `max` characters (the bound is checked, not served). */
export const text = (max: number): z.ZodType<string> =>
  z.string().refine((s) => s.trim().length > 0 && s.length <= max, `expected 1 to ${max} characters`);
const time = (what: string) =>
  z.string().refine(isCalendarTime, "expected a real date and time as YYYYMMDDHhmm").describe(what);
/**
 * An integer checked against its range without serving the bounds (ids and offsets have no
 * meaningful limit to tell the model, and zod's `.int()` would serve ±2^53).
 */
export const integer = (min: number, max: number): z.ZodType<number> =>
  z.number().refine(
    (n) => Number.isInteger(n) && n >= min && n <= max,
    `expected a whole number from ${min} to ${max.toLocaleString("en-US")}`,
  ).meta({ type: "integer" });
/**
 * Tag lists are arrays of names. Callers of earlier versions sent one semicolon-separated string
 * ("usa;gdp"), as FRED itself takes them: that is still accepted, split here.
 */
const tagList = (what: string) =>
  z.preprocess(
    (v) => typeof v === "string" ? v.split(";").map((s) => s.trim()).filter((s) => s !== "") : v,
    z.array(text(100)).refine((a) => a.length >= 1 && a.length <= 50, "expected 1 to 50 tag names"),
  ).describe(what);
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

/** The largest offset accepted: far past any FRED list (about 800,000 series in all). */
const MAX_OFFSET = 10_000_000;

/**
 * Every FRED parameter's field, shared by the tools that take it. One short description each:
 * which operations take a parameter is said once, in the tool description.
 */
const PARAMS = {
  category_id: integer(0, 1_000_000_000).describe("Default 0 (the root)"),
  release_id: integer(1, 1_000_000_000).describe("Release id, e.g. 53"),
  source_id: integer(1, 1_000_000_000).describe("Source id, e.g. 1"),
  element_id: integer(0, 1_000_000_000).describe("Default: the root"),
  series_id: z.string().refine(
    (s) => /^[A-Za-z0-9._-]{1,64}$/.test(s),
    "expected a FRED series id such as GNPCA",
  )
    .describe("e.g. GNPCA"),
  search_text: text(500).describe("Words in tag names"),
  series_search_text: text(500).describe("Words matching series"),
  tag_search_text: text(500).describe("Words in tag names"),
  search_type: z.enum(["full_text", "series_id"]).describe("Default full_text"),
  realtime_start: date("YYYY-MM-DD"),
  realtime_end: date("YYYY-MM-DD"),
  limit: integer(1, 1_000_000).describe("Most items"),
  offset: integer(0, MAX_OFFSET).describe("Items to skip"),
  order_by: text(40).describe("Sort key"),
  sort_order: z.enum(["asc", "desc"]).describe("Default asc"),
  filter_variable: z.enum(["frequency", "units", "seasonal_adjustment"]).describe(
    "Filter on, with filter_value",
  ),
  filter_value: text(200).describe('e.g. "Monthly"'),
  tag_names: tagList("All must match"),
  exclude_tag_names: tagList("Tags to exclude"),
  tag_group_id: z.enum(["freq", "gen", "geo", "geot", "rls", "seas", "src", "cc"]).describe("Tag group"),
  include_release_dates_with_no_data: z.boolean().describe("Add future dates (default false)"),
  include_observation_values: z.boolean().describe("Default false"),
  observation_date: date("Default: latest"),
  observation_start: date("YYYY-MM-DD"),
  observation_end: date("YYYY-MM-DD"),
  units: z.enum(UNIT_CODES).describe(
    "Transformation: chg change, pch %, ch1/pc1 vs a year ago, pca/cch/cca compounded, log (default lin)",
  ),
  frequency: z.enum(FREQUENCIES).describe("Aggregate to"),
  aggregation_method: z.enum(["avg", "sum", "eop"]).describe("Default avg"),
  output_type: integer(1, 4).describe(
    "1 as known in real time (default), 2 a column per vintage, 3 changed vintages, 4 first releases",
  ),
  vintage_dates: z.preprocess(
    // Earlier versions took one comma-separated string too: still accepted, split here.
    (v) => typeof v === "string" ? v.split(",").map((s) => s.trim()).filter((s) => s !== "") : v,
    z.array(calendarDate()).refine((a) => a.length >= 1 && a.length <= 2000, "expected 1 to 2,000 dates"),
  ).describe("YYYY-MM-DD, at most 2,000"),
  start_time: time("YYYYMMDDHhmm, US Central"),
  end_time: time("YYYYMMDDHhmm"),
  shape: z.enum(REGION_TYPES).describe("Region type"),
  region_type: z.enum(REGION_TYPES).describe("Region type"),
  series_group: z.string().refine(
    (s) => /^[A-Za-z0-9]{1,20}$/.test(s),
    "expected a series group id such as 882",
  )
    .describe('Group id, e.g. "882"'),
  date: date("YYYY-MM-DD (series data default: latest)"),
  start_date: date("Range start, YYYY-MM-DD"),
  season: z.enum(["SA", "NSA", "SSA", "SAAR", "NSAAR"]).describe("Seasonal adjustment"),
  transformation: z.enum(UNIT_CODES).describe("As fred_series units"),
} as const;

/** Per-tool wording where a parameter means something else there. */
const TOOL_PARAMS: Record<string, Partial<Record<string, z.ZodType>>> = {
  fred_series: {
    search_text: text(500).describe("Search words"),
    filter_value: text(200).describe('e.g. "Monthly"; get_updates: macro, regional or all'),
  },
  // Maps' `units` is free text (it only labels the result), unlike the observation codes.
  fred_maps: { units: text(100).describe('Units label, e.g. "Dollars"') },
};

/** Each tool's `limit`: its defaults (FRED's most per call is said by the error past it). */
const LIMITS: Record<string, string> = {
  fred_category: "Default 25 series, 100 tags",
  fred_release: "Default 25 series, 100 others, 500 dates",
  fred_series: "Default 25 series, 100 tags, 500 dates, all observations",
  fred_source: "Default 100",
  fred_tag: "Default 25 series, 100 tags",
};

/** What a data tool's description and defaults depend on (the configured FRED_* defaults). */
export interface InputDefaults {
  output_mode: "auto" | "screen" | "file";
  output_format: "csv" | "json";
  project_name: string;
}

const DEFAULTS: InputDefaults = { output_mode: "auto", output_format: "csv", project_name: "default" };

/**
 * `response_format` as every tool has it, worded shorter than the shared field: each word is
 * paid on every turn by every connected agent.
 */
export const responseFormat = z.enum(["markdown", "json"]).optional().describe("Default markdown");

/** Arguments every data tool takes besides the FRED parameters. */
function outputFields(d: InputDefaults): Record<string, z.ZodType> {
  return {
    output: z.enum(OUTPUT_MODES).optional().describe(
      d.output_mode === "auto"
        ? "Default auto: inline if small, else a file"
        : `Default ${d.output_mode}; auto: inline if small, else a file`,
    ),
    format: z.enum(FILE_FORMATS).optional().describe(`Default ${d.output_format}`),
    project: text(200).optional().describe(`Default "${d.project_name}"`),
    filename: text(200).optional().describe("No extension"),
    response_format: responseFormat,
    // Defined here, shorter than the core's shared field, which the core then leaves out.
    fresh: z.boolean().optional().describe("Bypass the cache"),
  };
}

/** Names of arguments that are not FRED parameters. */
export const NON_FRED_ARGS: ReadonlySet<string> = new Set([
  "operation",
  ...Object.keys(outputFields(DEFAULTS)),
]);

/** The input schema of a data tool: `operation`, its operations' parameters, output arguments. */
export function toolInput(tool: string, defaults: InputDefaults = DEFAULTS): z.ZodObject {
  const ops = OPERATIONS[tool] ?? [];
  const names = new Set<string>();
  for (const o of [...ops, ...(tool === "fred_release" ? [ALL_RELEASE_DATES] : [])]) {
    for (const p of [...o.required, ...o.optional]) names.add(p);
  }
  const shape: Record<string, z.ZodType> = {
    // A string with the names as its enum, so an unknown operation gets INVALID_OPERATION.
    operation: z.string().meta({ enum: operationNames(tool) }).describe("What to do"),
  };
  for (const name of names) {
    let field = TOOL_PARAMS[tool]?.[name] ?? PARAMS[name as keyof typeof PARAMS];
    if (!field) throw new Error(`No field for parameter "${name}"`);
    if (name === "limit") field = PARAMS.limit.describe(LIMITS[tool] ?? "Default 100");
    shape[name] = field.optional();
  }
  return z.strictObject({ ...shape, ...outputFields(defaults) });
}

/** The arguments a data tool's handler receives. */
export type DataArgs = Record<string, unknown> & {
  operation: string;
  output?: "auto" | "screen" | "file";
  fresh?: boolean;
  format?: "csv" | "json";
  project?: string;
  filename?: string;
  response_format?: "markdown" | "json";
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
