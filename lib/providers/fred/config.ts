import { defineProvider } from "../../config/provider_spec.ts";
import { storageRoot } from "./storage_root.ts";
import type { Binding } from "../../config/provider_spec.ts";
import { checkKeyFormat } from "./key.ts";
import { z } from "zod";
import type { CommonSettings } from "../../config/provider_spec.ts";
import { FILE_FORMATS, OUTPUT_MODES } from "../../output/modes.ts";
import type { FredSettings, Same } from "./settings.ts";

/** FRED's environment variables (docs/apis/fred.md), with the keys they set. */
const ENV: readonly Binding[] = [
  {
    name: "FRED_API_KEY",
    key: "api_key",
    kind: "string",
    description: "FRED API key (32 lower-case letters and digits)",
  },
  { name: "FRED_BASE_URL", key: "base_url", kind: "string", description: "FRED API base URL" },
  {
    name: "FRED_TIMEOUT",
    key: "timeout",
    kind: "number",
    description: "Deadline of one FRED request in seconds",
  },
  {
    name: "FRED_STORAGE_DIR",
    key: "storage_dir",
    kind: "string",
    description: "Folder for project files (default: <per-user data folder>/fred)",
  },
  {
    name: "FRED_PROJECT_NAME",
    key: "project_name",
    kind: "string",
    description: "Default project for files",
  },
  {
    name: "FRED_OUTPUT_MODE",
    key: "output_mode",
    kind: "string",
    description: "Default output: auto, screen or file",
  },
  {
    name: "FRED_OUTPUT_FORMAT",
    key: "output_format",
    kind: "string",
    description: "Default file format: csv or json",
  },
  {
    name: "FRED_FILENAME_PATTERN",
    key: "filename_pattern",
    kind: "string",
    description: "Pattern of generated file names",
  },
  {
    name: "FRED_MODEL_NAME",
    key: "model_name",
    kind: "string",
    description:
      "AI model name: picks the tokenizer and, unless FRED_MODEL_TOKEN_LIMIT is set, the context size",
  },
  {
    name: "FRED_MODEL_TOKEN_LIMIT",
    key: "model_token_limit",
    kind: "int",
    description: "The model's context size in tokens (0: the model's own)",
  },
  {
    name: "FRED_SAFETY_MARGIN",
    key: "safety_margin",
    kind: "number",
    description: "Share of the safe budget one result may use (0-1)",
  },
  {
    name: "FRED_SCREEN_ROW_THRESHOLD",
    key: "screen_row_threshold",
    kind: "int",
    description: "Most rows auto mode returns inline",
  },
  {
    name: "FRED_SAFE_TOKEN_LIMIT",
    key: "safe_token_limit",
    kind: "int",
    description:
      "Token ceiling of one inline result before the safety margin; raises or lowers the budget (0: what the context leaves)",
  },
  {
    name: "FRED_ASSUME_CONTEXT_USED",
    key: "assume_context_used",
    kind: "number",
    description: "Share of the model's context assumed used already (0-1)",
  },
  {
    name: "FRED_JOB_RETENTION_HOURS",
    key: "job_retention_hours",
    kind: "number",
    description: "Hours finished jobs are kept",
  },
  {
    name: "FRED_JOB_ROW_THRESHOLD",
    key: "job_row_threshold",
    kind: "int",
    description: "Rows above which observations are fetched by a background job",
  },
  {
    name: "FRED_MAX_PROJECTS",
    key: "max_projects",
    kind: "int",
    description: "Most projects in the storage folder (all users together)",
  },
  {
    name: "FRED_MAX_STORAGE_MB",
    key: "max_storage_mb",
    kind: "number",
    description: "Most MiB stored in the storage folder; writes past it fail with STORAGE_LIMIT",
  },
  {
    name: "FRED_PAGE_SIZE",
    key: "page_size",
    kind: "int",
    description: "Observations per upstream request when streaming",
  },
  {
    name: "FRED_RATE_LIMIT_PER_MINUTE",
    key: "rate_limit_per_minute",
    kind: "int",
    description: "FRED requests per minute",
  },
  {
    name: "FRED_RATE_LIMIT_PER_SECOND",
    key: "rate_limit_per_second",
    kind: "number",
    description: "FRED requests per second",
  },
  {
    name: "FRED_RATE_LIMIT_RETRY_DELAY",
    key: "rate_limit_retry_delay",
    kind: "number",
    description: "Longest wait in seconds before retrying after HTTP 429",
  },
  {
    name: "FRED_MAX_RETRIES",
    key: "max_retries",
    kind: "int",
    description: "Retries after HTTP 429 (5xx: server_error_max_retries, at most this)",
  },
  {
    name: "FRED_CIRCUIT_BREAKER_THRESHOLD",
    key: "breaker_threshold",
    kind: "int",
    description: "Consecutive failures that pause calls to FRED",
  },
];

/** The FRED-specific config keys, each with its default. */
const FRED_EXTRA = () => ({
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
    "Folder for project files; empty means <per-user data folder>/fred, never the working directory",
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
  max_projects: z.number().int().min(1).default(160).describe(
    "Most projects in the storage folder, all users together",
  ),
  max_storage_mb: z.number().positive().default(1024).describe(
    "Most MiB stored in the storage folder (each file and folder counts at least 4 KiB)",
  ),
  resource_max_mb: z.number().positive().max(1024).default(32).describe(
    "Largest stored file served through resources/read, in MiB",
  ),
});

// settings.ts spells this block out for the provider's code; this fails to compile if the two differ.
const _checked: Same<FredSettings, CommonSettings & z.output<z.ZodObject<ReturnType<typeof FRED_EXTRA>>>> =
  true;

/** The FRED provider's spec: its variables, defaults and the API host. */
export const fredSpec = defineProvider({
  id: "fred",
  title: "FRED",
  description:
    "Federal Reserve Economic Data (St. Louis Fed): categories, releases, series, observations, sources, tags and regional maps, with file output and background jobs for large pulls",
  common: {
    base_url: "https://api.stlouisfed.org",
    timeout: 30,
    max_retries: 3,
    retry_backoff_ms: 1000,
    cache_ttl: 300,
    rate_limit_per_minute: 120,
    rate_limit_per_second: 2,
    breaker_threshold: 5,
    breaker_cooldown: 60,
    // 100,000 observations (the most one request returns) are about 10 MB of JSON.
    max_body_mb: 16,
  },
  extra: FRED_EXTRA,
  env: ENV,
  storageRoots: (s, dataDir) => [storageRoot(s as unknown as Pick<FredSettings, "storage_dir">, dataDir)],
  flags: [
    {
      name: "fred-storage-dir",
      key: "storage_dir",
      kind: "string",
      description: "Folder for FRED project files",
    },
    { name: "fred-project", key: "project_name", kind: "string", description: "Default FRED project" },
    { name: "fred-output-mode", key: "output_mode", kind: "string", description: "auto, screen or file" },
  ],
  secrets: ["api_key"],
  // The per-client limits are the server's one quota now (lib/config/quota.ts); the old names
  // are read as deprecated aliases.
  moved: [
    {
      key: "max_projects_per_client",
      env: "FRED_MAX_PROJECTS_PER_CLIENT",
      kind: "int",
      to: "quota_projects",
    },
    {
      key: "max_storage_mb_per_client",
      env: "FRED_MAX_STORAGE_MB_PER_CLIENT",
      kind: "number",
      to: "quota_mb",
    },
    { key: "max_jobs_per_client", env: "FRED_MAX_JOBS_PER_CLIENT", kind: "int", to: "quota_jobs" },
    {
      key: "max_job_records_per_client",
      env: "FRED_MAX_JOB_RECORDS_PER_CLIENT",
      kind: "int",
      to: "quota_job_records",
    },
  ],
  // FRED_API_KEY is set on most starts: any string is a key to its schema too (its format is a
  // warning of `check`, never an error).
  plain: { api_key: (v) => typeof v === "string" },
  load: () => import("./mod.ts"),
  // A doubtful key is worth a warning, never a failed start: calls explain what FRED says.
  check: (settings) => {
    const warning = checkKeyFormat(settings.api_key);
    return warning ? [warning] : [];
  },
});

export type { FredSettings } from "./settings.ts";
