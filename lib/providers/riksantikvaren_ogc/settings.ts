// The validated `providers.riksantikvaren_ogc` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.riksantikvaren_ogc` block. */
export interface RiksantikvarenOgcSettings extends CommonSettings {
  /** Largest limit a caller may give riksantikvaren-features (features listed per page) */
  max_limit: number;
  /**
   * Page size of the scans that filter pages themselves (bbox listings, riksantikvaren-nearby);
   * api.ra.no serves 1000
   */
  scan_page_size: number;
  /** Longest side of a bbox a caller may ask for, in kilometres */
  max_bbox_km: number;
  /** Largest radius_m of riksantikvaren-nearby, in metres */
  max_radius_m: number;
  /**
   * Most records one scanning call (riksantikvaren-features with bbox, riksantikvaren-nearby) reads
   * before it answers with a cursor to read on
   */
  max_scan: number;
  /** Most features one output: "file" call of riksantikvaren-features or riksantikvaren-nearby writes */
  file_max_features: number;
  /**
   * Time kept before the call's deadline: a scan starts no further page with under twice this left, and
   * answers with a cursor
   */
  deadline_margin_ms: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
