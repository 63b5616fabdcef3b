// What the places view (MCP Apps) draws from arcgis-query and arcgis-identify: each feature at
// its representative point with a popup, the bbox, the point and distance, or the identify
// tolerance drawn, and the call of the next page.
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { PlacesModel, ViewPlace } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";

type Json = Record<string, unknown>;

const text = (v: unknown): string | null => typeof v === "string" && v !== "" ? v : null;

function place(f: Json): ViewPlace {
  const distance = numberOrNull(f["distance_m"]);
  const lines = [f["layer_name"], f["category"], f["dating"], f["protection"]]
    .map(text)
    .filter((l): l is string => l !== null);
  if (text(f["municipality"])) lines.push(`Municipality ${f["municipality"]}`);
  if (distance !== null) lines.push(`${Math.round(distance)} m away`);
  return {
    id: text(f["object_id"]),
    name: text(f["name"]) ?? text(f["display_value"]) ?? `Object ${f["object_id"] ?? "?"}`,
    lat: numberOrNull(f["lat"]),
    lon: numberOrNull(f["lon"]),
    lines,
    url: text(f["kulturminnesok_url"]),
  };
}

function circle(point: unknown, radius: unknown): { lat: number; lon: number; radius_m: number } | null {
  const p = point as Json | undefined;
  const lat = numberOrNull(p?.["lat"]);
  const lon = numberOrNull(p?.["lon"]);
  const r = numberOrNull(radius);
  return lat !== null && lon !== null && r !== null ? { lat, lon, radius_m: r } : null;
}

/** The view of arcgis-query and arcgis-identify. */
export const arcgisPlacesView: ToolView<Json, Json> = {
  id: "places",
  model(s, args) {
    if (!Array.isArray(s["features"])) return undefined;
    const licence = (s["licence"] ?? {}) as Json;
    const bbox = args["bbox"];
    return {
      view: "places",
      places: (s["features"] as Json[]).map(place),
      bbox: Array.isArray(bbox) && bbox.length === 4 ? bbox as [number, number, number, number] : null,
      circle: circle(s["point"] ?? args["point"], s["tolerance_m"] ?? args["distance_m"]),
      total: numberOrNull(s["total"]),
      source: { name: "Riksantikvaren, kart.ra.no (ArcGIS)", url: null },
      licence: [licence["name"], licence["note"]].map(text).filter(Boolean).join(". "),
      next: s["has_more"] === true && typeof s["next_offset"] === "number"
        ? callWith(args, { offset: s["next_offset"] })
        : null,
    } satisfies PlacesModel;
  },
};
