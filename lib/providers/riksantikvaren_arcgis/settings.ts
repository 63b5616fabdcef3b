// The validated `providers.riksantikvaren_arcgis` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.riksantikvaren_arcgis` block. */
export interface RiksantikvarenArcgisSettings extends CommonSettings {
  /** Map service used when a tool call names none */
  default_service: string;
  /** Most features one arcgis-query call returns (it pages past the server's transfer limit up to this) */
  max_limit: number;
  /** Most upstream requests one arcgis-query call makes while paging past the transfer limit */
  max_pages: number;
  /**
   * Most features one output: "file" call of arcgis-query writes (it pages past the transfer limit
   * without max_pages, within the deadline)
   */
  file_max_features: number;
  /** Longest side of a bbox a caller may ask for, in kilometres */
  max_bbox_km: number;
  /**
   * Time kept before the call's deadline: arcgis-query starts no further page with under twice this
   * left, and answers with what it has
   */
  deadline_margin_ms: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
