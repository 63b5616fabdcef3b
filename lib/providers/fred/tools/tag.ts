// fred_tag: its operations (docs/apis/fred.md, "Data tools") with the FRED endpoints behind them,
// and the text its description is built from; every data tool shares one handler (deliver.ts).
import {
  LIST,
  op,
  PAGE,
  REALTIME,
  SERIES_LIST,
  SERIES_ORDER,
  SORT,
  TAG_FILTERS,
  TAG_ORDER,
} from "../operation_spec.ts";
import type { DataToolSpec } from "../operation_spec.ts";

/** `fred_tag`. */
export const fredTag: DataToolSpec = {
  name: "fred_tag",
  title: "FRED tags",
  summary: "FRED tags (geography, frequency, source...) and series by tag.",
  operations: [
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
};
