// The validated `providers.wikipedia` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";

/** The validated `providers.wikipedia` block. */
export interface WikipediaSettings extends CommonSettings {
  /**
   * MediaWiki origin; {lang} stands for the language code. Without {lang} every language goes to that
   * one origin
   */
  base_url: string;
  /** Language edition used when a call names none ("no" is Norwegian Bokmål) */
  default_language: string;
  /** Seconds of database lag at which Wikipedia may ask us to back off (maxlag); 0 = not sent */
  maxlag: number;
  /** Most search results one output: "file" call writes (it reads page after page up to this) */
  file_max_results: number;
  /**
   * Time kept before the call's deadline: a file of search results starts no further page with under
   * twice this left, and says it is partial
   */
  deadline_margin_ms: number;
  /** User-Agent sent to Wikipedia (Wikimedia asks for a name and contact); empty = the server's own */
  user_agent: string;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
