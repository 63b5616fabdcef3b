// What the places view (MCP Apps) draws from riksantikvaren-features, -nearby and -feature: each
// feature at its representative point with a popup, the bbox or circle searched, and the call
// of the next page (cursor or offset).
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { PlacesModel, ViewPlace } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";
import { formatDistance } from "./format.ts";

type Json = Record<string, unknown>;

const text = (v: unknown): string | null => typeof v === "string" && v !== "" ? v : null;

function place(f: Json): ViewPlace {
  const distance = numberOrNull(f["distance_m"]);
  const lines = [
    f["category"],
    f["dating"],
    f["protection"],
    f["municipality"] ? `Municipality ${f["municipality"]}` : null,
  ]
    .map(text)
    .filter((l): l is string => l !== null);
  if (distance !== null) lines.push(`${formatDistance(distance)} away`);
  return {
    id: text(f["id"]),
    name: text(f["name"]) ?? text(f["id"]) ?? "(no name)",
    lat: numberOrNull(f["lat"]),
    lon: numberOrNull(f["lon"]),
    lines,
    url: text(f["kulturminnesok_url"]) ?? text(f["api_url"]),
  };
}

function bboxOf(v: unknown): [number, number, number, number] | null {
  return Array.isArray(v) && v.length === 4 && v.every((n) => typeof n === "number")
    ? v as [number, number, number, number]
    : null;
}

/** The view of the three feature tools. */
export const ogcPlacesView: ToolView<Json, Json> = {
  id: "places",
  model(s, args) {
    const features = Array.isArray(s["features"])
      ? s["features"] as Json[]
      : s["feature"]
      ? [s["feature"] as Json]
      : null;
    if (!features) return undefined;
    const licence = (s["licence"] ?? {}) as Json;
    const center = s["center"] as Json | undefined;
    const radius = numberOrNull(s["radius_m"]);
    const cursor = text(s["next_cursor"]);
    const more = s["has_more"] === true;
    return {
      view: "places",
      places: features.map(place),
      bbox: bboxOf(s["bbox"]),
      circle: center && radius !== null
        ? { lat: Number(center["lat"]), lon: Number(center["lon"]), radius_m: radius }
        : null,
      total: numberOrNull(s["total"]),
      source: { name: "Riksantikvaren, api.ra.no", url: text(s["source_url"]) },
      licence: [licence["name"], licence["note"]].map(text).filter(Boolean).join(". "),
      next: !more
        ? null
        : cursor
        ? callWith(args, { cursor, offset: undefined })
        : typeof s["next_offset"] === "number"
        ? callWith(args, { offset: s["next_offset"] })
        : null,
    } satisfies PlacesModel;
  },
};
