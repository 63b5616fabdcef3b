// What the series view (MCP Apps) draws from a fred_series result: the observations of
// get_observations as one line, or the title, units and frequency of `get` (the view asks for
// them with `details`); other operations draw nothing.
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { SeriesModel } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";

type Json = Record<string, unknown>;

/** FRED's `units` transformations, as people read them (`lin` is the series' own units). */
const TRANSFORMS: Record<string, string> = {
  chg: "Change",
  ch1: "Change from a year ago",
  pch: "Percent change",
  pc1: "Percent change from a year ago",
  pca: "Compounded annual rate of change",
  cch: "Continuously compounded rate of change",
  cca: "Continuously compounded annual rate of change",
  log: "Natural log",
};

const DAY = 86_400_000;

/** A `YYYY-MM-DD` date that names a real day. */
function isIsoDate(value: unknown): value is string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(time) && new Date(time).toISOString().slice(0, 10) === value;
}

/** The view of fred_series. */
export const fredSeriesView: ToolView<Json, Json> = {
  id: "series",
  model(s, args) {
    const items = Array.isArray(s["items"]) ? s["items"] as Json[] : null;
    const id = typeof args["series_id"] === "string" ? args["series_id"].toUpperCase() : null;
    if (!items || !id) return undefined;
    const source = (s["source"] ?? {}) as Json;
    const base = {
      view: "series" as const,
      source: {
        name: "FRED®, Federal Reserve Bank of St. Louis",
        url: typeof source["series_url"] === "string" ? source["series_url"] : null,
      },
      licence: typeof source["notice"] === "string"
        ? source["notice"]
        : "This product uses the FRED® API but is not endorsed or certified by the Federal Reserve Bank of St. Louis.",
    };
    if (s["operation"] === "get") {
      const info = items[0];
      if (!info) return undefined;
      return {
        ...base,
        series: [{
          id,
          name: String(info["title"] ?? id),
          units: typeof info["units"] === "string" ? info["units"] : null,
          frequency: typeof info["frequency"] === "string" ? info["frequency"] : null,
          points: [],
        }],
      } satisfies SeriesModel;
    }
    if (s["operation"] !== "get_observations") return undefined;
    // A date that does not parse is left out and counted (the view says how many), not drawn:
    // one such row must not cost the whole chart.
    const points: [string, number | null][] = items
      .filter((i) => isIsoDate(i["date"]))
      .map((i) => [String(i["date"]), numberOrNull(i["value"])]);
    points.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    const dropped = items.length - points.length;
    const transform = typeof args["units"] === "string" ? TRANSFORMS[args["units"]] : undefined;
    const model: SeriesModel = {
      ...base,
      series: [{
        id,
        name: id,
        units: transform ?? null,
        frequency: typeof args["frequency"] === "string" ? args["frequency"] : null,
        points,
        ...(dropped ? { dropped } : {}),
      }],
      details: callWith({}, { operation: "get", series_id: id }),
      next: s["has_more"] === true && typeof s["next_offset"] === "number"
        ? callWith(args, { offset: s["next_offset"] })
        : null,
    };
    // A window that starts after the series does: earlier is the window of the same length before it.
    const first = points[0]?.[0];
    const last = points.at(-1)?.[0];
    if (first && last && typeof args["observation_start"] === "string") {
      const start = Date.parse(first);
      const span = Math.max(Date.parse(last) - start, 365 * DAY);
      model.earlier = callWith(args, {
        observation_start: new Date(start - span).toISOString().slice(0, 10),
        observation_end: new Date(start - DAY).toISOString().slice(0, 10),
        offset: undefined,
      });
    }
    return model;
  },
};
