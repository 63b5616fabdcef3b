// fred_category: its operations (docs/apis/fred.md, "Data tools") with the FRED endpoints behind
// them, and the text its description is built from; every data tool shares one handler
// (deliver.ts).
import {
  LIST,
  op,
  PAGE,
  REALTIME,
  SERIES_FILTERS,
  SERIES_LIST,
  SERIES_ORDER,
  SORT,
  TAG_FILTERS,
  TAG_ORDER,
} from "../operation_spec.ts";
import type { DataToolSpec } from "../operation_spec.ts";

/** `fred_category`. */
export const fredCategory: DataToolSpec = {
  name: "fred_category",
  title: "FRED categories",
  summary: "FRED's category tree: categories, their series and tags.",
  operations: [
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
};
