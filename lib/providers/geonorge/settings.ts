// The validated `providers.geonorge` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.geonorge` block. */
export interface GeonorgeSettings extends CommonSettings {
  /** Organization whose datasets geonorge-datasets lists by default */
  organization: string;
  /** Most catalogue entries one output: "file" call of geonorge-datasets writes (read in one request) */
  file_max_entries: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
