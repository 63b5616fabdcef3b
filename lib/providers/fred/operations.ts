// The operations of the six data tools (seed 003's table) and the FRED endpoints behind them,
// with what each needs and accepts. Facts from the FRED API docs as summarised in the upstream
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

const REALTIME = ["realtime_start", "realtime_end"] as const;
const SORT = ["sort_order"] as const;
const PAGE = ["limit", "offset"] as const;

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

const SERIES_FILTERS = ["filter_variable", "filter_value", "tag_names", "exclude_tag_names"] as const;
const TAG_FILTERS = ["tag_names", "tag_group_id", "search_text"] as const;

const LIST = { max: 1000, defaultLimit: 100 };
const SERIES_LIST = { max: 1000, defaultLimit: 25 };
const DATES = { max: 10_000, defaultLimit: 500 };

function op(tool: string, operation: string, spec: Omit<OperationSpec, "tool" | "operation">): OperationSpec {
  return { tool, operation, ...spec };
}

/** Every operation, by tool, in seed 003's order. */
export const OPERATIONS: Readonly<Record<string, readonly OperationSpec[]>> = {
  fred_category: [
    op("fred_category", "get", {
      endpoint: "fred/category",
      kind: "categories",
      required: [],
      optional: ["category_id"],
      defaults: { category_id: 0 },
      subdir: "categories",
      label: "category",
    }),
    op("fred_category", "list_children", {
      endpoint: "fred/category/children",
      kind: "categories",
      required: [],
      optional: ["category_id", ...REALTIME],
      defaults: { category_id: 0 },
      subdir: "categories",
      label: "children",
    }),
    op("fred_category", "get_related", {
      endpoint: "fred/category/related",
      kind: "categories",
      required: ["category_id"],
      optional: [...REALTIME],
      subdir: "categories",
      label: "related",
    }),
    op("fred_category", "get_series", {
      endpoint: "fred/category/series",
      kind: "series",
      required: ["category_id"],
      optional: [...REALTIME, ...PAGE, "order_by", ...SORT, ...SERIES_FILTERS],
      paged: SERIES_LIST,
      orderBy: SERIES_ORDER,
      subdir: "categories",
      label: "series",
    }),
    op("fred_category", "get_tags", {
      endpoint: "fred/category/tags",
      kind: "tags",
      required: ["category_id"],
      optional: [...REALTIME, ...TAG_FILTERS, ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "categories",
      label: "tags",
    }),
    op("fred_category", "get_related_tags", {
      endpoint: "fred/category/related_tags",
      kind: "tags",
      required: ["category_id", "tag_names"],
      optional: [
        ...REALTIME,
        "exclude_tag_names",
        "tag_group_id",
        "search_text",
        ...PAGE,
        "order_by",
        ...SORT,
      ],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "categories",
      label: "related_tags",
    }),
  ],
  fred_release: [
    op("fred_release", "list", {
      endpoint: "fred/releases",
      kind: "releases",
      required: [],
      optional: [...REALTIME, ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: RELEASE_ORDER,
      subdir: "releases",
      label: "releases",
    }),
    op("fred_release", "get", {
      endpoint: "fred/release",
      kind: "releases",
      required: ["release_id"],
      optional: [...REALTIME],
      subdir: "releases",
      label: "release",
    }),
    op("fred_release", "get_dates", {
      endpoint: "fred/release/dates",
      kind: "release_dates",
      required: ["release_id"],
      optional: [...REALTIME, ...PAGE, ...SORT, "include_release_dates_with_no_data"],
      paged: DATES,
      subdir: "releases",
      label: "dates",
    }),
    op("fred_release", "get_series", {
      endpoint: "fred/release/series",
      kind: "series",
      required: ["release_id"],
      optional: [...REALTIME, ...PAGE, "order_by", ...SORT, ...SERIES_FILTERS],
      paged: SERIES_LIST,
      orderBy: SERIES_ORDER,
      subdir: "releases",
      label: "series",
    }),
    op("fred_release", "get_sources", {
      endpoint: "fred/release/sources",
      kind: "sources",
      required: ["release_id"],
      optional: [...REALTIME],
      subdir: "releases",
      label: "sources",
    }),
    op("fred_release", "get_tags", {
      endpoint: "fred/release/tags",
      kind: "tags",
      required: ["release_id"],
      optional: [...REALTIME, ...TAG_FILTERS, ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "releases",
      label: "tags",
    }),
    op("fred_release", "get_related_tags", {
      endpoint: "fred/release/related_tags",
      kind: "tags",
      required: ["release_id", "tag_names"],
      optional: [
        ...REALTIME,
        "exclude_tag_names",
        "tag_group_id",
        "search_text",
        ...PAGE,
        "order_by",
        ...SORT,
      ],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "releases",
      label: "related_tags",
    }),
    op("fred_release", "get_tables", {
      endpoint: "fred/release/tables",
      kind: "elements",
      required: ["release_id"],
      optional: ["element_id", "include_observation_values", "observation_date"],
      subdir: "releases",
      label: "tables",
    }),
  ],
  fred_series: [
    op("fred_series", "get", {
      endpoint: "fred/series",
      kind: "series",
      required: ["series_id"],
      optional: [...REALTIME],
      subdir: "series",
      label: "info",
    }),
    op("fred_series", "search", {
      endpoint: "fred/series/search",
      kind: "series",
      required: ["search_text"],
      optional: ["search_type", ...REALTIME, ...PAGE, "order_by", ...SORT, ...SERIES_FILTERS],
      paged: SERIES_LIST,
      orderBy: ["search_rank", ...SERIES_ORDER],
      subdir: "series",
      label: "search",
    }),
    op("fred_series", "get_categories", {
      endpoint: "fred/series/categories",
      kind: "categories",
      required: ["series_id"],
      optional: [...REALTIME],
      subdir: "series",
      label: "categories",
    }),
    op("fred_series", "get_observations", {
      endpoint: "fred/series/observations",
      kind: "observations",
      required: ["series_id"],
      optional: [
        ...REALTIME,
        ...PAGE,
        ...SORT,
        "observation_start",
        "observation_end",
        "units",
        "frequency",
        "aggregation_method",
        "output_type",
        "vintage_dates",
      ],
      paged: { max: 100_000, defaultLimit: 100_000 },
      subdir: "series",
      label: "observations",
      job: "rows",
    }),
    op("fred_series", "get_release", {
      endpoint: "fred/series/release",
      kind: "releases",
      required: ["series_id"],
      optional: [...REALTIME],
      subdir: "series",
      label: "release",
    }),
    op("fred_series", "get_tags", {
      endpoint: "fred/series/tags",
      kind: "tags",
      required: ["series_id"],
      optional: [...REALTIME, "order_by", ...SORT],
      orderBy: TAG_ORDER,
      subdir: "series",
      label: "tags",
    }),
    op("fred_series", "search_tags", {
      endpoint: "fred/series/search/tags",
      kind: "tags",
      required: ["series_search_text"],
      optional: [...REALTIME, "tag_names", "tag_group_id", "tag_search_text", ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "series",
      label: "search_tags",
    }),
    op("fred_series", "search_related_tags", {
      endpoint: "fred/series/search/related_tags",
      kind: "tags",
      required: ["series_search_text", "tag_names"],
      optional: [
        ...REALTIME,
        "exclude_tag_names",
        "tag_group_id",
        "tag_search_text",
        ...PAGE,
        "order_by",
        ...SORT,
      ],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "series",
      label: "search_related_tags",
    }),
    op("fred_series", "get_updates", {
      endpoint: "fred/series/updates",
      kind: "series",
      required: [],
      optional: [...REALTIME, ...PAGE, "filter_value", "start_time", "end_time"],
      paged: SERIES_LIST,
      filterValues: ["macro", "regional", "all"],
      subdir: "series",
      label: "updates",
    }),
    op("fred_series", "get_vintage_dates", {
      endpoint: "fred/series/vintagedates",
      kind: "vintage_dates",
      required: ["series_id"],
      optional: [...REALTIME, ...PAGE, ...SORT],
      paged: DATES,
      subdir: "series",
      label: "vintage_dates",
    }),
  ],
  fred_source: [
    op("fred_source", "list", {
      endpoint: "fred/sources",
      kind: "sources",
      required: [],
      optional: [...REALTIME, ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: SOURCE_ORDER,
      subdir: "sources",
      label: "sources",
    }),
    op("fred_source", "get", {
      endpoint: "fred/source",
      kind: "sources",
      required: ["source_id"],
      optional: [...REALTIME],
      subdir: "sources",
      label: "source",
    }),
    op("fred_source", "get_releases", {
      endpoint: "fred/source/releases",
      kind: "releases",
      required: ["source_id"],
      optional: [...REALTIME, ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: RELEASE_ORDER,
      subdir: "sources",
      label: "releases",
    }),
  ],
  fred_tag: [
    op("fred_tag", "list", {
      endpoint: "fred/tags",
      kind: "tags",
      required: [],
      optional: [...REALTIME, ...TAG_FILTERS, ...PAGE, "order_by", ...SORT],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "tags",
      label: "tags",
    }),
    op("fred_tag", "get_related_tags", {
      endpoint: "fred/related_tags",
      kind: "tags",
      required: ["tag_names"],
      optional: [
        ...REALTIME,
        "exclude_tag_names",
        "tag_group_id",
        "search_text",
        ...PAGE,
        "order_by",
        ...SORT,
      ],
      paged: LIST,
      orderBy: TAG_ORDER,
      subdir: "tags",
      label: "related_tags",
    }),
    op("fred_tag", "get_series", {
      endpoint: "fred/tags/series",
      kind: "series",
      required: ["tag_names"],
      optional: [...REALTIME, "exclude_tag_names", ...PAGE, "order_by", ...SORT],
      paged: SERIES_LIST,
      orderBy: SERIES_ORDER,
      subdir: "tags",
      label: "series",
    }),
  ],
  fred_maps: [
    op("fred_maps", "get_shapes", {
      endpoint: "geofred/shapes/file",
      kind: "shapes",
      required: ["shape"],
      optional: [],
      subdir: "maps",
      label: "shapes",
      job: "always",
    }),
    op("fred_maps", "get_series_group", {
      endpoint: "geofred/series/group",
      kind: "series_group",
      required: ["series_id"],
      optional: [],
      subdir: "maps",
      label: "series_group",
    }),
    op("fred_maps", "get_regional_data", {
      endpoint: "geofred/regional/data",
      kind: "regional_data",
      required: ["series_group", "region_type", "date", "season", "units"],
      optional: ["start_date", "frequency", "transformation", "aggregation_method"],
      subdir: "maps",
      label: "regional_data",
    }),
    op("fred_maps", "get_series_data", {
      endpoint: "geofred/series/data",
      kind: "regional_data",
      required: ["series_id"],
      optional: ["date", "start_date"],
      subdir: "maps",
      label: "series_data",
    }),
  ],
};

/**
 * `fred_release` `get_dates` without a `release_id` covers every release (`releases/dates`),
 * so all v1 endpoints are reachable through seed 003's operation names.
 */
export const ALL_RELEASE_DATES: OperationSpec = op("fred_release", "get_dates", {
  endpoint: "fred/releases/dates",
  kind: "release_dates",
  required: [],
  optional: [...REALTIME, ...PAGE, "order_by", ...SORT, "include_release_dates_with_no_data"],
  paged: { max: 1000, defaultLimit: 500 },
  orderBy: ["release_date", "release_id", "release_name"],
  subdir: "releases",
  label: "dates",
});

/** Operation names of a tool, in order. */
export function operationNames(tool: string): string[] {
  return (OPERATIONS[tool] ?? []).map((o) => o.operation);
}
