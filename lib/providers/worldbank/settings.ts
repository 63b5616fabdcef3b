// The validated `providers.worldbank` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.worldbank` block. */
export interface WorldbankSettings extends CommonSettings {
  /** Most characters of an abstract shown in search and project results (details show it whole) */
  abstract_chars: number;
  /** Terms cited in every result's attribution */
  terms_url: string;
  /** Most documents one output: "file" call writes (fetched 100 a request, within the call's deadline) */
  file_max_documents: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
