// The validated `providers.snl` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.snl` block. */
export interface SnlSettings extends CommonSettings {
  /** Most search results one output: "file" call of snl-search writes (10 per request, page after page) */
  file_max_results: number;
  /**
   * Time kept before the call's deadline: a file of search results starts no further page with under
   * twice this left, and says it is partial
   */
  deadline_margin_ms: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
