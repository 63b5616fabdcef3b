import { defineProvider } from "../../config/provider_spec.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { RiksantikvarenArcgisSettings, Same } from "./settings.ts";

/** The keys of the `providers.riksantikvaren_arcgis` block beyond the common ones. */
const EXTRA = () => ({
  default_service: z.string().regex(/^[A-Za-z0-9_]{1,100}$/).default("Kulturminner20180301").describe(
    "Map service used when a tool call names none",
  ),
  max_limit: z.number().int().min(1).max(2000).default(200).describe(
    "Most features one arcgis-query call returns (it pages past the server's transfer limit up to this)",
  ),
  max_pages: z.number().int().min(1).max(50).default(10).describe(
    "Most upstream requests one arcgis-query call makes while paging past the transfer limit",
  ),
  file_max_features: z.number().int().min(10).max(100_000).default(5000).describe(
    'Most features one output: "file" call of arcgis-query writes (it pages past the transfer limit without max_pages, within the deadline)',
  ),
  max_bbox_km: z.number().positive().max(20_000).default(200).describe(
    "Longest side of a bbox a caller may ask for, in kilometres",
  ),
  deadline_margin_ms: z.number().int().min(0).max(30_000).default(1500).describe(
    "Time kept before the call's deadline: arcgis-query starts no further page with under twice this left, and answers with what it has",
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<
  RiksantikvarenArcgisSettings,
  CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>
> = true;

/**
 * Riksantikvaren's ArcGIS REST services (kart.ra.no, folder Distribusjon). The provider's design
 * set a 60 s timeout (docs/apis/riksantikvaren_arcgis.md); `timeout` bounds one upstream request,
 * and 60 s is what common MCP clients wait for a whole call, so the default is 20 s: every call
 * answers by the server's per-call deadline (45 s), and arcgis-query, which may read several pages,
 * answers with what it has and next_offset when time runs short. `GEO_API_TIMEOUT` replaces the
 * default.
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
