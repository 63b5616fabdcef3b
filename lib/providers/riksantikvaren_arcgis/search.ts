// The ArcGIS part of `opendata_search`, answered without a request: coordinates typed as the
// query ("59.91N 10.75E") name the identify call at that point (what is registered exactly there,
// on every layer of the default map service), and words about the map service or its layers
// (kart, layer, fredete bygninger, sefrak, ...) name the layer listing or the layer to query.
import { parseCoordinates } from "../../geo/query_coordinates.ts";
import type { SearchHit, SearchSource } from "../../mcp/provider.ts";
import { ARCGIS_LICENCE } from "./format.ts";

/** Words that name a layer of the default service (Kulturminner20180301), with its id. */
const LAYERS: readonly { pattern: RegExp; id: number; name: string }[] = [
  {
    pattern: /freda?e? bygning|fredete bygninger|listed building|protected building/,
    id: 1,
    name: "FredaBygninger",
  },
  { pattern: /sefrak/, id: 2, name: "SefrakBygninger" },
  { pattern: /sikringssone|safety zone/, id: 8, name: "Sikringssoner" },
  { pattern: /enkeltminne/, id: 6, name: "Enkeltminner" },
];

/** The search source over the map service's layers (no upstream request). */
export function arcgisSearchSource(defaultService: string): SearchSource {
  return {
    name: "Riksantikvaren map services (kart.ra.no)",
    languages: ["no"],
    licence: `${ARCGIS_LICENCE.name}. ${ARCGIS_LICENCE.note}`,
    search(query, options) {
      const hits: SearchHit[] = [];
      const point = parseCoordinates(query);
      if (point) {
        hits.push({
          title: `Heritage registered at ${point.lat}, ${point.lon} (all layers of ${defaultService})`,
          next: {
            tool: "arcgis-identify",
            arguments: { lat: point.lat, lon: point.lon, tolerance_m: 50, limit: 10 },
            for: "features at the point",
          },
        });
      }
      const q = query.toLowerCase();
      for (const layer of LAYERS) {
        if (!layer.pattern.test(q)) continue;
        hits.push({
          title: `Layer ${layer.id} ${layer.name} of ${defaultService}`,
          snippet: "Attribute and spatial queries (where, bbox, point with distance_m)",
          next: { tool: "arcgis-query", arguments: { layer: layer.id, limit: 10 }, for: "its features" },
        });
      }
      if (/\b(kart|map ?service|arcgis|layers?|kartlag)\b/.test(q)) {
        hits.push({
          title: `Layers of the map service ${defaultService}`,
          next: { tool: "arcgis-services", arguments: { service: defaultService }, for: "its layers" },
        });
      }
      return Promise.resolve(hits.slice(0, options.limit));
    },
  };
}
