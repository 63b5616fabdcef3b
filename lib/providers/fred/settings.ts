// The validated `providers.fred` block, spelled out for the provider's code. A type-only module:
// config.ts (the spec, loaded at every start) imports it as a type, so nothing more loads at start,
// and checks there that its schema validates exactly this type.
import type { CommonSettings } from "../../config/provider_spec.ts";
import type { OutputMode } from "../../output/tokens.ts";
import type { FileFormat } from "../../output/row_writers.ts";

/** The validated `providers.fred` block. */
export interface FredSettings extends CommonSettings {
  /** FRED API key (secret); get one free at https://fredaccount.stlouisfed.org/apikeys */
  api_key: string;
  /** Retries after HTTP 5xx (capped by max_retries) */
  server_error_max_retries: number;
  /**
   * Longest single wait in seconds before a retry after HTTP 429; jobs wait this long before retrying a
   * page
   */
  rate_limit_retry_delay: number;
  /** Folder for project files; empty means <per-user data folder>/fred, never the working directory */
  storage_dir: string;
  /** Project used when a call names none */
  project_name: string;
  /** Default output mode: auto, screen or file */
  output_mode: OutputMode;
  /** Default file format: csv or json */
  output_format: FileFormat;
  /**
   * Generated file names; variables {series_id} {operation} {date} {time} {timestamp} {project}
   * {query_hash}
   */
  filename_pattern: string;
  /**
   * AI model name: picks the tokenizer (o200k_base for gpt-4o/4.1/5 and o-series, else cl100k_base) and
   * the context size
   */
  model_name: string;
  /** The model's context size in tokens; 0 takes the model's own (claude: 200,000) */
  model_token_limit: number;
  /** Share of the safe budget one result may use */
  safety_margin: number;
  /**
   * Token ceiling of one inline result before the safety margin; 0 derives it from the context (context
   * x (1 - assume_context_used))
   */
  safe_token_limit: number;
  /** Share of the model's context assumed already used */
  assume_context_used: number;
  /** Most rows auto mode returns inline */
  screen_row_threshold: number;
  /** Rows (observations or list items) above which auto and file output run as a background job */
  job_row_threshold: number;
  /** Observations per FRED request when streaming to a file */
  page_size: number;
  /** Hours finished jobs are kept */
  job_retention_hours: number;
  /** Times a job retries a page after a retryable failure, waiting rate_limit_retry_delay */
  job_retries: number;
  /**
   * Most rows one file may hold; a pull past it stops there and is reported incomplete, with the offset
   * to go on from
   */
  max_rows: number;
  /** Most projects in the storage folder, all users together */
  max_projects: number;
  /** Most MiB stored in the storage folder (each file and folder counts at least 4 KiB) */
  max_storage_mb: number;
  /** Largest stored file served through resources/read, in MiB */
  resource_max_mb: number;
}

/** True when A and B are the same type (config.ts checks its schema against the interface). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
