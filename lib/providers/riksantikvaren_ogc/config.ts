import { defineProvider } from "../../config/provider_spec.ts";
import { EXTRA } from "./settings.ts";

/**
 * Riksantikvaren's OGC API Features (api.ra.no). The host serves several APIs ("datasets"),
 * each with its own collections; there is no root `/collections`. Seed 002 sets a 60 s timeout
 * ("geo queries can be slow"); `timeout` bounds one upstream request, and 60 s is what common
 * MCP clients wait for a whole call, so the default is 20 s: a tool call answers by the server's
 * per-call deadline (45 s) and a scan that needs more pages continues with a cursor.
 * `GEO_API_TIMEOUT` replaces the default.
 */
export const riksantikvarenOgcSpec = defineProvider({
  id: "riksantikvaren_ogc",
  title: "Riksantikvaren OGC API Features",
  description:
    "Norwegian cultural heritage (protected sites, monuments, user-contributed memories) from api.ra.no",
  common: {
    base_url: "https://api.ra.no",
    timeout: 20,
    cache_ttl: 900,
    max_retries: 2,
    // A page of up to 1,000 features with polygon geometry.
    max_body_mb: 16,
  },
  extra: EXTRA,
  defaultTimeoutEnv: "GEO_API_TIMEOUT",
  load: () => import("./mod.ts"),
});

export type { RiksantikvarenOgcSettings } from "./settings.ts";
