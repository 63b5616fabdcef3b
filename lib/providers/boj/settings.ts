// The validated `providers.boj` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.boj` block. */
export interface BojSettings extends CommonSettings {
  /** Most BOJ requests one output: "file" call makes, following NEXTPOSITION (each up to 250 series */
  file_max_requests: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
