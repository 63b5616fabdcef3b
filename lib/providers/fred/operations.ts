// The operations of the six data tools (docs/apis/fred.md, "Data tools"), gathered from their files
// in tools/, with the one reached without a tool of its own.
import { fredCategory } from "./tools/category.ts";
import { fredMaps } from "./tools/maps.ts";
import { fredRelease } from "./tools/release.ts";
import { fredSeries } from "./tools/series.ts";
import { fredSource } from "./tools/source.ts";
import { fredTag } from "./tools/tag.ts";
import { op, PAGE, REALTIME, SORT } from "./operation_spec.ts";
import type { DataToolSpec, OperationSpec } from "./operation_spec.ts";

export type { DataToolSpec, ItemKind, OperationSpec } from "./operation_spec.ts";

/** The six data tools, in the order docs/apis/fred.md lists them. */
export const DATA_TOOLS: readonly DataToolSpec[] = [
  fredCategory,
  fredRelease,
  fredSeries,
  fredSource,
  fredTag,
  fredMaps,
];

/** Every operation, by tool, in the order docs/apis/fred.md lists them. */
export const OPERATIONS: Readonly<Record<string, readonly OperationSpec[]>> = Object.fromEntries(
  DATA_TOOLS.map((t) => [t.name, t.operations]),
);

/**
 * `fred_release` `get_dates` without a `release_id` covers every release (`releases/dates`),
 * so all v1 endpoints are reachable through the tools' operation names.
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
