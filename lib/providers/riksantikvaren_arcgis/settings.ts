// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The keys of the `providers.riksantikvaren_arcgis` block beyond the common ones. */
export const EXTRA = () => ({
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

/** The validated settings of this provider. */
export type RiksantikvarenArcgisSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof EXTRA>>>;
