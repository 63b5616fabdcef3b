import { defineProvider } from "../../config/provider_spec.ts";
import { EXTRA } from "./settings.ts";

/**
 * Riksantikvaren's ArcGIS REST services (kart.ra.no, folder Distribusjon). Seed 002 sets a 60 s
 * timeout; `timeout` bounds one upstream request, and 60 s is what common MCP clients wait for a
 * whole call, so the default is 20 s: every call answers by the server's per-call deadline
 * (45 s), and arcgis-query, which may read several pages, answers with what it has and
 * next_offset when time runs short. `GEO_API_TIMEOUT` replaces the default.
 */
export const riksantikvarenArcgisSpec = defineProvider({
  id: "riksantikvaren_arcgis",
  title: "Riksantikvaren ArcGIS REST",
  description: "Riksantikvaren's map services on kart.ra.no: layers, attribute and spatial queries, identify",
  common: {
    base_url: "https://kart.ra.no/arcgis/rest/services/Distribusjon",
    timeout: 20,
    cache_ttl: 900,
    max_retries: 2,
    // A query page of up to the server's transfer limit (about 1,000 features) with geometry.
    max_body_mb: 16,
  },
  extra: EXTRA,
  defaultTimeoutEnv: "GEO_API_TIMEOUT",
  load: () => import("./mod.ts"),
});

export type { RiksantikvarenArcgisSettings } from "./settings.ts";
