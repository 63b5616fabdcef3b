// What an operation of a FRED data tool is (its endpoint, what it needs and accepts), and the
// parameter groups, order_by values and paging limits the tools' operation tables share. Facts from the FRED API docs as summarised in the upstream
// notes: endpoints, limits (1,000 for lists, 10,000 for dates, 100,000 for observations),
// order_by values and parameter codes.

/** What one operation returns, which decides parsing, columns and the project folder. */
export type ItemKind =
  | "categories"
  | "series"
  | "tags"
  | "releases"
  | "release_dates"
  | "sources"
  | "observations"
  | "vintage_dates"
  | "elements"
  | "regional_data"
  | "series_group"
  | "shapes";

/** One operation of a tool. */
export interface OperationSpec {
  tool: string;
  operation: string;
  /** Path below the base URL, e.g. `fred/series/observations`. */
  endpoint: string;
  kind: ItemKind;
  /** Parameters the operation cannot do without. */
  required: readonly string[];
  /** Parameters it accepts besides those (and the output ones). */
  optional: readonly string[];
  /** Paging: FRED's most per request, and the default this server asks for. */
  paged?: { max: number; defaultLimit: number };
  /** Allowed `order_by` values, when it takes one. */
  orderBy?: readonly string[];
  /** Defaults sent when the caller gives none (category 0 is the root). */
  defaults?: Record<string, string | number>;
  /** Project folder its files go to. */
  subdir: "series" | "maps" | "releases" | "categories" | "sources" | "tags";
  /** Word used in file names (`observations`, `search`, ...). */
  label: string;
  /** `rows`: a background job when many rows are asked for; `always`: always one (shape files). */
  job?: "rows" | "always";
  /** Allowed `filter_value`s, when fixed (series updates). */
  filterValues?: readonly string[];
}

/** Parameters every operation shares: real-time period, sort order, paging. */
export const REALTIME = ["realtime_start", "realtime_end"] as const;
export const SORT = ["sort_order"] as const;
export const PAGE = ["limit", "offset"] as const;

/** order_by values of endpoints returning series. */
export const SERIES_ORDER = [
  "series_id",
  "title",
  "units",
  "frequency",
  "seasonal_adjustment",
  "realtime_start",
  "realtime_end",
  "last_updated",
  "observation_start",
  "observation_end",
  "popularity",
  "group_popularity",
] as const;
/** order_by values of endpoints returning tags. */
export const TAG_ORDER = ["series_count", "popularity", "created", "name", "group_id"] as const;
/** order_by values of endpoints returning releases. */
export const RELEASE_ORDER = [
  "release_id",
  "name",
  "press_release",
  "realtime_start",
  "realtime_end",
] as const;
/** order_by values of `sources`. */
export const SOURCE_ORDER = ["source_id", "name", "realtime_start", "realtime_end"] as const;

/** Filters of the endpoints that list series, and of those that list tags. */
export const SERIES_FILTERS = ["filter_variable", "filter_value", "tag_names", "exclude_tag_names"] as const;
export const TAG_FILTERS = ["tag_names", "tag_group_id", "search_text"] as const;

/** Paging: FRED's most per request and the default asked for, of lists, series lists and dates. */
export const LIST = { max: 1000, defaultLimit: 100 };
export const SERIES_LIST = { max: 1000, defaultLimit: 25 };
export const DATES = { max: 10_000, defaultLimit: 500 };

/** One operation of `tool`. */
export function op(
  tool: string,
  operation: string,
  spec: Omit<OperationSpec, "tool" | "operation">,
): OperationSpec {
  return { tool, operation, ...spec };
}

/** One data tool: its operations and the text its description is built from. */
export interface DataToolSpec {
  name: string;
  title: string;
  summary: string;
  /** A few words on operations whose name does not say enough. */
  glosses?: Record<string, string>;
  operations: readonly OperationSpec[];
}
