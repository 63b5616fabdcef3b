import assert from "node:assert/strict";
import { z } from "zod";
import { ToolError } from "../../../lib/errors.ts";
import { ALL_RELEASE_DATES, OPERATIONS } from "../../../lib/providers/fred/operations.ts";
import {
  fredQuery,
  isCalendarDate,
  isCalendarTime,
  resolveOperation,
  toolInput,
} from "../../../lib/providers/fred/params.ts";
import type { DataArgs } from "../../../lib/providers/fred/params.ts";

function args(operation: string, rest: Record<string, unknown> = {}): DataArgs {
  return { operation, response_format: "markdown", ...rest };
}

function refused(tool: string, a: DataArgs, type: string, field: string): void {
  assert.throws(() => resolveOperation(tool, a), (e: unknown) => {
    assert.ok(e instanceof ToolError);
    assert.equal(e.errorType, type);
    assert.equal(e.field, field);
    return true;
  });
}

Deno.test("OPERATIONS cover every FRED v1 endpoint and the Maps API", () => {
  assert.deepEqual(
    Object.fromEntries(Object.entries(OPERATIONS).map(([t, ops]) => [t, ops.map((o) => o.operation)])),
    {
      fred_category: ["get", "list_children", "get_related", "get_series", "get_tags", "get_related_tags"],
      fred_release: [
        "list",
        "get",
        "get_dates",
        "get_series",
        "get_sources",
        "get_tags",
        "get_related_tags",
        "get_tables",
      ],
      fred_series: [
        "get",
        "search",
        "get_categories",
        "get_observations",
        "get_release",
        "get_tags",
        "search_tags",
        "search_related_tags",
        "get_updates",
        "get_vintage_dates",
      ],
      fred_source: ["list", "get", "get_releases"],
      fred_tag: ["list", "get_related_tags", "get_series"],
      fred_maps: ["get_shapes", "get_series_group", "get_regional_data", "get_series_data"],
    },
  );
  const endpoints = new Set([...Object.values(OPERATIONS).flat(), ALL_RELEASE_DATES].map((o) => o.endpoint));
  const v1 = [
    "category",
    "category/children",
    "category/related",
    "category/series",
    "category/tags",
    "category/related_tags",
    "releases",
    "releases/dates",
    "release",
    "release/dates",
    "release/series",
    "release/sources",
    "release/tags",
    "release/related_tags",
    "release/tables",
    "series",
    "series/categories",
    "series/observations",
    "series/release",
    "series/search",
    "series/search/tags",
    "series/search/related_tags",
    "series/tags",
    "series/updates",
    "series/vintagedates",
    "sources",
    "source",
    "source/releases",
    "tags",
    "related_tags",
    "tags/series",
  ];
  const maps = ["shapes/file", "series/group", "regional/data", "series/data"];
  assert.deepEqual(
    [...endpoints].sort(),
    [...v1.map((e) => `fred/${e}`), ...maps.map((e) => `geofred/${e}`)].sort(),
  );
});

Deno.test("toolInput() offers each tool only its operations' parameters, strictly", () => {
  const series = z.toJSONSchema(toolInput("fred_series"), { io: "input" }) as {
    properties: Record<string, { enum?: string[]; description?: string }>;
    additionalProperties: boolean;
    required: string[];
  };
  assert.equal(series.additionalProperties, false);
  assert.deepEqual(series.required, ["operation"]);
  assert.ok(series.properties["vintage_dates"]);
  assert.ok(!series.properties["category_id"], "fred_series takes no category_id");
  assert.deepEqual(series.properties["units"]!.enum, [
    "lin",
    "chg",
    "ch1",
    "pch",
    "pc1",
    "pca",
    "cch",
    "cca",
    "log",
  ]);
  for (const [name, p] of Object.entries(series.properties)) assert.ok(p.description, `${name} is described`);
  const maps = z.toJSONSchema(toolInput("fred_maps"), { io: "input" }) as {
    properties: Record<string, { type?: string; enum?: string[] }>;
  };
  assert.equal(maps.properties["units"]!.type, "string", "maps units are a free label");
  assert.equal(maps.properties["units"]!.enum, undefined);
  assert.ok(toolInput("fred_release").shape["release_id"], "release tools take release_id");
});

Deno.test("resolveOperation() sends get_dates without a release to releases/dates", () => {
  assert.equal(
    resolveOperation("fred_release", args("get_dates", { release_id: 82 })).endpoint,
    "fred/release/dates",
  );
  assert.equal(resolveOperation("fred_release", args("get_dates")).endpoint, "fred/releases/dates");
  refused(
    "fred_release",
    args("get_dates", { release_id: 82, order_by: "release_name" }),
    "VALIDATION_ERROR",
    "order_by",
  );
});

Deno.test("resolveOperation() refuses unknown operations, missing and foreign parameters, and FRED's limits", () => {
  refused("fred_tag", args("search"), "INVALID_OPERATION", "operation");
  refused("fred_series", args("get"), "MISSING_PARAMETER", "series_id");
  refused(
    "fred_series",
    args("search_related_tags", { series_search_text: "x" }),
    "MISSING_PARAMETER",
    "tag_names",
  );
  refused(
    "fred_series",
    args("search", { search_text: "x", exclude_tag_names: "a" }),
    "MISSING_PARAMETER",
    "tag_names",
  );
  refused(
    "fred_series",
    args("search", { search_text: "x", filter_value: "Monthly" }),
    "MISSING_PARAMETER",
    "filter_variable",
  );
  refused(
    "fred_series",
    args("search", { search_text: "x", filter_variable: "frequency" }),
    "MISSING_PARAMETER",
    "filter_value",
  );
  refused(
    "fred_series",
    args("get", { series_id: "X", search_text: "y" }),
    "VALIDATION_ERROR",
    "search_text",
  );
  refused(
    "fred_series",
    args("get_vintage_dates", { series_id: "X", limit: 10_001 }),
    "VALIDATION_ERROR",
    "limit",
  );
  assert.equal(
    resolveOperation("fred_series", args("get_vintage_dates", { series_id: "X", limit: 10_000 })).operation,
    "get_vintage_dates",
  );
  assert.equal(
    resolveOperation("fred_series", args("get_observations", { series_id: "X", limit: 100_000 })).operation,
    "get_observations",
  );
});

Deno.test("fredQuery() encodes lists, booleans and defaults as FRED expects, leaving paging to the caller", () => {
  const tags = resolveOperation(
    "fred_tag",
    args("get_series", { tag_names: ["usa", "gdp"], exclude_tag_names: "nsa" }),
  );
  assert.deepEqual(
    fredQuery(
      tags,
      args("get_series", { tag_names: ["usa", "gdp"], exclude_tag_names: "nsa", limit: 5, offset: 10 }),
    ),
    {
      tag_names: "usa;gdp",
      exclude_tag_names: "nsa",
    },
  );
  const obs = resolveOperation("fred_series", args("get_observations", { series_id: "X" }));
  assert.deepEqual(
    fredQuery(obs, args("get_observations", { series_id: "X", vintage_dates: ["2020-01-01", "2021-01-01"] })),
    {
      series_id: "X",
      vintage_dates: "2020-01-01,2021-01-01",
    },
  );
  assert.deepEqual(
    fredQuery(obs, args("get_observations", { series_id: "X", vintage_dates: "2020-01-01, 2021-01-01" })),
    {
      series_id: "X",
      vintage_dates: "2020-01-01,2021-01-01",
    },
  );
  const root = resolveOperation("fred_category", args("list_children"));
  assert.deepEqual(fredQuery(root, args("list_children")), { category_id: 0 });
  const tables = resolveOperation("fred_release", args("get_tables", { release_id: 53 }));
  assert.deepEqual(
    fredQuery(tables, args("get_tables", { release_id: 53, include_observation_values: true })),
    {
      release_id: 53,
      include_observation_values: "true",
    },
  );
});

Deno.test("isCalendarDate() and isCalendarTime() accept real dates only", () => {
  for (const ok of ["2020-02-29", "1776-07-04", "9999-12-31", "2021-12-31"]) {
    assert.ok(isCalendarDate(ok), ok);
  }
  for (const bad of ["2020-13-45", "2021-02-29", "2020-04-31", "2020-00-10", "2020-1-1", "20200101"]) {
    assert.ok(!isCalendarDate(bad), bad);
  }
  assert.ok(isCalendarTime("202401311259"));
  assert.ok(!isCalendarTime("202402301200"));
  assert.ok(!isCalendarTime("202401312460"));
});

Deno.test("toolInput() refuses impossible dates, naming the field", () => {
  const input = toolInput("fred_series");
  const bad = input.safeParse({
    operation: "get_observations",
    series_id: "X",
    observation_end: "2020-13-45",
  });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ["observation_end"]);
  assert.match(bad.error!.issues[0]!.message, /real calendar date/);
  const times = toolInput("fred_series").safeParse({
    operation: "get_updates",
    start_time: "202413010000",
    end_time: "202401010000",
  });
  assert.deepEqual(times.error!.issues[0]!.path, ["start_time"]);
});

Deno.test("resolveOperation() lets output file ask for more than one FRED page", () => {
  const many = args("search", { search_text: "gdp", limit: 5000 });
  assert.throws(() => resolveOperation("fred_series", many), /above FRED's maximum/);
  assert.equal(resolveOperation("fred_series", many, { multiPage: true }).operation, "search");
});

Deno.test("toolInput() serves tag lists and vintage dates as arrays of strings and still takes the old strings", () => {
  const input = toolInput("fred_series");
  const json = z.toJSONSchema(input, { io: "input" }) as {
    properties: Record<string, { type?: string; items?: { type?: string } }>;
  };
  for (const name of ["tag_names", "exclude_tag_names", "vintage_dates"]) {
    assert.equal(json.properties[name]!.type, "array", name);
    assert.equal(json.properties[name]!.items?.type, "string", name);
  }
  const tags = input.parse({
    operation: "search_related_tags",
    series_search_text: "x",
    tag_names: "usa; gdp",
  });
  assert.deepEqual(tags["tag_names"], ["usa", "gdp"], "a semicolon-separated string is split");
  const dates = input.parse({
    operation: "get_observations",
    series_id: "X",
    vintage_dates: "2020-01-01, 2021-01-01",
  });
  assert.deepEqual(dates["vintage_dates"], ["2020-01-01", "2021-01-01"], "a comma-separated string is split");
  const bad = input.safeParse({
    operation: "get_observations",
    series_id: "X",
    vintage_dates: "2020-01-01,2020-13",
  });
  assert.equal(bad.success, false);
  assert.equal(bad.error!.issues[0]!.path[0], "vintage_dates");
  assert.match(bad.error!.issues[0]!.message, /real calendar date/);
  const empty = input.safeParse({ operation: "get_tags", series_id: "X", tag_names: [] });
  assert.equal(empty.success, false, "an empty tag list is refused");
  const many = input.safeParse({
    operation: "get_observations",
    series_id: "X",
    vintage_dates: Array.from({ length: 2001 }, () => "2020-01-01"),
  });
  assert.match(many.error!.issues[0]!.message, /2,000/);
});

Deno.test("toolInput() checks ids, offsets and texts without serving their bounds", () => {
  const input = toolInput("fred_release");
  const json = z.toJSONSchema(input, { io: "input" }) as {
    properties: Record<string, Record<string, unknown>>;
  };
  assert.deepEqual(json.properties["release_id"], { type: "integer", description: "Release id, e.g. 53" });
  assert.equal(json.properties["offset"]!["maximum"], undefined);
  for (
    const [field, value] of [["release_id", 0], ["release_id", 1.5], ["offset", -1], ["limit", 0]] as const
  ) {
    const r = input.safeParse({ operation: "get_series", release_id: 53, [field]: value });
    assert.equal(r.success, false, `${field} ${value}`);
    assert.equal(r.error!.issues[0]!.path[0], field);
  }
  const blank = input.safeParse({ operation: "get_tags", release_id: 53, search_text: "  " });
  assert.equal(blank.success, false, "a blank search text is refused");
  assert.equal(toolInput("fred_series").safeParse({ operation: "get", series_id: "a b" }).success, false);
});
