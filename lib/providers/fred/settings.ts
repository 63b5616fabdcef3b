// The provider's own settings keys and their validated type. config.ts (the spec, which loads
// mod.ts) and the provider's code both import them from here, so no import runs back to config.ts.
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import { OUTPUT_MODES } from "../../output/tokens.ts";
import { FILE_FORMATS } from "../../output/writers.ts";

/** The FRED-specific config keys (seed 003's variables), each with its default. */
export const FRED_EXTRA = () => ({
  api_key: z.string().default("").describe(
    "FRED API key (secret); get one free at https://fredaccount.stlouisfed.org/apikeys",
  ),
  server_error_max_retries: z.number().int().min(0).max(10).default(2).describe(
    "Retries after HTTP 5xx (capped by max_retries)",
  ),
  rate_limit_retry_delay: z.number().min(0).max(3600).default(60).describe(
    "Longest single wait in seconds before a retry after HTTP 429; jobs wait this long before retrying a page",
  ),
  storage_dir: z.string().default("").describe(
    "Folder for project files; empty means <per-user data folder>/fred (seed 003 used ./fred-data)",
  ),
  project_name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/).default("default").describe(
    "Project used when a call names none",
  ),
  output_mode: z.enum(OUTPUT_MODES).default("auto").describe("Default output mode: auto, screen or file"),
  output_format: z.enum(FILE_FORMATS).default("csv").describe("Default file format: csv or json"),
  filename_pattern: z.string().min(1).max(200).default("{series_id}_{operation}_{date}_{time}").describe(
    "Generated file names; variables {series_id} {operation} {date} {time} {timestamp} {project} {query_hash}",
  ),
  model_name: z.string().default("claude-sonnet-4").describe(
    "AI model name: picks the tokenizer (o200k_base for gpt-4o/4.1/5 and o-series, else cl100k_base) and the context size",
  ),
  model_token_limit: z.number().int().min(0).refine((n) => n === 0 || n >= 1000, {
    message: "expected 0 (the model's own) or at least 1000",
  }).default(0).describe("The model's context size in tokens; 0 takes the model's own (claude: 200,000)"),
  safety_margin: z.number().gt(0).max(1).default(0.7).describe(
    "Share of the safe budget one result may use",
  ),
  safe_token_limit: z.number().int().min(0).refine((n) => n === 0 || n >= 100, {
    message: "expected 0 (derived from the context) or at least 100",
  }).default(0).describe(
    "Token ceiling of one inline result before the safety margin; 0 derives it from the context (context x (1 - assume_context_used))",
  ),
  assume_context_used: z.number().min(0).lt(1).default(0.75).describe(
    "Share of the model's context assumed already used",
  ),
  screen_row_threshold: z.number().int().min(1).default(1000).describe(
    "Most rows auto mode returns inline",
  ),
  job_row_threshold: z.number().int().min(1).default(10_000).describe(
    "Rows (observations or list items) above which auto and file output run as a background job",
  ),
  page_size: z.number().int().min(1).max(100_000).default(10_000).describe(
    "Observations per FRED request when streaming to a file",
  ),
  job_retention_hours: z.number().gt(0).max(24 * 365).default(24).describe("Hours finished jobs are kept"),
  job_retries: z.number().int().min(0).max(10).default(2).describe(
    "Times a job retries a page after a retryable failure, waiting rate_limit_retry_delay",
  ),
  max_rows: z.number().int().min(1).default(1_000_000).describe(
    "Most rows one file may hold; a pull past it stops there and is reported incomplete, with the offset to go on from",
  ),
  max_projects: z.number().int().min(1).default(100).describe(
    "Most projects in the storage folder, all users together",
  ),
  max_projects_per_client: z.number().int().min(1).default(10).describe(
    "Most projects one HTTP client (address, IPv6 /64, or principal) holds, its sessions together",
  ),
  max_storage_mb_per_client: z.number().positive().default(100).describe(
    "Most MiB one HTTP client stores (projects and job files), its sessions together",
  ),
  max_jobs_per_client: z.number().int().min(1).default(4).describe(
    "Most background jobs one HTTP client runs at once; more are refused with JOB_LIMIT",
  ),
  max_job_records_per_client: z.number().int().min(1).default(100).describe(
    "Most job records kept for one HTTP client; past it its own oldest finished jobs are dropped",
  ),
  max_storage_mb: z.number().positive().default(1024).describe(
    "Most MiB stored in the storage folder (each file and folder counts at least 4 KiB)",
  ),
  resource_max_mb: z.number().positive().max(1024).default(32).describe(
    "Largest stored file served through resources/read, in MiB",
  ),
});

/** The FRED provider's validated settings. */
export type FredSettings = CommonSettings & z.output<z.ZodObject<ReturnType<typeof FRED_EXTRA>>>;
