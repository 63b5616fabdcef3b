// fred_source: its operations (docs/apis/fred.md, "Data tools") with the FRED endpoints behind
// them, and the text its description is built from; every data tool shares one handler
// (deliver.ts).
import { LIST, op, PAGE, REALTIME, RELEASE_ORDER, SORT, SOURCE_ORDER } from "../operation_spec.ts";
import type { DataToolSpec } from "../operation_spec.ts";

/** `fred_source`. */
export const fredSource: DataToolSpec = {
  name: "fred_source",
  title: "FRED sources",
  summary: "FRED data sources (agencies, banks) and their releases.",
  operations: [
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
};
