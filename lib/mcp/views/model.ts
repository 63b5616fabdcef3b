// What the interactive views (MCP Apps) draw. A provider maps its own structured result to one
// of these models (`ToolDefinition.view.model`); the core sends it to clients that render views,
// in the result's `_meta`, and its views know only these shapes, never a provider.

/** The views the server serves, as `ui://opendata-mcp/<id>.html`. */
export const VIEW_IDS = ["series", "places", "documents"] as const;

/** One of {@linkcode VIEW_IDS}. */
export type ViewId = typeof VIEW_IDS[number];

/** The arguments of another call of the same tool (earlier data, the next page). */
export type ViewCall = Record<string, unknown>;

/** One time series. */
export interface ViewSeries {
  /** The code the source knows it by (FRED series id, BOJ series code). */
  id: string;
  name: string;
  units?: string | null;
  frequency?: string | null;
  /** Observations, oldest first: ISO date and value (null: missing). */
  points: [string, number | null][];
  /** Rows of the answer left out because their date could not be read (the view says how many). */
  dropped?: number;
}

/** Series to draw as lines on one chart. */
export interface SeriesModel {
  view: "series";
  series: ViewSeries[];
  /** Who publishes the data, with a link for people. */
  source: { name: string; url?: string | null };
  /** The licence or credit line the data comes with. */
  licence: string;
  /** The arguments that load observations before the first point, when there are any. */
  earlier?: ViewCall | null;
  /** The arguments of the next page of series or observations, when there is one. */
  next?: ViewCall | null;
  /** The arguments of a call whose model names the series (title, units, frequency). */
  details?: ViewCall | null;
}

/** One feature on the map. */
export interface ViewPlace {
  id: string | null;
  name: string;
  /** WGS 84; null when the feature has no location (listed, not drawn). */
  lat: number | null;
  lon: number | null;
  /** Short lines for the popup (kind, period, municipality, distance). */
  lines: string[];
  url?: string | null;
}

/** Features on a map, and the area that was searched. */
export interface PlacesModel {
  view: "places";
  places: ViewPlace[];
  /** `[min_lon, min_lat, max_lon, max_lat]` searched. */
  bbox?: [number, number, number, number] | null;
  /** A circle searched. */
  circle?: { lat: number; lon: number; radius_m: number } | null;
  total?: number | null;
  source: { name: string; url?: string | null };
  licence: string;
  next?: ViewCall | null;
}

/** One document or article. */
export interface ViewDocument {
  title: string;
  url?: string | null;
  /** How to cite it (authors, title, publisher, year), when the source says. */
  citation?: string | null;
  date?: string | null;
  country?: string | null;
  type?: string | null;
  snippet?: string | null;
}

/** A list of documents or articles. */
export interface DocumentsModel {
  view: "documents";
  documents: ViewDocument[];
  query?: string | null;
  total?: number | null;
  source: { name: string; url?: string | null };
  licence: string;
  next?: ViewCall | null;
}

/** What a view draws. */
export type ViewModel = SeriesModel | PlacesModel | DocumentsModel;

/** The `_meta` key of a result that carries its view model (and the tool to call back). */
export const VIEW_META_KEY = "opendata-mcp/view";

/**
 * The arguments of another call: `args` with `changes` applied; a change to `undefined` drops the
 * argument (and the shared `fresh` flag is never carried over).
 */
export function callWith(args: Record<string, unknown>, changes: Record<string, unknown>): ViewCall {
  const out: ViewCall = {};
  for (const [k, v] of Object.entries({ ...args, ...changes })) {
    if (v !== undefined && k !== "fresh") out[k] = v;
  }
  return out;
}

/** A finite number, or null (missing values, strings and NaN). */
export function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
