// What the views (MCP Apps) draw from Wikipedia: geosearch hits as places around the searched
// circle, search hits as a list of articles with the next page.
import { callWith, numberOrNull } from "../../mcp/views/model.ts";
import type { DocumentsModel, PlacesModel } from "../../mcp/views/model.ts";
import type { ToolView } from "../../mcp/provider.ts";

type Json = Record<string, unknown>;

const text = (v: unknown): string | null => typeof v === "string" && v !== "" ? v : null;

function source(s: Json): { source: { name: string; url: string | null }; licence: string } {
  const src = (s["source"] ?? {}) as Json;
  return {
    source: { name: text(src["name"]) ?? "Wikipedia", url: null },
    licence: text(src["attribution"]) ?? text(src["license"]) ?? "CC BY-SA 4.0",
  };
}

/** The view of wikipedia-geosearch. */
export const geosearchView: ToolView<Json, Json> = {
  id: "places",
  model(s) {
    if (!Array.isArray(s["results"])) return undefined;
    const center = (s["center"] ?? {}) as Json;
    const lat = numberOrNull(center["lat"]);
    const lon = numberOrNull(center["lon"]);
    const radius = numberOrNull(s["radius_m"]);
    return {
      view: "places",
      places: (s["results"] as Json[]).map((r) => {
        const distance = numberOrNull(r["distance_m"]);
        return {
          id: r["pageid"] === undefined ? null : String(r["pageid"]),
          name: text(r["title"]) ?? "(untitled)",
          lat: numberOrNull(r["lat"]),
          lon: numberOrNull(r["lon"]),
          lines: distance === null ? [] : [`${Math.round(distance)} m from the centre`],
          url: text(r["url"]),
        };
      }),
      circle: lat !== null && lon !== null && radius !== null ? { lat, lon, radius_m: radius } : null,
      total: numberOrNull(s["total"]),
      ...source(s),
    } satisfies PlacesModel;
  },
};

/** The view of wikipedia-search. */
export const searchView: ToolView<Json, Json> = {
  id: "documents",
  model(s, args) {
    if (!Array.isArray(s["results"])) return undefined;
    const language = text(s["language"]);
    return {
      view: "documents",
      documents: (s["results"] as Json[]).map((r) => ({
        title: text(r["title"]) ?? "(untitled)",
        url: text(r["url"]),
        citation: `"${text(r["title"]) ?? ""}", Wikipedia${language ? ` (${language})` : ""}`,
        date: text(r["timestamp"])?.slice(0, 10) ?? null,
        type: "Encyclopedia article",
        snippet: text(r["snippet"]),
      })),
      query: text(s["query"]),
      total: numberOrNull(s["total"]),
      next: s["has_more"] === true && typeof s["next_offset"] === "number"
        ? callWith(args, { offset: s["next_offset"] })
        : null,
      ...source(s),
    } satisfies DocumentsModel;
  },
};
