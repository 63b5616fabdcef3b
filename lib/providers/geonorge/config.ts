import { defineProvider } from "../../config/provider_spec.ts";
import { EXTRA } from "./settings.ts";

/**
 * GeoNorge's map catalogue (kartkatalog.geonorge.no), for discovering Riksantikvaren's datasets
 * and their WMS/WFS/download distributions (seed 002, 3c). Served by default like every real
 * provider; the response parsing is defensive because the API was not checked live (see
 * docs/apis/geonorge.md). A call may make two requests (the organization fallback), so one
 * request's `timeout` is 20 s, well inside the server's per-call deadline (45 s).
 */
export const geonorgeSpec = defineProvider({
  id: "geonorge",
  title: "GeoNorge kartkatalog",
  description: "Dataset discovery in GeoNorge's map catalogue (Riksantikvaren's datasets by default)",
  common: {
    base_url: "https://kartkatalog.geonorge.no",
    timeout: 20,
    cache_ttl: 3600,
    max_retries: 2,
    // One page of catalogue search hits.
    max_body_mb: 4,
  },
  extra: EXTRA,
  load: () => import("./mod.ts"),
});

export type { GeonorgeSettings } from "./settings.ts";
